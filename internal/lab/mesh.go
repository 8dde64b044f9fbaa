package lab

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"regexp"
	"strconv"
)

// A mesh lab is three or more hosts on one switch: namespaces
// "wst-<name>-h1" ... "wst-<name>-hN", each with a veth end "wst-h<i>",
// whose other ends ("wst-p<i>") are ports of the bridge "wst-br" in a
// namespace of its own, "wst-<name>-sw". Like a two-host lab, nothing
// outside its namespaces is touched, and it outlives the process that
// made it until RemoveMesh.

// Defaults of MeshConfig.
const DefaultMeshHosts = 3

// MaxMeshHosts bounds the hosts of a mesh lab: each runs a server of
// its own (some 20 MB each), and 32 fill a /26 of the default subnet.
const MaxMeshHosts = 32

// Default subnets of a mesh lab, apart from a two-host lab's.
var (
	DefaultMeshIPv4 = netip.MustParsePrefix("10.77.1.0/24")
	DefaultMeshIPv6 = netip.MustParsePrefix("fd00:77:1::/64")
)

// MeshConfig describes a mesh lab to make.
type MeshConfig struct {
	// Name makes the namespaces "wst-<Name>-h<i>" and "wst-<Name>-sw";
	// as a lab's name. Default "mesh".
	Name string
	// Hosts is how many hosts; default 3, at most MaxMeshHosts.
	Hosts int
	// MTU of every veth end; 0 keeps the kernel's 1500.
	MTU int
	// RateBitsPerSecond limits the link of a host, by its name ("h3"):
	// a tbf on the host's end and on its switch port, so both directions
	// through that link are limited. Other links are not limited.
	RateBitsPerSecond map[string]uint64
	// Queue sizes every tbf's queue and bucket, as Config.Queue does a
	// two-host lab's; it needs a rate.
	Queue Queue
	// Features are offload settings ("tso": false) for every host's end
	// and its switch port, as Config.Features for a two-host lab.
	Features map[string]bool
	// IPv4 and IPv6 are the switch's subnets: host i gets the i-th host
	// address. Private, as a lab's. Defaults DefaultMeshIPv4/IPv6.
	IPv4, IPv6 netip.Prefix
}

// Mesh is a mesh lab that is up.
type Mesh struct {
	Name string
	// Hosts are h1 ... hN, each its Name.
	Hosts []Host
	// Switch is the namespace of the bridge.
	Switch string
	MTU    int
	// RateBitsPerSecond is the tbf rate on each limited host's end, by
	// host name; hosts without a limit are absent.
	RateBitsPerSecond map[string]uint64
}

// View returns a two-host view of the mesh for a client in host from and
// a server in host to (both from 0): side A is to, side B is from. Its
// Do, Start and StartServer run in those hosts' namespaces.
func (m *Mesh) View(from, to int) *Lab {
	return &Lab{Name: m.Name, A: m.Hosts[to], B: m.Hosts[from], MTU: m.MTU, RateBitsPerSecond: m.RateBitsPerSecond[string(m.Hosts[to].Name)]}
}

// HostIndex returns the index of the host called host ("h3" is 2).
func (m *Mesh) HostIndex(host string) (int, error) {
	for i, h := range m.Hosts {
		if string(h.Name) == host {
			return i, nil
		}
	}
	return 0, fmt.Errorf("mesh lab %s has no host %q: name one of h1 to h%d", m.Name, host, len(m.Hosts))
}

// LoadMesh reads the mesh lab called name from its namespaces.
func LoadMesh(name string) (*Mesh, error) { return loadMesh(name) }

// meshState is the state name of the server in a mesh host: a lab's name
// never holds a dot, so it cannot clash with one.
func meshState(name, host string) string { return name + "." + host }

// StartServer starts cmd, a wirespeed serve listening on addr in host i
// (from 0), detached and recorded as Lab.StartServer does, and waits
// until a neighbour host reaches it.
func (m *Mesh) StartServer(ctx context.Context, i int, cmd *exec.Cmd, addr, key string) (*Server, error) {
	if i < 0 || i >= len(m.Hosts) {
		return nil, fmt.Errorf("mesh lab %s has no host %d", m.Name, i)
	}
	from := 0
	if i == 0 {
		from = 1
	}
	return startServerAs(ctx, m.View(from, i), meshState(m.Name, string(m.Hosts[i].Name)), cmd, addr, key)
}

// LoadMeshServer returns the server recorded for host ("h3") of the mesh
// lab called name, or nil when none is.
func LoadMeshServer(name, host string) (*Server, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	return loadServer(meshState(name, host))
}

// RunningIn reports whether a server loaded by LoadMeshServer(name, host) is alive.
func (s *Server) RunningIn(name, host string) bool { return s.running(meshState(name, host)) }

