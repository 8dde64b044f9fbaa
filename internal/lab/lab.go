// Package lab owns test hosts made of network namespaces: a lab is two
// namespaces, "wst-<name>-a" and "wst-<name>-b", joined by a veth pair
// ("wst-a" in a, "wst-b" in b) with IPv4 and IPv6 addresses, an MTU,
// offload features and an optional token bucket rate limit on both ends.
// Users get a reproducible two-host setup on one machine; the project's
// own tests use the same package (through nstest).
//
// Everything is made with the netns and netlink libraries, never by running
// ip or tc. Nothing outside the two namespaces is touched: the veth pair is
// created with its ends already in them, so it never appears on the host.
// Making and removing labs needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN).
//
// A lab outlives the process that made it, like `ip netns add`: Load finds
// it again by name, and Down removes it.
package lab

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"regexp"
)

// ErrUnsupported is returned where the platform has no network namespaces.
// It wraps errors.ErrUnsupported.
var ErrUnsupported = fmt.Errorf("%w: labs need Linux network namespaces", errors.ErrUnsupported)

// ErrNotFound is returned by Load for a lab that does not exist.
var ErrNotFound = errors.New("no such lab")

// ErrExists is returned by Up for a lab that is already up.
var ErrExists = errors.New("lab already exists")

// HostName names a host of a lab: a and b of a two-host lab (the sides
// of `lab exec --side`), r the router of a routed one, h1..hN a mesh's.
type HostName string

// The two hosts of a two-host lab. A is where `lab up` will run the
// server, B the client.
const (
	A HostName = "a"
	B HostName = "b"
)

// ParseHostName accepts "a" or "b".
func ParseHostName(s string) (HostName, error) {
	switch HostName(s) {
	case A, B:
		return HostName(s), nil
	}
	return "", fmt.Errorf("side %q: use a or b", s)
}

// Defaults of Config.
const (
	DefaultName = "lab"
)

// Default subnets: private addresses that exist only inside the lab's
// namespaces.
var (
	DefaultIPv4 = netip.MustParsePrefix("10.77.0.0/24")
	DefaultIPv6 = netip.MustParsePrefix("fd00:77::/64")
)

// Config describes a lab to make.
type Config struct {
	// Name makes the namespaces "wst-<Name>-a" and "wst-<Name>-b":
	// lowercase letters, digits and dashes, at most 32. Default "lab".
	Name string
	// MTU of both veth ends; 0 keeps the kernel's 1500.
	MTU int
	// RateBitsPerSecond puts a tbf qdisc with this rate on both ends'
	// egress (one end's with OneWay); 0 means no limit. See TBF for the
	// bucket and queue sizes, and Queue for others.
	RateBitsPerSecond uint64
	// Queue sizes the tbf's queue and bucket; the zero Queue takes TBF's.
	// It needs a RateBitsPerSecond.
	Queue Queue
	// OneWay shapes one direction only: A puts the tbf on side a's
	// egress alone (a to b, the server's sending), B on b's (b to a, the
	// client's). "" shapes both.
	OneWay HostName
	// Features are offload settings for both ends, by ethtool name
	// ("tso": false); see netconf.Setting.
	Features map[string]bool
	// IPv4 and IPv6 are the subnets of the link: side a gets the first
	// host address, side b the second. They must be private (RFC 1918,
	// ULA fc00::/7). Defaults DefaultIPv4 and DefaultIPv6.
	IPv4, IPv6 netip.Prefix
}

// Lab is a lab that is up.
type Lab struct {
	Name string
	A, B Host
	MTU  int
	// RateBitsPerSecond is the tbf rate on the veth ends (on the one end
	// that has a tbf, when one has); 0 when none. Each Host says its own.
	RateBitsPerSecond uint64
}

// Host is one host of a lab.
type Host struct {
	Name  HostName
	Netns string // namespace name, under /run/netns
	Dev   string // the veth end inside it
	IPv4  netip.Addr
	IPv6  netip.Addr
	// RateBitsPerSecond and QueueBytes are the rate and the queue (tbf's
	// limit) of the tbf on the device's egress, as the kernel holds them;
	// 0 without one.
	RateBitsPerSecond uint64
	QueueBytes        uint32
}

// Host returns the host of side s.
func (l *Lab) Host(s HostName) Host {
	if s == B {
		return l.B
	}
	return l.A
}

// hostOf points at the host of side s.
func (l *Lab) hostOf(s HostName) *Host {
	if s == B {
		return &l.B
	}
	return &l.A
}

// Namespace names the namespace of side s of the lab called name.
func Namespace(name string, s HostName) string { return "wst-" + name + "-" + string(s) }

// Device names the veth end of side s.
func Device(s HostName) string { return "wst-" + string(s) }

var nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// CheckName returns an error for a name labs cannot have.
func CheckName(name string) error {
	if !nameRe.MatchString(name) {
		return fmt.Errorf("lab name %q: use 1 to 32 lowercase letters, digits and dashes", name)
	}
	return nil
}

