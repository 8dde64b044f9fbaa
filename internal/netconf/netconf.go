// Package netconf owns changing a network device's settings for a run —
// offload features and MTU — and putting them back. A Session reads the
// device's state when it opens, records every change it makes (for the
// results document), and restores the original state on every exit path:
//
//	s, err := netconf.Open(netconf.Options{Dev: "eth0"})
//	if err != nil { ... }
//	defer s.Restore()             // normal return and error return
//	if err := s.Set(netconf.Feature("tso", false), netconf.MTU(9000)); err != nil { ... }
//
// A device is known by its namespace and interface index, whatever name
// (an alternative name included) it was opened by, and only one Session
// of a process has it at a time: Open returns ErrHeld for the second.
//
// Restore is idempotent: whichever path runs first restores, the others
// return what it returned. With Options.Keep the normal Restore leaves the
// last setting in place on purpose; RestoreNow restores anyway, for a run
// cut short by a panic or a signal, which did not choose its last setting
// (the matrix calls it from its own panic and cancellation paths).
//
// Devices are changed through package netdev (ethtool) and netlink, never
// by running the ethtool or ip programs.
package netconf

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/vishvananda/netns"

	"wirespeed/internal/netdev"
)

// Errors callers can test for with errors.Is. A feature the driver does
// not let change gives an error wrapping netdev.ErrFixed.
var (
	// ErrUnsupported is returned where the platform cannot change devices.
	// It wraps errors.ErrUnsupported.
	ErrUnsupported = fmt.Errorf("%w: changing network devices needs Linux", errors.ErrUnsupported)
	// ErrEnded is returned by Set after the session was restored.
	ErrEnded = errors.New("the session has ended: its settings were restored; open a new one")
	// ErrNotApplied is returned when the kernel kept a feature unlike what
	// was asked, usually because a feature it depends on is off.
	ErrNotApplied = errors.New("the kernel did not apply the setting")
)

// Options name the device a Session changes.
type Options struct {
	Dev string
	// Netns is the network namespace Dev is in; 0 (the zero value) or
	// netns.None() mean the namespace of the calling thread. The session
	// opens its sockets inside it during Open, so the handle may be closed
	// once Open returns.
	Netns netns.NsHandle
	// NetnsName labels Netns in the recorded changes ("wst-lab-a").
	NetnsName string
	// Keep makes Restore leave the last settings in place.
	Keep bool
	// Log receives a line for each restore; nil means slog.Default().
	Log *slog.Logger
}

// Setting is one change to make: an offload feature on or off, or the MTU.
type Setting struct {
	// Name is "mtu", one of ethtool's feature names ("tso",
	// "tcp-segmentation-offload", "tx", "tx-checksumming", "sg", "gso",
	// "gro", "lro", ...) or a kernel feature name ("tx-tcp-segmentation").
	Name string
	On   bool // for a feature
	MTU  int  // for "mtu", in bytes
}

// Feature is the setting that turns a feature on or off.
func Feature(name string, on bool) Setting { return Setting{Name: name, On: on} }

// MTU is the setting that changes the MTU.
func MTU(bytes int) Setting { return Setting{Name: "mtu", MTU: bytes} }

// String writes the setting as ParseSettings reads it: "tso=off", "mtu=9000".
func (st Setting) String() string {
	if st.isMTU() {
		return "mtu=" + strconv.Itoa(st.MTU)
	}
	return st.Name + "=" + onOff(st.On)
}

func (st Setting) isMTU() bool { return strings.EqualFold(st.Name, "mtu") }

