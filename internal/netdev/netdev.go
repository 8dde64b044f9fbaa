// Package netdev owns the kernel's interfaces to one network device's
// settings: its driver, its link mode (speed, duplex) and its offload
// features, read and changed through ethtool, in the current network
// namespace or a given one. It knows the kernel's feature names and the
// classic groups the ethtool program shows (tx-checksumming, tso, ...).
//
// sysinfo reads devices through it; netconf changes them through it. It
// keeps no state about what was changed: restoring is netconf's job.
package netdev

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/vishvananda/netns"
)

// Errors callers can test for with errors.Is.
var (
	// ErrUnsupported is returned where the platform, or the device's
	// driver, does not offer an operation (the kernel's EOPNOTSUPP). It
	// wraps errors.ErrUnsupported, and so do the driver's refusals.
	ErrUnsupported = fmt.Errorf("%w on this platform", errors.ErrUnsupported)
	// ErrFixed is returned when asked to change a feature the driver does
	// not let change.
	ErrFixed = errors.New("fixed by the driver")
	// ErrUnknownFeature is returned for a name that is neither a kernel
	// feature of the device nor one of ethtool's groups.
	ErrUnknownFeature = errors.New("unknown feature")
)

// Client talks to the kernel about devices of one network namespace. It
// holds sockets opened in that namespace, so its methods may be called
// from any goroutine; it is safe for one goroutine at a time.
type Client struct {
	c client
}

// Open returns a Client for devices in the network namespace ns. A ns that
// is not open (netns.None(), or 0, the zero value) means the namespace of
// the calling thread.
func Open(ns netns.NsHandle) (*Client, error) {
	c, err := open(ns)
	if err != nil {
		return nil, err
	}
	return &Client{c: c}, nil
}

// Close releases the Client's sockets.
func (c *Client) Close() error { return c.c.close() }

// DriverInfo is what a driver says about itself (ethtool -i).
type DriverInfo struct {
	Driver   string
	Version  string
	Firmware string
	BusInfo  string
}

// DriverInfo returns the driver of dev.
func (c *Client) DriverInfo(dev string) (DriverInfo, error) { return c.c.driverInfo(dev) }

// LinkMode is a device's link speed and duplex.
type LinkMode struct {
	SpeedMbps int    // 0 when unknown
	Duplex    string // "full", "half", or "" when unknown
}

// LinkMode returns the speed and duplex of dev, as far as its driver knows.
func (c *Client) LinkMode(dev string) (LinkMode, error) { return c.c.linkMode(dev) }

// Feature is the state of one kernel feature of a device, as
// ETHTOOL_GFEATURES reports it.
type Feature struct {
	Name       string
	Changeable bool // the driver lets it change (in hw_features)
	Requested  bool // last asked for (wanted_features); Active for one that cannot change
	Active     bool // in effect (features)
}

// Features is every feature a device reports, in kernel order.
type Features []Feature

// Features reads the features of dev.
func (c *Client) Features(dev string) (Features, error) { return c.c.features(dev) }

// SetFeatures asks the kernel to turn the named kernel features of dev on
// or off (ETHTOOL_SFEATURES). Every name must be a changeable kernel
// feature: resolve ethtool's group names with Features.Resolve first. The
// kernel may keep a feature off when one it depends on is off; read the
// features again to see what is in effect.
func (c *Client) SetFeatures(dev string, want map[string]bool) error {
	return c.c.setFeatures(dev, want)
}

// Get returns the feature of that kernel name.
func (fs Features) Get(name string) (Feature, bool) {
	for _, f := range fs {
		if f.Name == name {
			return f, true
		}
	}
	return Feature{}, false
}

// Group is one of the classic offload settings the ethtool program shows
// and accepts (ethtool -k / -K), standing for the kernel features whose
// names match Pattern (path.Match syntax).
type Group struct {
	Short, Long, Pattern string
}

// Groups are ethtool's classic groups, in the order it shows them (the
// off_flag_def table of ethtool.c).
var Groups = []Group{
	{"rx", "rx-checksumming", "rx-checksum"},
	{"tx", "tx-checksumming", "tx-checksum-*"},
	{"sg", "scatter-gather", "tx-scatter-gather*"},
	{"tso", "tcp-segmentation-offload", "tx-tcp*-segmentation"},
	{"ufo", "udp-fragmentation-offload", "tx-udp-fragmentation"},
	{"gso", "generic-segmentation-offload", "tx-generic-segmentation"},
	{"gro", "generic-receive-offload", "rx-gro"},
	{"lro", "large-receive-offload", "rx-lro"},
	{"rxvlan", "rx-vlan-offload", "rx-vlan-hw-parse"},
	{"txvlan", "tx-vlan-offload", "tx-vlan-hw-insert"},
	{"ntuple", "ntuple-filters", "rx-ntuple-filter"},
	{"rxhash", "receive-hashing", "rx-hashing"},
}

// Members returns the features of fs that belong to g.
func (g Group) Members(fs Features) Features {
	var out Features
	for _, f := range fs {
		if ok, _ := path.Match(g.Pattern, f.Name); ok {
			out = append(out, f)
		}
	}
	return out
}

