// Package sysinfo owns the environment record of one host: it collects
// the kernel release, the CPU and its frequency governors, the interface that carries a test (found
// from the route to the peer) with its driver, MTU, link speed, offload
// features and qdisc, the TCP congestion control, and the sysctls that
// change results, into a Env. It only reads; package netconf changes
// settings and package report formats the record.
//
// Files under /proc and /sys are read from roots given as parameters,
// so tests use fixture trees. Devices are read over netlink and ethtool in the
// network namespace of the calling thread: to describe a lab namespace,
// call Collect inside lab.Do.
package sysinfo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"wirespeed/internal/measure"
)

// ErrUnsupported is returned for what the platform cannot describe. It
// wraps errors.ErrUnsupported.
var ErrUnsupported = fmt.Errorf("%w on this platform", errors.ErrUnsupported)

// Options say what to describe.
type Options struct {
	// ProcRoot is where procfs is mounted; "" means "/proc". SysRoot is
	// where sysfs is; "" means "/sys".
	ProcRoot, SysRoot string
	// Dev names the interface to describe. When empty, the interface is
	// the one the route to Peer leaves by; when Peer is not valid either,
	// the record has no interface.
	Dev  string
	Peer netip.Addr
}

// Sysctls are the settings a record keeps, by sysctl name.
var Sysctls = []string{
	"net.ipv4.tcp_rmem",
	"net.ipv4.tcp_wmem",
	"net.core.rmem_max",
	"net.core.wmem_max",
	"net.core.rmem_default",
	"net.core.wmem_default",
	"net.ipv4.tcp_mtu_probing",
	"net.core.busy_poll",
	"net.core.busy_read",
	"net.core.optmem_max",
}

// Collect describes this host. Anything it cannot read (a driver that
// answers EOPNOTSUPP, a missing /proc file) is left out of the record and
// explained in one of the returned warnings. It fails only when the
// interface cannot be found at all: Dev does not exist, or no route leads
// to Peer.
func Collect(ctx context.Context, opts Options) (Env, []string, error) {
	root := opts.ProcRoot
	if root == "" {
		root = measure.DefaultProcRoot
	}
	c := &collector{root: root}
	env := Env{Sysctls: map[string][]int64{}}

	env.Hostname = c.line("sys/kernel/hostname", "hostname")
	env.KernelRelease = c.line("sys/kernel/osrelease", "kernel release")
	if cpu, err := readCPU(filepath.Join(root, "cpuinfo")); err != nil {
		c.warn("cpu: %v", err)
	} else {
		env.CPU = cpu
	}
	sysRoot := opts.SysRoot
	if sysRoot == "" {
		sysRoot = DefaultSysRoot
	}
	env.CPUFreq = c.readCPUFreq(sysRoot)
	env.CongestionControl.Default = c.line("sys/net/ipv4/tcp_congestion_control", "congestion control")
	if s := c.line("sys/net/ipv4/tcp_available_congestion_control", "available congestion control"); s != "" {
		env.CongestionControl.Available = strings.Fields(s)
	}
	for _, name := range Sysctls {
		if v, ok := c.sysctl(name); ok {
			env.Sysctls[name] = v
		}
	}
	env.MPTCP = readMPTCP(root)
	env.DataPath = c.dataPath(env.KernelRelease, filepath.Clean(root) == measure.DefaultProcRoot)
	if err := ctx.Err(); err != nil {
		return env, c.warnings, err
	}

	if opts.Dev == "" && !opts.Peer.IsValid() {
		return env, c.warnings, nil
	}
	if opts.Dev == "" {
		env.Peer = opts.Peer.String()
	}
	ifc, err := c.collectInterface(ctx, opts.Dev, opts.Peer)
	if err != nil {
		return env, c.warnings, err
	}
	env.Interface = ifc
	return env, c.warnings, nil
}

type collector struct {
	root     string
	warnings []string
}

func (c *collector) warn(format string, a ...any) {
	c.warnings = append(c.warnings, fmt.Sprintf(format, a...))
}

// line reads a one-line file under the proc root, or warns.
func (c *collector) line(rel, what string) string {
	b, err := os.ReadFile(filepath.Join(c.root, rel))
	if err != nil {
		c.warn("%s: %v", what, readErr(err))
		return ""
	}
	return strings.TrimSpace(string(b))
}

// sysctl reads a numeric sysctl, or warns.
func (c *collector) sysctl(name string) ([]int64, bool) {
	rel := filepath.Join("sys", strings.ReplaceAll(name, ".", "/"))
	b, err := os.ReadFile(filepath.Join(c.root, rel))
	if errors.Is(err, fs.ErrNotExist) && strings.HasPrefix(name, "net.") {
		// Some net.core settings are global and show only in the host's
		// own network namespace.
		c.warn("sysctl %s: not in this kernel or not visible in this network namespace", name)
		return nil, false
	}
	if err != nil {
		c.warn("sysctl %s: %v", name, readErr(err))
		return nil, false
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		c.warn("sysctl %s: empty", name)
		return nil, false
	}
	vals := make([]int64, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			c.warn("sysctl %s: %q is not a number", name, f)
			return nil, false
		}
		vals[i] = v
	}
	return vals, true
}

func readErr(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("%s does not exist on this kernel", pe.Path)
		}
	}
	return err
}

// readCPU reads the processor model and the number of logical CPUs from
// cpuinfo. The model line differs by architecture: "model name" on x86,
// "cpu" on POWER, "Hardware" or "CPU part" on ARM.
func readCPU(path string) (CPUInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return CPUInfo{}, readErr(err)
	}
	defer f.Close()
	var (
		cpu    CPUInfo
		models = map[string]string{}
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if k == "processor" {
			cpu.Count++
			continue
		}
		if _, seen := models[k]; !seen && v != "" {
			models[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		return CPUInfo{}, fmt.Errorf("read %s: %w", path, err)
	}
	for _, k := range []string{"model name", "cpu", "Hardware", "CPU part"} {
		if m, ok := models[k]; ok {
			cpu.Model = m
			break
		}
	}
	if cpu.Count == 0 {
		return cpu, fmt.Errorf("%s lists no processor: is it a cpuinfo file?", path)
	}
	return cpu, nil
}

// Egress returns the interface the route to peer leaves by and its root
// queueing discipline, in the calling thread's network namespace: what a
// socket's pacing meets on its way out. Linux only; elsewhere it returns
// ErrUnsupported.
func Egress(peer netip.Addr) (string, *Qdisc, error) { return egress(peer) }
