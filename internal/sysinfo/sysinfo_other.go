//go:build !linux

package sysinfo

import (
	"context"
	"net/netip"
	"time"

	"wirespeed/internal/measure"
)

// collectInterface leaves the interface out with a warning: describing it
// needs netlink and ethtool.
func (c *collector) collectInterface(context.Context, string, netip.Addr) (*Interface, error) {
	c.warn("interface: %v", ErrUnsupported)
	return nil, nil
}

func egress(netip.Addr) (string, *Qdisc, error) { return "", nil, ErrUnsupported }

// baselineResidency is not available: the baseline comes from /proc/stat
// where there is one.
func baselineResidency(context.Context, string, time.Duration) (*measure.CPUBaseline, error) {
	return nil, ErrUnsupported
}
