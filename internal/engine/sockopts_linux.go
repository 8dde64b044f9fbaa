//go:build !wirespeed_portable

package engine

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// setIPOpts sets the IP-level socket options (sockopts.go) that opts asks for on fd,
// a socket not yet bound (sockopts.go).
func setIPOpts(fd uintptr, opts Options) error {
	s := int(fd)
	if opts.BindDev != "" {
		if err := unix.BindToDevice(s, opts.BindDev); err != nil {
			switch {
			case errors.Is(err, unix.ENODEV):
				return fmt.Errorf("bind to device %q: no such device (ip link lists them)", opts.BindDev)
			case errors.Is(err, unix.EPERM):
				return fmt.Errorf("bind to device %q: %w (SO_BINDTODEVICE needs CAP_NET_RAW)", opts.BindDev, err)
			}
			return fmt.Errorf("bind to device %q: %w", opts.BindDev, err)
		}
	}
	if opts.LocalPort > 0 {
		// A fixed port again right after a run: its last connection may
		// wait in TIME_WAIT.
		if err := setReuseAddr(fd); err != nil {
			return fmt.Errorf("set SO_REUSEADDR: %w", err)
		}
	}
	if opts.TOS == 0 && opts.MSS == 0 && !opts.DontFragment {
		return nil
	}
	v6 := false
	if dom, err := unix.GetsockoptInt(s, unix.SOL_SOCKET, unix.SO_DOMAIN); err == nil {
		v6 = dom == unix.AF_INET6
	}
	if opts.TOS != 0 {
		if v6 {
			if err := unix.SetsockoptInt(s, unix.IPPROTO_IPV6, unix.IPV6_TCLASS, opts.TOS); err != nil {
				return fmt.Errorf("set IPV6_TCLASS %#x: %w", opts.TOS, err)
			}
			// A dual-stack socket may carry IPv4: mark that too.
			unix.SetsockoptInt(s, unix.IPPROTO_IP, unix.IP_TOS, opts.TOS)
		} else if err := unix.SetsockoptInt(s, unix.IPPROTO_IP, unix.IP_TOS, opts.TOS); err != nil {
			return fmt.Errorf("set IP_TOS %#x: %w", opts.TOS, err)
		}
	}
	if opts.MSS > 0 {
		if err := unix.SetsockoptInt(s, unix.IPPROTO_TCP, unix.TCP_MAXSEG, opts.MSS); err != nil {
			return fmt.Errorf("set TCP_MAXSEG %d: %w (Linux takes 88 to 32767)", opts.MSS, err)
		}
	}
	if opts.DontFragment {
		if v6 {
			if err := unix.SetsockoptInt(s, unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_DO); err != nil {
				return fmt.Errorf("set IPV6_MTU_DISCOVER: %w", err)
			}
			if err := unix.SetsockoptInt(s, unix.IPPROTO_IPV6, unix.IPV6_DONTFRAG, 1); err != nil {
				return fmt.Errorf("set IPV6_DONTFRAG: %w", err)
			}
			unix.SetsockoptInt(s, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DO)
		} else if err := unix.SetsockoptInt(s, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DO); err != nil {
			return fmt.Errorf("set IP_MTU_DISCOVER: %w", err)
		}
	}
	return nil
}

// pathMTU reads the path MTU of the connected socket fd, the bytes of
// IP and UDP header a datagram carries on it, and whether it forbids
// fragmenting; 0 for an MTU it cannot read.
func pathMTU(fd uintptr) (mtu, header int, df bool) {
	s := int(fd)
	dom, _ := unix.GetsockoptInt(s, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if dom == unix.AF_INET6 {
		mtu, _ = unix.GetsockoptInt(s, unix.IPPROTO_IPV6, unix.IPV6_MTU)
		d, _ := unix.GetsockoptInt(s, unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER)
		return mtu, 48, d == unix.IPV6_PMTUDISC_DO || d == unix.IPV6_PMTUDISC_PROBE
	}
	mtu, _ = unix.GetsockoptInt(s, unix.IPPROTO_IP, unix.IP_MTU)
	d, _ := unix.GetsockoptInt(s, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER)
	return mtu, 28, d == unix.IP_PMTUDISC_DO || d == unix.IP_PMTUDISC_PROBE
}