// withDefaults fills in and checks cfg.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if err := CheckName(cfg.Name); err != nil {
		return cfg, err
	}
	if cfg.MTU != 0 && (cfg.MTU < 1280 || cfg.MTU > 65535) {
		return cfg, fmt.Errorf("lab mtu %d: use 1280 (IPv6's minimum) to 65535", cfg.MTU)
	}
	if !cfg.IPv4.IsValid() {
		cfg.IPv4 = DefaultIPv4
	}
	if !cfg.IPv6.IsValid() {
		cfg.IPv6 = DefaultIPv6
	}
	cfg.IPv4, cfg.IPv6 = cfg.IPv4.Masked(), cfg.IPv6.Masked()
	if cfg.OneWay != "" && cfg.OneWay != A && cfg.OneWay != B {
		return cfg, fmt.Errorf("lab one-way shaping of side %q: name side a or b", cfg.OneWay)
	}
	if err := checkQueue(cfg.RateBitsPerSecond, cfg.MTU, cfg.Queue); err != nil {
		return cfg, err
	}
	if !cfg.IPv4.Addr().Is4() || !cfg.IPv4.Addr().IsPrivate() || cfg.IPv4.Bits() > 30 {
		return cfg, fmt.Errorf("lab IPv4 subnet %s: use a private subnet of /30 or wider, like %s", cfg.IPv4, DefaultIPv4)
	}
	if !cfg.IPv6.Addr().Is6() || !cfg.IPv6.Addr().IsPrivate() || cfg.IPv6.Bits() > 126 {
		return cfg, fmt.Errorf("lab IPv6 subnet %s: use a unique local subnet (fc00::/7) of /126 or wider, like %s", cfg.IPv6, DefaultIPv6)
	}
	return cfg, nil
}

// hostAddrs returns the first and second host addresses of p.
func hostAddrs(p netip.Prefix) (a, b netip.Addr) {
	a = p.Addr().Next()
	return a, a.Next()
}

// TBF sizes a token bucket filter for a rate of bitsPerSecond on a link
// with that MTU:
//
//	burst = max(rate/8 / 250, 2 × (MTU + 64)) bytes
//	limit = burst + rate/8 × 5 ms bytes
//
// The bucket holds 4 ms of traffic: one timer tick at HZ=250, the lowest
// common kernel tick, so burst ≥ rate/HZ for every HZ from 250 up (tc-tbf's
// rule: a smaller bucket empties between ticks and the link runs below its
// rate), and at least two full-size frames with room for the link-layer
// header, so a frame always fits. The queue holds the bucket plus 5 ms at
// the rate, a short queue like a switch port's, so the limit shows as
// drops rather than as seconds of latency.
func TBF(bitsPerSecond uint64, mtu int) (rateBytes uint64, burst, limit uint32) {
	if mtu <= 0 {
		mtu = 1500
	}
	rateBytes = bitsPerSecond / 8
	b := rateBytes / 250
	if min := uint64(2 * (mtu + 64)); b < min {
		b = min
	}
	l := b + rateBytes*5/1000
	const max = 1<<32 - 1
	if b > max {
		b = max
	}
	if l > max {
		l = max
	}
	return rateBytes, uint32(b), uint32(l)
}

// Up makes the lab cfg describes. On any failure, and when ctx ends before
// it is done, it removes whatever it made. A lab of that name must not
// exist yet.
func Up(ctx context.Context, cfg Config) (*Lab, error) { return upLab(ctx, cfg) }

// Load finds the lab called name, as Up left it (or as it was changed
// since), reading addresses, MTU and rate from the kernel.
func Load(name string) (*Lab, error) { return loadLab(name) }

// List returns the names of the labs that exist, sorted, including broken
// ones with only one namespace left (Remove clears those).
func List() ([]string, error) { return listLabs() }

// Down removes the lab; see Remove.
func (l *Lab) Down() error { return Remove(l.Name) }

// Remove removes the lab called name: its veth pair and both namespaces.
// It is idempotent, and removes what is left of a lab that was only partly
// made. A process still running inside a namespace keeps that namespace
// alive (without its link) until it exits.
func Remove(name string) error { return removeLab(name) }

// Do runs fn on an OS thread inside the namespace of side s and returns
// its error. A panic in fn is raised again in the caller's goroutine.
// Sockets fn opens belong to the namespace and can be used from any
// goroutine afterwards; goroutines fn starts do not run in the namespace.
// fn must not call t.FailNow (t.Fatal): it runs on another goroutine.
// The thread is never handed back to the Go runtime: it ends with fn.
func (l *Lab) Do(s HostName, fn func() error) error { return l.do(s, fn) }

// Start starts cmd inside the namespace of side s: the child process is
// forked from a thread in the namespace and stays there. Wait for it as
// usual. The child sees the host's /sys, unlike `ip netns exec`, which
// also remounts /sys; it reads interfaces through netlink instead.
func (l *Lab) Start(s HostName, cmd *exec.Cmd) error { return l.start(s, cmd) }
