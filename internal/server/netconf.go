package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/vishvananda/netns"

	"wirespeed/internal/control"
	"wirespeed/internal/netconf"
)

// Remote device changes (wirespeed matrix --remote-dev). A client may
// change the offload features and MTU of the server's devices only when
// the server was started with --allow-netconf (Config.AllowNetconf) and
// its session is authenticated. Whatever a session changes, the server
// restores when the session ends: bye, a lost connection, the idle
// timeout, or the server stopping (SIGINT, SIGTERM). A client's keep
// request is the only way a change outlives its session.

// maxNetconfSettings bounds the settings of one request.
const maxNetconfSettings = 32

// netconfState is the server's side of device changes: which session
// holds which device, so that two clients never change one device at
// once.
type netconfState struct {
	mu   sync.Mutex
	held map[string]*hostSession // device name -> the session changing it

	// authenticateAll marks every session authenticated, and netns is the
	// network namespace whose devices sessions change (0: the process's).
	// Tests set them, to skip the key exchange and to reach a lab's
	// namespace from a server running in the test process.
	authenticateAll bool
	netns           netns.NsHandle
}

// heldDev is a device a session changed: its netconf session knows the
// state to restore.
type heldDev struct {
	ns *netconf.Session
}

// netconf serves one request. It returns the error code with the error.
func (hs *hostSession) netconf(ctx context.Context, req control.NetconfRequest) (control.NetconfReply, string, error) {
	reply := control.NetconfReply{Action: req.Action, Dev: req.Dev}
	if err := hs.mayChange(); err != nil {
		hs.log.Warn("netconf refused", "dev", req.Dev, "action", req.Action, "err", err)
		return reply, control.CodeForbidden, err
	}
	settings, code, err := parseNetconfRequest(req)
	if err != nil {
		return reply, code, err
	}

	switch req.Action {
	case control.NetconfCheck, control.NetconfSet:
		d, err := hs.hold(req.Dev)
		if err != nil {
			return reply, control.CodeNetconf, err
		}
		if req.Action == control.NetconfCheck {
			if err := d.ns.Check(settings...); err != nil {
				return reply, control.CodeNetconf, err
			}
			break
		}
		before := len(d.ns.Changes())
		err = d.ns.Set(settings...)
		if err == nil {
			err = d.ns.Verify(settings...)
		}
		reply.Changes = d.ns.Changes()[before:]
		hs.forget()
		hs.log.Info("netconf set", "dev", req.Dev, "settings", strings.Join(req.Settings, ","), "changes", len(reply.Changes), "err", err)
		if err != nil {
			return reply, control.CodeNetconf, err
		}
	case control.NetconfRestore, control.NetconfKeep:
		d := hs.devs[req.Dev]
		if d == nil {
			break // nothing changed: nothing to restore or keep
		}
		var err error
		if req.Action == control.NetconfRestore {
			err = d.ns.RestoreNow()
		} else {
			err = d.ns.Restore() // opened with Keep: leaves the settings
			hs.log.Warn("netconf: keeping the client's settings after the session", "dev", req.Dev, "changes", len(d.ns.Changes()))
		}
		hs.release(req.Dev)
		hs.forget()
		if err != nil {
			return reply, control.CodeNetconf, err
		}
	}
	reply.Env = hs.record(ctx)
	return reply, "", nil
}

// parseNetconfRequest checks what a remote session asks before anything
// is opened: the device is an interface name, the settings are few and
// well formed, the action is one of the four. It returns the error code
// with the error.
func parseNetconfRequest(req control.NetconfRequest) ([]netconf.Setting, string, error) {
	if req.Dev == "" || len(req.Dev) > 64 || strings.ContainsAny(req.Dev, "/ \x00") {
		return nil, control.CodeNetconf, fmt.Errorf("netconf: device %q is not an interface name", req.Dev)
	}
	if len(req.Settings) > maxNetconfSettings {
		return nil, control.CodeNetconf, fmt.Errorf("netconf: %d settings in one request, at most %d", len(req.Settings), maxNetconfSettings)
	}
	settings := make([]netconf.Setting, 0, len(req.Settings))
	for _, p := range req.Settings {
		st, err := netconf.ParseSetting(p)
		if err != nil {
			return nil, control.CodeNetconf, fmt.Errorf("netconf: %w", err)
		}
		settings = append(settings, st)
	}
	switch req.Action {
	case control.NetconfCheck, control.NetconfSet, control.NetconfRestore, control.NetconfKeep:
		return settings, "", nil
	}
	return nil, control.CodeProtocol, fmt.Errorf("%w: netconf action %q: use check, set, restore or keep", control.ErrProtocol, req.Action)
}

// errNetconfForbidden is the refusal of a session that may not change
// devices; its message names both requirements.
var errNetconfForbidden = errors.New("changing the server's devices needs both: the server started with --allow-netconf, and an authenticated session (serve --psk-file, and the client proving the same key with --psk-file)")

// mayChange says whether the session may change devices, and if not,
// which requirement is missing.
func (hs *hostSession) mayChange() error {
	allowed := hs.srv.cfg.AllowNetconf
	switch {
	case !allowed && !hs.authenticated:
		return fmt.Errorf("%w; this server has neither", errNetconfForbidden)
	case !allowed:
		return fmt.Errorf("%w; this server was started without --allow-netconf", errNetconfForbidden)
	case !hs.authenticated:
		return fmt.Errorf("%w; this session is not authenticated (the server has no --psk-file)", errNetconfForbidden)
	}
	return nil
}

// hold returns the session's netconf session for dev, opening it (and
// taking the device from other sessions' reach) at the first request.
func (hs *hostSession) hold(dev string) (*heldDev, error) {
	if d := hs.devs[dev]; d != nil {
		return d, nil
	}
	nc := &hs.srv.nc
	nc.mu.Lock()
	if nc.held == nil {
		nc.held = map[string]*hostSession{}
	}
	if other := nc.held[dev]; other != nil && other != hs {
		nc.mu.Unlock()
		return nil, fmt.Errorf("netconf: %s is being changed by another client (%s); try again when its session ends", dev, other.peer)
	}
	nc.held[dev] = hs
	nc.mu.Unlock()
	ns, err := netconf.Open(netconf.Options{Dev: dev, Netns: nc.netns, Keep: true, Log: hs.log.With("peer", hs.peer.String())})
	if err != nil {
		hs.releaseHold(dev)
		return nil, fmt.Errorf("netconf: %w", err)
	}
	d := &heldDev{ns: ns}
	hs.devs[dev] = d
	return d, nil
}

// release forgets dev after its netconf session ended.
func (hs *hostSession) release(dev string) {
	delete(hs.devs, dev)
	hs.releaseHold(dev)
}

func (hs *hostSession) releaseHold(dev string) {
	nc := &hs.srv.nc
	nc.mu.Lock()
	if nc.held[dev] == hs {
		delete(nc.held, dev)
	}
	nc.mu.Unlock()
}

// end restores every device the session changed and did not keep. It
// runs when the session ends, however it ends.
func (hs *hostSession) end() {
	for dev, d := range hs.devs {
		if err := d.ns.RestoreNow(); err != nil {
			hs.log.Error("netconf: restore at the end of the session", "dev", dev, "err", err)
		} else if len(d.ns.Changes()) > 0 {
			hs.log.Info("netconf: restored at the end of the session", "dev", dev, "changes", len(d.ns.Changes()))
		}
		hs.release(dev)
	}
}
