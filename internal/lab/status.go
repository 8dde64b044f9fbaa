package lab

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"wirespeed/internal/units"
)

// ServeArgs is the command line of the wirespeed server lab up starts in
// a host (side a of a two-host lab, every host of a mesh): listening on
// every address of its namespace on port, requiring the lab's
// pre-shared key in keyFile, and letting the lab's clients change its
// devices (--allow-netconf: a matrix changes both ends of a link, the
// server its own; its devices are the namespace's, its end and lo).
func ServeArgs(port int, keyFile string) []string {
	return []string{"serve", "--listen", ":" + strconv.Itoa(port), "--log-level", "info", "--psk-file", keyFile, "--allow-netconf"}
}

// MeshServeArgs is the command line of the server in each host of a mesh
// lab: ServeArgs, relaying third-party tests toward the other hosts (and
// nothing else), so that wirespeed mesh run in one host measures every
// ordered pair, the others through their source's server.
func MeshServeArgs(port int, keyFile string, hosts []Host) []string {
	var peers []string
	for _, h := range hosts {
		for _, a := range []netip.Addr{h.IPv4, h.IPv6} {
			if a.IsValid() {
				peers = append(peers, a.String())
			}
		}
	}
	return append(ServeArgs(port, keyFile), "--allow-relay", "--relay-peers", strings.Join(peers, ","))
}

// MinRate is the lowest rate a lab's tbf takes, in bits/s.
const MinRate = 8000

// ParseRate reads a lab's rate limit (--rate, --host-rate), like 1gbit or
// 100M, in bits/s: MinRate or more.
func ParseRate(s string) (uint64, error) {
	r, err := units.ParseRate(s)
	if err != nil {
		return 0, err
	}
	if r < MinRate || r > math.MaxUint64/2 {
		return 0, fmt.Errorf("%s is not a rate a tbf takes: use 8kbit or more", s)
	}
	return uint64(r), nil
}

// Unreadable reports whether err, from Load or LoadMesh, means only that
// this user may not read the lab: reading one enters its namespaces,
// which needs root, so without it every lab would look broken. A lab
// whose namespace is missing is broken for anyone.
func Unreadable(err error) bool {
	return err != nil && !errors.Is(err, ErrNotFound) && (errors.Is(err, os.ErrPermission) || os.Geteuid() != 0)
}
