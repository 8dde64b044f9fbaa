package mesh

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// Resolver looks up a host's addresses; net.DefaultResolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// LookupPeers takes the peers from name's addresses (a headless
// service's A and AAAA records), each named by its address and reached on
// port, in address order so that rounds line up. ipVersion 4 or 6 keeps
// only that family's.
func LookupPeers(ctx context.Context, r Resolver, name string, port, ipVersion int) ([]result.MeshPeer, error) {
	network := spec.LookupNetwork(ipVersion)
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(lctx, network, name)
	if err != nil {
		return nil, fmt.Errorf("--peers-dns %s: %w", name, err)
	}
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	slices.SortFunc(addrs, netip.Addr.Compare)
	addrs = slices.Compact(addrs)
	var peers []result.MeshPeer
	for _, a := range addrs {
		peers = append(peers, result.MeshPeer{Name: a.String(), Address: net.JoinHostPort(a.String(), strconv.Itoa(port))})
	}
	if len(peers) < 2 {
		return nil, fmt.Errorf("--peers-dns %s: %d address(es) found, a mesh needs at least 2 (are the servers running and ready?)", name, len(peers))
	}
	if len(peers) > MaxPeers {
		return nil, fmt.Errorf("--peers-dns %s: %d addresses is over the limit of %d peers", name, len(peers), MaxPeers)
	}
	return peers, nil
}

// ParsePairs returns the ordered pairs to measure: those of specs, each
// SRC:DST with two peers' names (--pairs), or every ordered pair in the
// order of the peers (a to every other, then b, ...) when there is none.
func ParsePairs(peers []result.MeshPeer, specs []string) ([]Pair, error) {
	idx := map[string]int{}
	for i, p := range peers {
		idx[p.Name] = i
	}
	var pairs []Pair
	if len(specs) == 0 {
		for i := range peers {
			for j := range peers {
				if i != j {
					pairs = append(pairs, Pair{i, j})
				}
			}
		}
		return pairs, nil
	}
	seen := map[Pair]bool{}
	for _, s := range specs {
		p, ok := splitPair(strings.TrimSpace(s), idx)
		if !ok {
			return nil, fmt.Errorf("--pairs %q: write SRC:DST with two different names from the peers (%s)", s, peerNames(peers))
		}
		if !seen[p] {
			seen[p] = true
			pairs = append(pairs, p)
		}
	}
	return pairs, nil
}

// splitPair splits SRC:DST at the colon that leaves a peer name on both
// sides, so names with ports or IPv6 addresses work too.
func splitPair(s string, idx map[string]int) (Pair, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		a, okA := idx[s[:i]]
		b, okB := idx[s[i+1:]]
		if okA && okB && a != b {
			return Pair{a, b}, true
		}
	}
	return Pair{}, false
}

func peerNames(peers []result.MeshPeer) string {
	var names []string
	for _, p := range peers {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// MarkLocal sets Local on the peer that is this host: the one named
// local, none for "none", or for "auto" (or "") every peer whose address
// (looked up with r when it is a name) is one of this host's interfaces'.
// Its only error is a local that names no peer.
func MarkLocal(ctx context.Context, r Resolver, peers []result.MeshPeer, local string) error {
	switch local {
	case "none":
		return nil
	case "auto", "":
	default:
		for i := range peers {
			if peers[i].Name == local {
				peers[i].Local = true
				return nil
			}
		}
		return fmt.Errorf("--local %q is not one of the peers (%s); use a peer's name, none or auto", local, peerNames(peers))
	}
	mine := localAddrs()
	for i := range peers {
		host, _, err := net.SplitHostPort(peers[i].Address)
		if err != nil {
			continue
		}
		addrs := []netip.Addr{}
		if a, err := netip.ParseAddr(host); err == nil {
			addrs = append(addrs, a)
		} else {
			lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			addrs, _ = r.LookupNetIP(lctx, "ip", host)
			cancel()
		}
		for _, a := range addrs {
			if mine[a.Unmap()] {
				peers[i].Local = true
			}
		}
	}
	return nil
}

// localAddrs returns this host's interface addresses.
func localAddrs() map[netip.Addr]bool {
	out := map[netip.Addr]bool{}
	as, err := net.InterfaceAddrs()
	if err != nil {
		return out
	}
	for _, a := range as {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out[p.Addr().Unmap()] = true
		}
	}
	return out
}
