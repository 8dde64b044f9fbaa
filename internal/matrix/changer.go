package matrix

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/vishvananda/netns"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/netconf"
	"wirespeed/internal/result"
)

// Changer changes one side's device for a matrix.
type Changer interface {
	Side() result.Side
	Device() result.MatrixDevice
	// Check says whether every setting could be made, changing nothing.
	Check(ctx context.Context, settings []netconf.Setting) error
	// Set makes the settings and checks they hold; it returns what it
	// changed even when it fails. An error skips the row, unless it is
	// an *EndError, which ends the matrix.
	Set(ctx context.Context, settings []netconf.Setting) ([]netconf.SettingChange, error)
	// Finish restores the device, or leaves it (keep). Only the first
	// call of Finish and Abandon does anything.
	Finish(ctx context.Context, keep bool) error
	// Abandon restores at once, even with keep; any goroutine may call it.
	Abandon()
}

// EndError is a Changer's error that ends the matrix instead of skipping
// a row: the device can no longer be reached (a lost control connection).
type EndError struct{ Err error }

func (e *EndError) Error() string { return e.Err.Error() }
func (e *EndError) Unwrap() error { return e.Err }

// Local changes a device of this host, in this process's network
// namespace or a named one, through a netconf.Session.
type Local struct {
	side result.Side
	dev  result.MatrixDevice
	ns   *netconf.Session
}

// OpenLocal opens dev for side: in the network namespace netnsName of
// this host when it is not empty (a lab's side a). With keep, Finish
// leaves the last settings unless told otherwise.
func OpenLocal(side result.Side, dev, netnsName string, keep bool, log *slog.Logger) (*Local, error) {
	opts := netconf.Options{Dev: dev, Keep: keep, Log: log}
	md := result.MatrixDevice{Dev: dev, Via: "local"}
	if netnsName != "" {
		h, err := netns.GetFromName(netnsName)
		if err != nil {
			return nil, fmt.Errorf("network namespace %s: %w", netnsName, err)
		}
		defer h.Close() // netconf opens its sockets inside during Open
		opts.Netns, opts.NetnsName = h, netnsName
		md.Netns, md.Via = netnsName, "netns"
	}
	ns, err := netconf.Open(opts)
	if err != nil {
		return nil, err
	}
	return &Local{side: side, dev: md, ns: ns}, nil
}

func (l *Local) Side() result.Side           { return l.side }
func (l *Local) Device() result.MatrixDevice { return l.dev }

func (l *Local) Check(_ context.Context, settings []netconf.Setting) error {
	return l.ns.Check(settings...)
}

func (l *Local) Set(_ context.Context, settings []netconf.Setting) ([]netconf.SettingChange, error) {
	before := len(l.ns.Changes())
	err := l.ns.Set(settings...)
	if err == nil {
		err = l.ns.Verify(settings...)
	}
	return l.ns.Changes()[before:], err
}

func (l *Local) Finish(_ context.Context, keep bool) error {
	if keep {
		return l.ns.Restore() // opened with Keep: leaves the settings
	}
	return l.ns.RestoreNow()
}

func (l *Local) Abandon() { l.ns.RestoreNow() }

// Remote asks the server to change its device over the control
// connection. The server restores it when the session ends, whatever
// happens to this client, so Abandon has nothing to do.
type Remote struct {
	c   *client.Client
	dev string
	set bool // a set was asked: there may be something to restore
}

// NewRemote changes the server's device dev through c.
func NewRemote(c *client.Client, dev string) *Remote { return &Remote{c: c, dev: dev} }

func (r *Remote) Side() result.Side { return result.Remote }
func (r *Remote) Device() result.MatrixDevice {
	return result.MatrixDevice{Dev: r.dev, Via: "server"}
}

func (r *Remote) Check(ctx context.Context, settings []netconf.Setting) error {
	_, err := r.c.Netconf(ctx, control.NetconfCheck, r.dev, settingStrings(settings))
	return err
}

// Set asks the server; its refusal or failure skips the row, a lost
// control connection ends the matrix.
func (r *Remote) Set(ctx context.Context, settings []netconf.Setting) ([]netconf.SettingChange, error) {
	r.set = true
	reply, err := r.c.Netconf(ctx, control.NetconfSet, r.dev, settingStrings(settings))
	var re *control.RemoteError
	if err != nil && !errors.As(err, &re) {
		return reply.Changes, &EndError{err}
	}
	return reply.Changes, err
}

// Finish asks the server to restore (or keep) what Set changed; nothing
// when Set was never asked, so that a server that refused everything is
// not asked to restore what it never changed.
func (r *Remote) Finish(ctx context.Context, keep bool) error {
	if !r.set {
		return nil
	}
	action := control.NetconfRestore
	if keep {
		action = control.NetconfKeep
	}
	// After an interrupt too: the restore is what the interrupt wants.
	_, err := r.c.Netconf(context.WithoutCancel(ctx), action, r.dev, nil)
	return err
}

func (r *Remote) Abandon() {}

func settingStrings(ss []netconf.Setting) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.String()
	}
	return out
}
