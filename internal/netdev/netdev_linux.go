package netdev

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"unsafe"

	"github.com/mdlayher/ethtool"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Features go through the ethtool ioctl, not ethtool netlink: the netlink
// library we use (github.com/mdlayher/ethtool v0.7.0) reads link info,
// link modes, FEC, WoL and private flags but has no ETHTOOL_MSG_FEATURES_*
// messages, and driver info has no netlink message at all. The ioctls
// (ETHTOOL_GSSET_INFO and ETHTOOL_GSTRINGS for the names,
// ETHTOOL_GFEATURES and ETHTOOL_SFEATURES for the state) are what the
// ethtool program itself used before netlink and every kernel still
// answers them. Link modes go through the netlink library.

// From include/uapi/linux/ethtool.h; golang.org/x/sys/unix lacks these two.
const (
	ethSSFeatures  = 4  // ETH_SS_FEATURES string set
	ethGStringLen  = 32 // ETH_GSTRING_LEN
	maxFeatureBits = 1024
)

type client struct {
	fd  int             // socket for SIOCETHTOOL ioctls, in the namespace
	eth *ethtool.Client // ethtool netlink, in the namespace; nil if unavailable
	// ethErr is why eth is nil.
	ethErr error
	nl     *netlink.Handle // rtnetlink, in the namespace; nil if unavailable
	nlErr  error           // why nl is nil
}

// open creates the sockets on a thread inside ns: a socket belongs to the
// namespace it was created in, so it keeps talking to that namespace from
// any thread afterwards.
func open(ns netns.NsHandle) (client, error) {
	var c client
	err := inNamespace(ns, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			// Without IPv4 any socket family reaches the device ioctls.
			fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		}
		if err != nil {
			return fmt.Errorf("open ethtool socket: %w", err)
		}
		c.fd = fd
		c.eth, c.ethErr = ethtool.New()
		c.nl, c.nlErr = netlink.NewHandle(unix.NETLINK_ROUTE)
		return nil
	})
	return c, err
}

