//go:build !linux

package sysinfo

import (
	"context"
	"net/netip"
)

// collectInterface leaves the interface out with a warning: describing it
// needs netlink and ethtool.
func (c *collector) collectInterface(context.Context, string, netip.Addr) (*Interface, error) {
	c.warn("interface: %v", ErrUnsupported)
	return nil, nil
}

func egress(netip.Addr) (string, *Qdisc, error) { return "", nil, ErrUnsupported }
