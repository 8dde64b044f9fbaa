package lab

import (
	"context"
	"fmt"
	"net/netip"
)

// A routed lab is two hosts with a router between them: namespaces
// "wst-<name>-a", "wst-<name>-r" and "wst-<name>-b"; a's "wst-a" is joined
// to the router's "wst-ra", the router's "wst-rb" to b's "wst-b", each
// pair on a subnet of its own (IPv4 only), and the router forwards between
// them. Its egress toward b (and with BothWays toward a as well) can be
// shaped with a tbf whose queue is as long as asked, so the path's
// bottleneck, and the drops it makes, are on the router, apart from both
// hosts. Remove (Down) takes the router's namespace away too.

// Router is the side name of a routed lab's router.
const Router HostName = "r"

// Subnets of a routed lab: a to the router, the router to b.
var (
	RoutedIPv4A = netip.MustParsePrefix("10.77.2.0/24")
	RoutedIPv4B = netip.MustParsePrefix("10.77.3.0/24")
)

// RoutedConfig describes a routed lab to make.
type RoutedConfig struct {
	// Name makes the namespaces "wst-<Name>-a", "-r", "-b"; as a lab's
	// name (CheckName).
	Name string
	// RateBitsPerSecond shapes the router's egress toward b with a tbf;
	// 0 leaves it unshaped.
	RateBitsPerSecond uint64
	// LimitBytes is the tbf's queue; 0 takes TBF's.
	LimitBytes uint32
	// BurstBytes is the tbf's bucket; 0 takes TBF's. A large one lets
	// the start of a flood through before the shaping drops any.
	BurstBytes uint32
	// BothWays puts the same tbf on the router's egress toward a too,
	// so that each direction's bottleneck, and its queue, is the
	// router's: neither host's own qdisc holds the backlog.
	BothWays bool
}

// Routed is a routed lab that is up: a Lab of its hosts a and b (Do, Down,
// Host), and its router.
type Routed struct {
	*Lab
	// Router holds the router's two interfaces: Dev and IPv4 are its
	// interface toward b ("wst-rb"); RouterA is the one toward a.
	Router  Host
	RouterA Host
	// Limit is the tbf queue in bytes, 0 when unshaped.
	Limit uint32
}

// RouterDeviceB is the router's interface toward b, the shaped one.
const RouterDeviceB = "wst-rb"

// UpRouted makes a routed lab from cfg. On failure it removes what it
// made.
func UpRouted(ctx context.Context, cfg RoutedConfig) (*Routed, error) {
	if err := CheckName(cfg.Name); err != nil {
		return nil, err
	}
	r, err := upRouted(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("routed lab %q up: %w", cfg.Name, err)
	}
	return r, nil
}

// RouterEgress is one egress of a routed lab's router, as a host of the
// lab sees it: the router's namespace, the device, and the host the
// device leads to.
type RouterEgress struct {
	Netns  string
	Dev    string
	Toward HostName
}

// RouterEgresses returns the egresses of the router of the lab called
// name as its host s sees them: the one toward the other host first,
// then the one toward s. A lab without a router (two hosts on one link)
// has none, and that is no error. It reads /run/netns only; sampling the
// router's qdiscs (measure.OpenNetnsQdisc) needs root. lab run hands
// them to its client (run's --router-queue).
func RouterEgresses(name string, s HostName) ([]RouterEgress, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	ok, err := hasRouter(name)
	if err != nil || !ok {
		return nil, err
	}
	return routerEgresses(name, s), nil
}

// routerEgresses are a routed lab's router egresses as host s sees them.
func routerEgresses(name string, s HostName) []RouterEgress {
	ns := Namespace(name, Router)
	toA := RouterEgress{Netns: ns, Dev: "wst-ra", Toward: A}
	toB := RouterEgress{Netns: ns, Dev: RouterDeviceB, Toward: B}
	if s == A {
		return []RouterEgress{toB, toA}
	}
	return []RouterEgress{toA, toB}
}