// inNamespace runs fn on a thread inside ns, or on the calling goroutine
// when ns is not open. The thread is locked and never unlocked, so the Go
// runtime ends it with the goroutine instead of reusing it elsewhere.
func inNamespace(ns netns.NsHandle, fn func() error) error {
	if ns <= 0 {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := netns.Set(ns); err != nil {
			errc <- fmt.Errorf("enter network namespace %v: %w", ns, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

func (c client) close() error {
	if c.eth != nil {
		c.eth.Close()
	}
	if c.nl != nil {
		c.nl.Close()
	}
	return unix.Close(c.fd)
}

func (c client) driverInfo(dev string) (DriverInfo, error) {
	di, err := unix.IoctlGetEthtoolDrvinfo(c.fd, dev)
	if err != nil {
		return DriverInfo{}, &opError{"driver info", dev, err}
	}
	return DriverInfo{
		Driver:   unix.ByteSliceToString(di.Driver[:]),
		Version:  unix.ByteSliceToString(di.Version[:]),
		Firmware: unix.ByteSliceToString(di.Fw_version[:]),
		BusInfo:  unix.ByteSliceToString(di.Bus_info[:]),
	}, nil
}

func (c client) linkMode(dev string) (LinkMode, error) {
	if c.eth == nil {
		return LinkMode{}, &opError{"link mode", dev, fmt.Errorf("ethtool netlink: %w", c.ethErr)}
	}
	lm, err := c.eth.LinkMode(ethtool.Interface{Name: dev})
	if err != nil {
		return LinkMode{}, &opError{"link mode", dev, err}
	}
	var m LinkMode
	// The kernel reports SPEED_UNKNOWN as -1 in a u32.
	if lm.SpeedMegabits > 0 && uint32(lm.SpeedMegabits) != math.MaxUint32 {
		m.SpeedMbps = lm.SpeedMegabits
	}
	switch lm.Duplex {
	case ethtool.Full:
		m.Duplex = "full"
	case ethtool.Half:
		m.Duplex = "half"
	}
	return m, nil
}

// ifreq is struct ifreq with the ifr_data member of the union.
type ifreq struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// ethtoolIoctl runs SIOCETHTOOL on dev with buf as the ethtool command
// structure. It returns the ioctl's non-negative result.
func (c client) ethtoolIoctl(dev string, buf []byte) (uintptr, error) {
	if len(dev) >= unix.IFNAMSIZ || dev == "" {
		return 0, fmt.Errorf("interface name %q: must be 1 to %d bytes", dev, unix.IFNAMSIZ-1)
	}
	var ifr ifreq
	copy(ifr.name[:], dev)
	ifr.data = unsafe.Pointer(&buf[0])
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(c.fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(buf)
	if errno != 0 {
		return 0, errno
	}
	return r, nil
}

var ne = binary.NativeEndian

// featureNames reads the names of dev's features (ETH_SS_FEATURES).
func (c client) featureNames(dev string) ([]string, error) {
	// struct ethtool_sset_info: cmd, reserved, u64 sset_mask, u32 data[].
	info := make([]byte, 24)
	ne.PutUint32(info[0:], unix.ETHTOOL_GSSET_INFO)
	ne.PutUint64(info[8:], 1<<ethSSFeatures)
	if _, err := c.ethtoolIoctl(dev, info); err != nil {
		return nil, err
	}
	if ne.Uint64(info[8:])&(1<<ethSSFeatures) == 0 {
		return nil, fmt.Errorf("kernel has no feature names: %w", unix.EOPNOTSUPP)
	}
	n := int(ne.Uint32(info[16:]))
	if n <= 0 || n > maxFeatureBits {
		return nil, fmt.Errorf("kernel reports %d features, expected 1 to %d", n, maxFeatureBits)
	}
	return c.gstrings(dev, ethSSFeatures, n)
}

// gstrings reads the first n names of string set ss of dev
// (ETHTOOL_GSTRINGS), fewer when the kernel has fewer now.
func (c client) gstrings(dev string, ss uint32, n int) ([]string, error) {
	// struct ethtool_gstrings: cmd, string_set, len, u8 data[len*32].
	gs := make([]byte, 12+n*ethGStringLen)
	ne.PutUint32(gs[0:], unix.ETHTOOL_GSTRINGS)
	ne.PutUint32(gs[4:], ss)
	ne.PutUint32(gs[8:], uint32(n))
	if _, err := c.ethtoolIoctl(dev, gs); err != nil {
		return nil, err
	}
	if got := int(ne.Uint32(gs[8:])); got < n {
		n = got
	}
	names := make([]string, n)
	for i := range names {
		names[i] = unix.ByteSliceToString(gs[12+i*ethGStringLen : 12+(i+1)*ethGStringLen])
	}
	return names, nil
}

// featureBlocks reads struct ethtool_gfeatures for n features: per block
// of 32, the available, requested, active and never_changed masks.
func (c client) featureBlocks(dev string, n int) ([]byte, error) {
	blocks := (n + 31) / 32
	gf := make([]byte, 8+blocks*16)
	ne.PutUint32(gf[0:], unix.ETHTOOL_GFEATURES)
	ne.PutUint32(gf[4:], uint32(blocks))
	if _, err := c.ethtoolIoctl(dev, gf); err != nil {
		return nil, err
	}
	return gf[8:], nil
}

func (c client) features(dev string) (Features, error) {
	names, err := c.featureNames(dev)
	if err != nil {
		return nil, &opError{"features", dev, err}
	}
	b, err := c.featureBlocks(dev, len(names))
	if err != nil {
		return nil, &opError{"features", dev, err}
	}
	bit := func(word, i int) bool {
		return ne.Uint32(b[(i/32)*16+word*4:])&(1<<(i%32)) != 0
	}
	fs := make(Features, 0, len(names))
	for i, name := range names {
		if name == "" {
			continue // a bit the kernel does not name
		}
		f := Feature{
			Name:       name,
			Changeable: bit(0, i),
			Requested:  bit(1, i),
			Active:     bit(2, i),
		}
		if !f.Changeable {
			// The kernel only keeps requests for changeable features.
			f.Requested = f.Active
		}
		fs = append(fs, f)
	}
	return fs, nil
}

func (c client) setFeatures(dev string, want map[string]bool) error {
	if len(want) == 0 {
		return nil
	}
	names, err := c.featureNames(dev)
	if err != nil {
		return &opError{"set features", dev, err}
	}
	b, err := c.featureBlocks(dev, len(names))
	if err != nil {
		return &opError{"set features", dev, err}
	}
	index := make(map[string]int, len(names))
	for i, n := range names {
		index[n] = i
	}
	blocks := (len(names) + 31) / 32
	// struct ethtool_sfeatures: cmd, size, then per block valid, requested.
	sf := make([]byte, 8+blocks*8)
	ne.PutUint32(sf[0:], unix.ETHTOOL_SFEATURES)
	ne.PutUint32(sf[4:], uint32(blocks))
	for name, on := range want {
		i, ok := index[name]
		if !ok {
			return fmt.Errorf("set features of %s: %q: %w", dev, name, ErrUnknownFeature)
		}
		blk, mask := i/32, uint32(1)<<(i%32)
		if ne.Uint32(b[blk*16:])&mask == 0 {
			return fmt.Errorf("set features of %s: %s is %w", dev, name, ErrFixed)
		}
		valid := sf[8+blk*8:]
		ne.PutUint32(valid, ne.Uint32(valid)|mask)
		if on {
			req := sf[8+blk*8+4:]
			ne.PutUint32(req, ne.Uint32(req)|mask)
		}
	}
	// A positive result (ETHTOOL_F_WISH) says some feature stays unlike
	// what was asked; the caller reads the features again to see which.
	if _, err := c.ethtoolIoctl(dev, sf); err != nil {
		return &opError{"set features", dev, err}
	}
	return nil
}

func isErrno(err, target error) bool {
	switch target {
	case ErrUnsupported, errors.ErrUnsupported:
		return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, ErrUnsupported)
	case os.ErrNotExist:
		return errors.Is(err, unix.ENODEV)
	case os.ErrPermission:
		return errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES)
	}
	return false
}
