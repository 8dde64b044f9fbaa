package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"wirespeed/internal/lab"
	"wirespeed/internal/report"
)

// A mesh lab on the command line: lab up --hosts N makes h1 ... hN on one
// bridge (lab.UpMesh) and starts a server in every host, each recorded
// under the lab's name and the host's, so lab run --from --to can pick any
// pair at once and lab down stops them all. One server per host is
// simpler and sounder than starting one on demand: nothing races when two
// lab runs name the same --to, and a run measures a server that was ready
// before it began.

// meshConfig builds the mesh lab's configuration from lab up's flags.
func (f *labUpFlags) meshConfig(ipv4Changed, ipv6Changed bool) (lab.MeshConfig, error) {
	base, err := f.config()
	if err != nil {
		return lab.MeshConfig{}, err
	}
	cfg := lab.MeshConfig{Name: f.name, Hosts: f.hosts, MTU: f.mtu, Features: base.Features, RateBitsPerSecond: map[string]uint64{}}
	if f.hosts < 2 || f.hosts > lab.MaxMeshHosts {
		return cfg, usagef("--hosts %d: use 2 to %d", f.hosts, lab.MaxMeshHosts)
	}
	if ipv4Changed {
		cfg.IPv4 = base.IPv4
	}
	if ipv6Changed {
		cfg.IPv6 = base.IPv6
	}
	if base.RateBitsPerSecond > 0 {
		for i := range f.hosts {
			cfg.RateBitsPerSecond[lab.MeshHostName(i)] = base.RateBitsPerSecond
		}
	}
	for _, hr := range f.hostRates {
		host, rate, ok := strings.Cut(hr, "=")
		if !ok {
			return cfg, usagef("--host-rate %q: write HOST=RATE, like h3=100mbit", hr)
		}
		n, err := strconv.Atoi(strings.TrimPrefix(host, "h"))
		if !strings.HasPrefix(host, "h") || err != nil || n < 1 || n > f.hosts {
			return cfg, usagef("--host-rate %q: name a host h1 to h%d", hr, f.hosts)
		}
		r, err := lab.ParseRate(rate)
		if err != nil {
			return cfg, usagef("--host-rate %q: %v", hr, err)
		}
		cfg.RateBitsPerSecond[host] = r
	}
	if f.oneWay != "" {
		return cfg, usagef("--one-way is for a two-host lab: a mesh host's limit is on both ends of its link")
	}
	// The queue's checks hold for every limited host's rate.
	var q lab.Queue
	for _, r := range cfg.RateBitsPerSecond {
		if q, err = f.tbfQueue(r); err != nil {
			return cfg, err
		}
	}
	if len(cfg.RateBitsPerSecond) == 0 {
		if q, err = f.tbfQueue(0); err != nil {
			return cfg, err
		}
	}
	cfg.Queue = q
	return cfg, nil
}

// upMesh makes the mesh lab and starts its servers, removing it all when
// a server cannot start.
func upMesh(ctx context.Context, e *env, cfg lab.MeshConfig, server bool, port int) error {
	// A two-host lab of the same name would share its records (key, log).
	if _, err := lab.Load(cfg.Name); !errors.Is(err, lab.ErrNotFound) {
		return fmt.Errorf("%w: a two-host lab called %s exists; pick another --name or remove it with wirespeed lab down --name %s", lab.ErrExists, cfg.Name, cfg.Name)
	}
	m, err := lab.UpMesh(ctx, cfg)
	if err != nil {
		return labErr(err)
	}
	if server {
		if err := startMeshServers(ctx, m, port); err != nil {
			if rerr := lab.RemoveMesh(m.Name); rerr != nil {
				err = errors.Join(err, fmt.Errorf("remove the lab: %w", rerr))
			}
			return err
		}
	}
	printMesh(e, m)
	if server {
		fmt.Fprintf(e.stdout, "run the client in one host against another's server with: wirespeed lab run --name %s --from h1 --to h%d -- [run flags]\n", m.Name, len(m.Hosts))
	}
	return nil
}

// startMeshServers starts wirespeed serve in every host of m, as
// startLabServer does in side a of a two-host lab, with one key for all,
// each relaying toward the other hosts (lab.MeshServeArgs).
func startMeshServers(ctx context.Context, m *lab.Mesh, port int) error {
	key, err := lab.MakeMeshKey(m.Name)
	if err != nil {
		return err
	}
	for i, h := range m.Hosts {
		cmd, err := selfCommand(lab.MeshServeArgs(port, key, m.Hosts)...)
		if err != nil {
			return err
		}
		addr := netip.AddrPortFrom(h.IPv4, uint16(port)).String()
		if _, err := m.StartServer(ctx, i, cmd, addr, key); err != nil {
			return err
		}
	}
	return nil
}

// meshStatus describes m for report.Lab: each host with its rate, its
// offloads and its server.
func meshStatus(m *lab.Mesh) report.LabStatus {
	st := report.LabStatus{Name: m.Name + fmt.Sprintf(" (%d hosts on bridge in %s)", len(m.Hosts), m.Switch), MTU: m.MTU}
	for _, h := range m.Hosts {
		lh := report.LabHost{Name: string(h.Name), Netns: h.Netns, Dev: h.Dev, IPv4: addrString(h.IPv4), IPv6: addrString(h.IPv6),
			RateBitsPerSecond: m.RateBitsPerSecond[string(h.Name)], Offloads: h.Offloads()}
		if s, err := lab.LoadMeshServer(m.Name, string(h.Name)); err == nil && s != nil {
			lh.Server = &report.LabServer{Host: string(h.Name), PID: s.PID, Addr: s.Addr, Running: s.RunningIn(m.Name, string(h.Name)), Log: s.Log}
		}
		st.Hosts = append(st.Hosts, lh)
	}
	return st
}