// ParseSettings parses "tso=off,gso=off,mtu=9000": comma-separated
// NAME=VALUE pairs, where a feature's value is on or off and the MTU's a
// number of bytes. Feature names are checked against the device by Set.
func ParseSettings(s string) ([]Setting, error) {
	var out []Setting
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		st, err := ParseSetting(part)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// ParseSetting parses one NAME=VALUE pair.
func ParseSetting(s string) (Setting, error) {
	name, val, ok := strings.Cut(strings.TrimSpace(s), "=")
	name, val = strings.ToLower(strings.TrimSpace(name)), strings.ToLower(strings.TrimSpace(val))
	if !ok || name == "" || val == "" {
		return Setting{}, fmt.Errorf("setting %q: write NAME=VALUE, like tso=off or mtu=9000", s)
	}
	if name == "mtu" {
		n, err := strconv.Atoi(val)
		if err != nil || n < 68 || n > 1<<20 {
			return Setting{}, fmt.Errorf("setting %q: the MTU must be a number of bytes from 68 (IPv4's minimum) up", s)
		}
		return MTU(n), nil
	}
	switch val {
	case "on", "true", "1":
		return Feature(name, true), nil
	case "off", "false", "0":
		return Feature(name, false), nil
	}
	return Setting{}, fmt.Errorf("setting %q: a feature is on or off", s)
}

// device is what a Session needs from the kernel; netconf_linux.go
// implements it with netdev and netlink, tests with a fake.
type device interface {
	features() (netdev.Features, error)
	setFeatures(want map[string]bool) error
	mtu() (int, error)
	setMTU(bytes int) error
	// id is the device's identity: its namespace and interface index.
	id() string
	// addrs lists the device's addresses, addAddr puts one back.
	addrs() ([]addr, error)
	addAddr(addr) error
	close()
}

// Session changes one device and restores it. Its methods may be called
// from any goroutine; changes and restores are serialised.
type Session struct {
	opts Options
	log  *slog.Logger

	mu           sync.Mutex
	dev          device
	origFeatures netdev.Features // nil when the device reports none
	featuresErr  error           // why origFeatures is nil
	origMTU      int
	origAddrs    []addr          // the device's addresses when the session opened
	id           string          // the device's identity, held in package-level held
	touched      map[string]bool // kernel features Set asked for
	mtuChanged   bool
	changes      []SettingChange
	ended        bool
	endErr       error // what the restore returned
}

// Open reads the current state of opts.Dev and returns a Session ready to
// change it. Nothing is changed yet.
func Open(opts Options) (*Session, error) {
	dev, err := openDevice(opts)
	if err != nil {
		return nil, err
	}
	return newSession(opts, dev)
}

func newSession(opts Options, dev device) (*Session, error) {
	s := &Session{opts: opts, log: opts.Log, dev: dev, touched: map[string]bool{}, id: dev.id()}
	if s.log == nil {
		s.log = slog.Default()
	}
	if err := hold(s.id, opts.Dev); err != nil {
		dev.close()
		return nil, err
	}
	mtu, err := dev.mtu()
	if err != nil {
		unhold(s.id)
		dev.close()
		return nil, fmt.Errorf("read mtu of %s: %w", opts.Dev, err)
	}
	addrs, err := dev.addrs()
	if err != nil {
		unhold(s.id)
		dev.close()
		return nil, fmt.Errorf("read addresses of %s: %w", opts.Dev, err)
	}
	s.origMTU, s.origAddrs = mtu, addrs
	s.origFeatures, s.featuresErr = dev.features()
	return s, nil
}

// Set applies the settings in order, stopping at the first that fails.
// Each one applied is recorded, with the state before and after, even when
// the kernel then reports it did not take effect; whatever was changed is
// restored by Restore.
func (s *Session) Set(settings ...Setting) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return ErrEnded
	}
	for _, st := range settings {
		var err error
		if st.isMTU() {
			err = s.setMTU(st.MTU)
		} else {
			err = s.setFeature(st)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *Session) setMTU(n int) error {
	if n <= 0 {
		return fmt.Errorf("set mtu %d on %s: the MTU must be positive", n, s.opts.Dev)
	}
	before, err := s.dev.mtu()
	if err != nil {
		return fmt.Errorf("read mtu of %s: %w", s.opts.Dev, err)
	}
	s.mtuChanged = true
	if n < minIPv6MTU && hasIPv6(s.origAddrs) {
		s.log.Warn("an MTU below 1280 turns IPv6 off: the kernel removes the device's IPv6 addresses until the session restores them",
			"dev", s.opts.Dev, "mtu", n)
	}
	err = s.dev.setMTU(n)
	after, rerr := s.dev.mtu()
	if rerr != nil {
		after = n
	}
	s.changes = append(s.changes, s.change("mtu", strconv.Itoa(before), strconv.Itoa(after)))
	if err != nil {
		return fmt.Errorf("set mtu %d on %s: %w; the driver limits the MTU, see its documentation for the largest", n, s.opts.Dev, err)
	}
	if rerr != nil {
		return fmt.Errorf("read mtu of %s after setting it: %w", s.opts.Dev, rerr)
	}
	if after != n {
		return fmt.Errorf("set mtu %d on %s: it is %d: %w", n, s.opts.Dev, after, ErrNotApplied)
	}
	return nil
}

func (s *Session) setFeature(st Setting) error {
	if s.origFeatures == nil {
		return fmt.Errorf("set %s on %s: cannot read its features: %w", st, s.opts.Dev, s.featuresErr)
	}
	before, err := s.dev.features()
	if err != nil {
		return fmt.Errorf("set %s on %s: %w", st, s.opts.Dev, err)
	}
	canon, members, err := before.Resolve(st.Name)
	if err != nil {
		return fmt.Errorf("set %s on %s: %w", st, s.opts.Dev, err)
	}
	want := map[string]bool{}
	for _, m := range members {
		if m.Changeable {
			want[m.Name] = st.On
		}
	}
	if len(want) == 0 {
		now := members.GroupSummary(canon).On
		return fmt.Errorf("set %s on %s: %s is %w and stays %s; leave it out of the settings",
			st, s.opts.Dev, canon, netdev.ErrFixed, onOff(now))
	}
	for n := range want {
		s.touched[n] = true
	}
	err = s.dev.setFeatures(want)
	after, rerr := s.dev.features()
	c := s.change(st.Name, onOff(members.GroupSummary(canon).On), onOff(st.On))
	if rerr == nil {
		if _, am, err := after.Resolve(st.Name); err == nil {
			c.After = onOff(am.GroupSummary(canon).On)
		}
		c.Features = diffFeatures(before, after)
		for i := range c.Features {
			_, asked := want[c.Features[i].Name]
			c.Features[i].Consequence = !asked
		}
	}
	s.changes = append(s.changes, c)
	if err != nil {
		return fmt.Errorf("set %s on %s: %w", st, s.opts.Dev, err)
	}
	if rerr != nil {
		return fmt.Errorf("read features of %s after setting %s: %w", s.opts.Dev, st, rerr)
	}
	var stuck []string
	for n, on := range want {
		if f, _ := after.Get(n); f.Active != on {
			stuck = append(stuck, n)
		}
	}
	if len(stuck) > 0 {
		sort.Strings(stuck)
		return fmt.Errorf("set %s on %s: the kernel keeps %s %s, usually because a feature it depends on is %s (TSO needs scatter-gather and tx checksumming): %w",
			st, s.opts.Dev, strings.Join(stuck, ", "), onOff(!st.On), onOff(!st.On), ErrNotApplied)
	}
	return nil
}

func (s *Session) change(setting, before, after string) SettingChange {
	return SettingChange{Device: s.opts.Dev, Namespace: s.opts.NetnsName, Setting: setting, Before: before, After: after}
}

// diffFeatures lists the features whose active state differs.
func diffFeatures(before, after netdev.Features) []FeatureChange {
	var out []FeatureChange
	for _, a := range after {
		if b, ok := before.Get(a.Name); ok && b.Active != a.Active {
			out = append(out, FeatureChange{Name: a.Name, Before: b.Active, After: a.Active})
		}
	}
	return out
}

// Changes returns what Set changed so far, in order, for the results
// document.
func (s *Session) Changes() []SettingChange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SettingChange(nil), s.changes...)
}