// Resolve finds what a name given by a person stands for: one of ethtool's
// groups by its long name or its short alias ("tcp-segmentation-offload",
// "tso"), or a kernel feature name ("tx-tcp-segmentation"). It returns the
// canonical name (the group's long name, or the kernel name) and the
// device's features it covers. An unknown name is an error wrapping
// ErrUnknownFeature that lists the names the device has.
func (fs Features) Resolve(name string) (string, Features, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, g := range Groups {
		if n == g.Short || n == g.Long {
			m := g.Members(fs)
			if len(m) == 0 {
				return "", nil, fmt.Errorf("%q (%s): the device has none of its features: %w", name, g.Long, ErrUnknownFeature)
			}
			return g.Long, m, nil
		}
	}
	if f, ok := fs.Get(n); ok {
		return f.Name, Features{f}, nil
	}
	return "", nil, fmt.Errorf("%q: %w; use an ethtool name (%s) or one of the device's kernel features (wirespeed env lists them)",
		name, ErrUnknownFeature, groupNames(fs))
}

func groupNames(fs Features) string {
	var names []string
	for _, g := range Groups {
		if len(g.Members(fs)) > 0 {
			names = append(names, g.Short)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Summary is the state of a set of features shown as one: on when any of
// them is active, requested when any is requested, fixed when none can
// change. This is how the ethtool program shows its groups.
func (fs Features) Summary(name string) FeatureState {
	s := FeatureState{Name: name, Fixed: true}
	for _, f := range fs {
		s.On = s.On || f.Active
		s.Requested = s.Requested || f.Requested
		s.Fixed = s.Fixed && !f.Changeable
	}
	return s
}

// Offloads returns ethtool's groups that the device has, in ethtool's
// order, each summarised from its features. The TSO group is summarised
// from the features that segment ordinary TCP (TCPSegmentation), not from
// every member: the kernel keeps tx-tcp-accecn-segmentation (and may keep
// the ECN and mangle-ID variants) on when turning tx-checksumming off has
// turned TSO off, and a group summarised from all of them would say "tso
// on" when the test's traffic is not segmented.
func (fs Features) Offloads() []FeatureState { return fs.OffloadsFor(netip.Addr{}) }

// OffloadsFor is Offloads for traffic to peer: the TSO group shows the
// feature that segments TCP of peer's family (tx-tcp-segmentation for
// IPv4, tx-tcp6-segmentation for IPv6); for an invalid peer, either.
func (fs Features) OffloadsFor(peer netip.Addr) []FeatureState {
	var out []FeatureState
	for _, g := range Groups {
		m := g.Members(fs)
		if len(m) == 0 {
			continue
		}
		out = append(out, m.groupSummary(g.Long, peer))
	}
	return out
}

// GroupSummary is Summary for the members of one of ethtool's groups (by
// its long name, as Resolve returns it), with the TSO group summarised
// from the features that segment ordinary TCP, as Offloads does.
func (fs Features) GroupSummary(name string) FeatureState {
	return fs.groupSummary(name, netip.Addr{})
}

func (fs Features) groupSummary(name string, peer netip.Addr) FeatureState {
	if name == "tcp-segmentation-offload" {
		if c := fs.named(TCPSegmentation(peer)...); len(c) > 0 {
			return c.Summary(name)
		}
	}
	return fs.Summary(name)
}

// TCPSegmentation names the kernel features that segment the TCP of
// peer's family; both families' for an invalid peer.
func TCPSegmentation(peer netip.Addr) []string {
	switch {
	case peer.Is4() || peer.Is4In6():
		return []string{"tx-tcp-segmentation"}
	case peer.Is6():
		return []string{"tx-tcp6-segmentation"}
	}
	return []string{"tx-tcp-segmentation", "tx-tcp6-segmentation"}
}

// named returns the features of fs with one of the names.
func (fs Features) named(names ...string) Features {
	var out Features
	for _, f := range fs {
		if slices.Contains(names, f.Name) {
			out = append(out, f)
		}
	}
	return out
}

// Record returns every feature as a results document records it.
func (fs Features) Record() []FeatureState {
	out := make([]FeatureState, 0, len(fs))
	for _, f := range fs {
		out = append(out, FeatureState{Name: f.Name, On: f.Active, Fixed: !f.Changeable, Requested: f.Requested})
	}
	return out
}

// opError is a failed kernel operation on a device. errors.Is maps the
// kernel's answers to the package's contract: EOPNOTSUPP to
// ErrUnsupported, ENODEV to os.ErrNotExist, EPERM to os.ErrPermission.
type opError struct {
	op  string // "driver info", "features", ...
	dev string
	err error
}

func (e *opError) Error() string {
	msg := fmt.Sprintf("%s of %s: %v", e.op, e.dev, e.err)
	switch {
	case isErrno(e.err, ErrUnsupported):
		msg += " (the driver does not offer it)"
	case isErrno(e.err, os.ErrPermission):
		msg += " (needs root or CAP_NET_ADMIN)"
	case isErrno(e.err, os.ErrNotExist):
		msg += " (no such device in this network namespace?)"
	}
	return msg
}

func (e *opError) Unwrap() error { return e.err }

func (e *opError) Is(target error) bool { return isErrno(e.err, target) }