func printMesh(e *env, m *lab.Mesh) {
	report.Lab(e.stdout, meshStatus(m))
	if s, err := lab.LoadMeshServer(m.Name, string(m.Hosts[0].Name)); err == nil && s != nil && s.Key != "" {
		fmt.Fprintf(e.stdout, "  key:    %s (lab run passes it; other clients need --psk-file %s)\n", s.Key, s.Key)
	}
}

// meshView loads the mesh lab called name and returns the two-host view
// lab run uses: side a is host to, with its server, side b is host from.
func meshView(name, from, to string) (*lab.Lab, *lab.Server, error) {
	m, err := lab.LoadMesh(name)
	if err != nil {
		return nil, nil, labErr(err)
	}
	if from == "" || to == "" {
		return nil, nil, usagef("lab %s is a mesh of %d hosts: name both ends, like --from h1 --to h%d", name, len(m.Hosts), len(m.Hosts))
	}
	fi, err := m.HostIndex(from)
	if err != nil {
		return nil, nil, usagef("--from: %v", err)
	}
	ti, err := m.HostIndex(to)
	if err != nil {
		return nil, nil, usagef("--to: %v", err)
	}
	if fi == ti {
		return nil, nil, usagef("--from and --to are both %s: name two hosts", from)
	}
	srv, err := lab.LoadMeshServer(name, to)
	if err != nil {
		return nil, nil, err
	}
	if srv == nil || !srv.RunningIn(name, to) {
		return nil, nil, fmt.Errorf("lab %s has no server running in %s; make the lab with wirespeed lab up --hosts N (it starts one in every host)", name, to)
	}
	return m.View(fi, ti), srv, nil
}

// isMesh reports whether a mesh lab called name exists.
func isMesh(name string) bool {
	names, err := lab.ListMeshes()
	if err != nil {
		return false
	}
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// runMeshInLab runs wirespeed mesh in host from (h1 when "") of the mesh
// lab called name, across every host's server (meshClientArgs).
func runMeshInLab(ctx context.Context, e *env, name, from string, flags []string) error {
	if !isMesh(name) {
		if _, err := lab.Load(name); err == nil {
			return usagef("lab run mesh needs a mesh lab: lab %s has two hosts (lab run measures its one pair); make one with wirespeed lab up --name NAME --hosts 3", name)
		}
	}
	m, err := lab.LoadMesh(name)
	if err != nil {
		return labErr(err)
	}
	if from == "" {
		from = string(m.Hosts[0].Name)
	}
	fi, err := m.HostIndex(from)
	if err != nil {
		return usagef("--from: %v", err)
	}
	var servers []*lab.Server
	for _, h := range m.Hosts {
		srv, err := lab.LoadMeshServer(name, string(h.Name))
		if err != nil {
			return err
		}
		if srv == nil || !srv.RunningIn(name, string(h.Name)) {
			return fmt.Errorf("lab %s has no server running in %s; make the lab with wirespeed lab up --hosts N (it starts one in every host)", name, h.Name)
		}
		servers = append(servers, srv)
	}
	args, err := meshClientArgs(e, m, servers, flags)
	if err != nil {
		return err
	}
	// The view's side b is host from: runInLab starts the client there.
	return runInLab(ctx, e, m.View(fi, (fi+1)%len(m.Hosts)), args)
}

// meshClientArgs builds the command line of wirespeed mesh across the
// hosts of m: every host's server as a peer, at its IPv4 address (IPv6
// with -6) and its port, and the lab's key unless the flags give one,
// then the user's flags, read with mesh's own definitions. The peers are
// the lab's: flags that give others are refused.
func meshClientArgs(e *env, m *lab.Mesh, servers []*lab.Server, flags []string) ([]string, error) {
	fl := newMeshCmd(e).Flags()
	if err := fl.Parse(flags); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return append([]string{"mesh"}, flags...), nil
		}
		return nil, usagef("wirespeed mesh: %v", err)
	}
	for _, f := range []string{"peers", "peers-dns"} {
		if fl.Changed(f) {
			return nil, usagef("lab run mesh gives the lab's hosts as the peers: drop --%s", f)
		}
	}
	ipv6, _ := fl.GetBool("ipv6")
	var peers []string
	for i, h := range m.Hosts {
		_, port, err := net.SplitHostPort(servers[i].Addr)
		if err != nil {
			return nil, fmt.Errorf("lab %s: the server of %s: address %q: %w", m.Name, h.Name, servers[i].Addr, err)
		}
		a := h.IPv4
		if ipv6 {
			a = h.IPv6
		}
		if !a.IsValid() {
			return nil, fmt.Errorf("lab %s: %s has no address of the family asked", m.Name, h.Name)
		}
		peers = append(peers, net.JoinHostPort(a.String(), port))
	}
	args := []string{"mesh", "--peers", strings.Join(peers, ",")}
	if key := servers[0].Key; key != "" && !fl.Changed("psk-file") {
		args = append(args, "--psk-file", key)
	}
	return append(args, flags...), nil
}
