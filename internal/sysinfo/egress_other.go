//go:build !linux

package sysinfo

import (
	"net/netip"

	"wirespeed/internal/run"
)

// Egress is Linux only.
func Egress(netip.Addr) (string, *run.Qdisc, error) { return "", nil, ErrUnsupported }
