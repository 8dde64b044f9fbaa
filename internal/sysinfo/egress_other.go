//go:build !linux

package sysinfo

import (
	"net/netip"
)

// Egress is Linux only.
func Egress(netip.Addr) (string, *Qdisc, error) { return "", nil, ErrUnsupported }