// MeshHostName names the i-th host (from 0) of a mesh lab: "h1", "h2", ...
func MeshHostName(i int) string { return "h" + strconv.Itoa(i+1) }

// MeshNamespace names the namespace of a mesh host ("h1") or of its
// switch ("sw").
func MeshNamespace(name, host string) string { return "wst-" + name + "-" + host }

// meshHostDevice and meshPortDevice name the two ends of host i's link.
func meshHostDevice(i int) string { return "wst-h" + strconv.Itoa(i+1) }
func meshPortDevice(i int) string { return "wst-p" + strconv.Itoa(i+1) }

const (
	meshSwitch = "sw"
	meshBridge = "wst-br"
)

// meshNsRe matches a mesh lab's namespaces, capturing its name.
var meshNsRe = regexp.MustCompile(`^wst-([a-z0-9][a-z0-9-]{0,31})-(sw|h[0-9]{1,2})$`)

func (cfg MeshConfig) withDefaults() (MeshConfig, error) {
	if cfg.Name == "" {
		cfg.Name = "mesh"
	}
	if cfg.Hosts == 0 {
		cfg.Hosts = DefaultMeshHosts
	}
	if cfg.Hosts < 2 || cfg.Hosts > MaxMeshHosts {
		return cfg, fmt.Errorf("mesh lab of %d hosts: use 2 to %d", cfg.Hosts, MaxMeshHosts)
	}
	if !cfg.IPv4.IsValid() {
		cfg.IPv4 = DefaultMeshIPv4
	}
	if !cfg.IPv6.IsValid() {
		cfg.IPv6 = DefaultMeshIPv6
	}
	lc, err := Config{Name: cfg.Name, MTU: cfg.MTU, IPv4: cfg.IPv4, IPv6: cfg.IPv6}.withDefaults()
	if err != nil {
		return cfg, err
	}
	cfg.IPv4, cfg.IPv6 = lc.IPv4, lc.IPv6
	if cfg.IPv4.Bits() > 32-5 || cfg.IPv6.Bits() > 128-5 {
		return cfg, fmt.Errorf("mesh lab subnets %s and %s: use /27 and /123 or wider", cfg.IPv4, cfg.IPv6)
	}
	var rated uint64
	for h, r := range cfg.RateBitsPerSecond {
		if n, err := strconv.Atoi(h[min(1, len(h)):]); err != nil || h == "" || h[0] != 'h' || n < 1 || n > cfg.Hosts {
			return cfg, fmt.Errorf("mesh lab rate for %q: name a host h1 to h%d", h, cfg.Hosts)
		}
		if r > 0 {
			if err := checkQueue(r, cfg.MTU, cfg.Queue); err != nil {
				return cfg, err
			}
			rated = r
		}
	}
	if rated == 0 {
		if err := checkQueue(0, cfg.MTU, cfg.Queue); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// meshHosts returns the hosts cfg describes, before they are made.
func meshHosts(cfg MeshConfig) []Host {
	a4, a6 := cfg.IPv4.Addr(), cfg.IPv6.Addr()
	hosts := make([]Host, cfg.Hosts)
	for i := range hosts {
		a4, a6 = a4.Next(), a6.Next()
		name := MeshHostName(i)
		hosts[i] = Host{Name: HostName(name), Netns: MeshNamespace(cfg.Name, name), Dev: meshHostDevice(i), IPv4: a4, IPv6: a6}
	}
	return hosts
}

// UpMesh makes the mesh lab cfg describes. On any failure, and when ctx
// ends before it is done, it removes whatever it made. A mesh lab of that
// name must not exist yet.
func UpMesh(ctx context.Context, cfg MeshConfig) (*Mesh, error) { return upMeshLab(ctx, cfg) }

// ListMeshes returns the names of the mesh labs that exist, sorted,
// including broken ones (RemoveMesh clears those).
func ListMeshes() ([]string, error) { return listMeshes() }

// Down removes the mesh lab; see RemoveMesh.
func (m *Mesh) Down() error { return RemoveMesh(m.Name) }

// RemoveMesh removes the mesh lab called name: its links and every one of
// its namespaces. It is idempotent and removes what is left of a mesh lab
// that was only partly made.
func RemoveMesh(name string) error { return removeMesh(name) }

// Do runs fn on an OS thread inside the namespace of host i (from 0), as
// Lab.Do does for a lab's sides.
func (m *Mesh) Do(i int, fn func() error) error { return m.do(i, fn) }

// Start starts cmd inside the namespace of host i (from 0); see Lab.Start.
func (m *Mesh) Start(i int, cmd *exec.Cmd) error { return m.start(i, cmd) }