// Restore puts back every setting Set changed and ends the session, unless
// Options.Keep asks to leave them. After an MTU change it also puts back
// the addresses the kernel removed (an MTU below 1280 removes every IPv6
// address). It checks afterwards that the features, MTU and addresses are
// as they were when the session opened, and says which are not. Only the
// first call does anything; later ones return its result.
func (s *Session) Restore() error { return s.end(s.opts.Keep) }

// end ends the session: restores unless keep. The first call decides.
func (s *Session) end(keep bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return s.endErr
	}
	s.ended = true
	defer unhold(s.id)
	defer s.dev.close()
	if keep {
		if len(s.changes) > 0 {
			s.log.Debug("keeping settings", "dev", s.opts.Dev, "changes", len(s.changes))
		}
		return nil
	}
	s.endErr = s.restore()
	return s.endErr
}

func (s *Session) restore() error {
	var errs []error
	if len(s.touched) > 0 {
		want := map[string]bool{}
		for n := range s.touched {
			if f, ok := s.origFeatures.Get(n); ok {
				want[n] = f.Requested
			}
		}
		if err := s.dev.setFeatures(want); err != nil {
			errs = append(errs, fmt.Errorf("restore features of %s: %w", s.opts.Dev, err))
		} else if now, err := s.dev.features(); err != nil {
			errs = append(errs, fmt.Errorf("read features of %s after restoring: %w", s.opts.Dev, err))
		} else if d := diffFeatures(s.origFeatures, now); len(d) > 0 {
			var names []string
			for _, f := range d {
				names = append(names, fmt.Sprintf("%s is %s (was %s)", f.Name, onOff(f.After), onOff(f.Before)))
			}
			errs = append(errs, fmt.Errorf("restore features of %s: %s", s.opts.Dev, strings.Join(names, ", ")))
		}
	}
	if s.mtuChanged {
		if err := s.dev.setMTU(s.origMTU); err != nil {
			errs = append(errs, fmt.Errorf("restore mtu %d on %s: %w", s.origMTU, s.opts.Dev, err))
		} else if now, err := s.dev.mtu(); err != nil {
			errs = append(errs, fmt.Errorf("read mtu of %s after restoring: %w", s.opts.Dev, err))
		} else if now != s.origMTU {
			errs = append(errs, fmt.Errorf("restore mtu of %s: it is %d, was %d", s.opts.Dev, now, s.origMTU))
		}
		// An MTU below IPv6's minimum made the kernel remove every IPv6
		// address of the device; back above it, the kernel makes the
		// automatic ones (link-local, ::1) again but not the others.
		if err := s.restoreAddrs(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w; the settings above are not as they were before the run", err)
	}
	if len(s.changes) > 0 {
		s.log.Info("restored settings", "dev", s.opts.Dev, "changes", len(s.changes))
	}
	return nil
}

// minIPv6MTU is IPv6's minimum link MTU (RFC 8200).
const minIPv6MTU = 1280

// restoreAddrs puts back the addresses the device had when the session
// opened and has no longer, then checks that none is missing.
func (s *Session) restoreAddrs() error {
	now, err := s.dev.addrs()
	if err != nil {
		return fmt.Errorf("read addresses of %s after restoring: %w", s.opts.Dev, err)
	}
	gone := missing(s.origAddrs, now)
	var errs []error
	for _, a := range gone {
		if err := s.dev.addAddr(a); err != nil {
			errs = append(errs, fmt.Errorf("restore address %s on %s: %w", a.prefix, s.opts.Dev, err))
		}
	}
	if len(gone) > 0 {
		s.log.Info("restored addresses the kernel removed", "dev", s.opts.Dev, "addresses", prefixes(gone))
	}
	if now, err = s.dev.addrs(); err != nil {
		errs = append(errs, fmt.Errorf("read addresses of %s after restoring: %w", s.opts.Dev, err))
	} else if still := missing(s.origAddrs, now); len(still) > 0 {
		errs = append(errs, fmt.Errorf("restore addresses of %s: %s missing", s.opts.Dev, prefixes(still)))
	}
	return errors.Join(errs...)
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
