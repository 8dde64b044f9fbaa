package cli

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"wirespeed/internal/lab"
	"wirespeed/internal/netconf"
	"wirespeed/internal/report"
	"wirespeed/internal/server"
	"wirespeed/internal/units"
)

func newLabCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Make and use a two-host test lab of network namespaces on this machine",
		Long: `A lab is two network namespaces, wst-NAME-a and wst-NAME-b, joined by a veth
pair (wst-a and wst-b) with private addresses (10.77.0.1 and 10.77.0.2 in
10.77.0.0/24, fd00:77::1 and fd00:77::2 in fd00:77::/64 unless told
otherwise), an MTU, offload features and an optional rate limit (a token
bucket filter on both ends), with a wirespeed server running in side a. It
gives a reproducible two-host setup on one machine; nothing outside the two
namespaces is changed. "wirespeed lab run" runs the client in side b.

A lab stays until "wirespeed lab down" removes it. Making and removing labs
needs root.`,
		Example: `  wirespeed lab up --mtu 9000 --rate 1gbit --features tso=off,gso=off
  wirespeed lab run -- -l 5 -I 99,5
  wirespeed lab run matrix -- --set tso=on,off --set mtu=1500,9000 -l 1
  wirespeed lab exec --side b -- ping -c 3 10.77.0.1
  wirespeed lab status
  wirespeed lab down`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("lab needs a subcommand: up, down, status, run or exec (see wirespeed lab --help)")
		},
	}
	cmd.AddCommand(newLabUpCmd(e), newLabDownCmd(e), newLabStatusCmd(e), newLabExecCmd(e))
	cmd.AddCommand(newLabRunCmd(e))
	return cmd
}

type labUpFlags struct {
	name string
	mtu  int
	rate string
	// latency, queue and burst size the tbf (lab.Queue); oneWay ("a",
	// "b") shapes that side's egress only.
	latency, queue, burst string
	oneWay                string
	features              string
	ipv4                  string
	ipv6                  string
	// server starts wirespeed serve in side a, on port (labrun.go).
	server bool
	port   int
	// hosts > 0 makes a mesh lab of that many hosts on a bridge
	// (labmesh.go), hostRates ("h3=100mbit") limit single hosts.
	hosts     int
	hostRates []string
}

func newLabUpCmd(e *env) *cobra.Command {
	f := &labUpFlags{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Make a lab",
		Long: `Make a lab: two namespaces joined by a veth pair, with addresses, lo up, the
MTU, offload features and rate limit asked for, on both ends, and start
wirespeed serve in side a, detached, with a fresh pre-shared key and
--allow-netconf (the devices it can change are the namespace's: its veth
end and lo), its process id and key recorded under /run/wirespeed/labs so
that lab run finds them and lab down stops it (--server=false: no server).

--hosts N makes a mesh lab instead, hosts h1 ... hN (namespaces
wst-NAME-h1 ...) whose links (wst-h1 ... in the hosts) are ports of one
bridge in a namespace of its own (wst-NAME-sw), as virtual machines behind
a host bridge; a server starts in every host, and lab run --from h1 --to h3
runs a client in h1 against h3's. --rate limits every host's link,
--host-rate h3=R one host's (both ends of its link), --features and --mtu
apply to every host's end and its bridge port.

--rate puts a tbf qdisc on both veth ends. Its bucket holds 4 ms at the
rate (at least two full-size frames) and its queue 5 ms more, so the limit
shows as drops rather than as added latency. --latency or --queue makes the
queue longer, as tc-tbf's latency and limit do: --latency 100ms holds 100 ms
at the rate beyond the bucket (--burst), the bufferbloat of a home router.
--one-way b shapes b's egress only (the client's sending to the server in
a), --one-way a only a's; the other way runs at the veth's speed. In a mesh
lab --latency, --queue and --burst size every limited link's tbf.`,
		Example: `  wirespeed lab up
  wirespeed lab up --name jumbo --mtu 9000 --features tso=off,gro=on
  wirespeed lab up --rate 100mbit
  wirespeed lab up --name bloat --rate 20mbit --burst 16K --latency 100ms
  wirespeed lab up --name upload --rate 50mbit --one-way b --queue 64K
  wirespeed lab up --name vms --hosts 3 --host-rate h3=100mbit --features tso=off`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			if fl.Changed("hosts") {
				mcfg, err := f.meshConfig(fl.Changed("ipv4"), fl.Changed("ipv6"))
				if err != nil {
					return err
				}
				return upMesh(cmd.Context(), e, mcfg, f.server, f.port)
			}
			if len(f.hostRates) > 0 {
				return usagef("--host-rate is for a mesh lab: add --hosts N")
			}
			cfg, err := f.config()
			if err != nil {
				return err
			}
			if err := f.shaping(&cfg); err != nil {
				return err
			}
			if isMesh(cfg.Name) {
				return fmt.Errorf("%w: a mesh lab called %s exists; pick another --name or remove it with wirespeed lab down --name %s", lab.ErrExists, cfg.Name, cfg.Name)
			}
			l, err := lab.Up(cmd.Context(), cfg)
			if err != nil {
				return labErr(err)
			}
			if f.server {
				if _, err := startLabServer(cmd.Context(), l, f.port); err != nil {
					if rerr := lab.Remove(l.Name); rerr != nil {
						err = errors.Join(err, fmt.Errorf("remove the lab: %w", rerr))
					}
					return err
				}
			}
			report.Lab(e.stdout, labStatus(l))
			if !cfg.Queue.IsZero() {
				printQueues(e, l)
			}
			if f.server {
				fmt.Fprintf(e.stdout, "run the client in side b with: wirespeed lab run --name %s -- [run flags]\n", l.Name)
			}
			fmt.Fprintf(e.stdout, "run a command inside with: wirespeed lab exec --name %s --side a -- COMMAND\n", l.Name)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.name, "name", lab.DefaultName, "lab name: the namespaces are wst-NAME-a and wst-NAME-b")
	fl.IntVar(&f.mtu, "mtu", 0, "MTU of both veth ends (0: the kernel's 1500)")
	fl.StringVar(&f.rate, "rate", "", "rate limit on both ends in bits/s, like 1gbit or 100M (empty: none)")
	fl.StringVar(&f.latency, "latency", "", "the tbf's queue as `DURATION` at the rate, like 100ms (tc's latency: rate x it + burst)")
	fl.StringVar(&f.queue, "queue", "", "the tbf's queue in `BYTES`, like 64K (tc's limit; not with --latency)")
	fl.StringVar(&f.burst, "burst", "", "the tbf's bucket in `BYTES`, like 16K (tc's burst; default 4 ms at the rate)")
	fl.StringVar(&f.oneWay, "one-way", "", "shape one `SIDE`'s egress only: a (server to client) or b (client to server)")
	fl.StringVar(&f.features, "features", "", "offload settings for both ends, like tso=off,gso=off,gro=on")
	fl.StringVar(&f.ipv4, "ipv4", lab.DefaultIPv4.String(), "private IPv4 subnet of the link; a gets the first address, b the second")
	fl.StringVar(&f.ipv6, "ipv6", lab.DefaultIPv6.String(), "unique local IPv6 subnet of the link")
	fl.BoolVar(&f.server, "server", true, "start wirespeed serve in side a (--server=false for none); lab down stops it")
	fl.IntVar(&f.port, "port", server.DefaultPort, "port of the server in side a")
	fl.IntVar(&f.hosts, "hosts", 0, fmt.Sprintf("make a mesh lab of this many hosts h1..hN on one bridge, a server in each (2 to %d; mesh subnets %s and %s unless --ipv4/--ipv6)", lab.MaxMeshHosts, lab.DefaultMeshIPv4, lab.DefaultMeshIPv6))
	fl.StringArrayVar(&f.hostRates, "host-rate", nil, "rate limit on one mesh host's link, like h3=100mbit (repeatable; overrides --rate for that host)")
	return cmd
}

func (f *labUpFlags) config() (lab.Config, error) {
	cfg := lab.Config{Name: f.name, MTU: f.mtu}
	if err := lab.CheckName(f.name); err != nil {
		return cfg, usagef("--name: %v", err)
	}
	if f.rate != "" {
		r, err := lab.ParseRate(f.rate)
		if err != nil {
			return cfg, usagef("--rate: %v", err)
		}
		cfg.RateBitsPerSecond = r
	}
	if f.features != "" {
		settings, err := netconf.ParseSettings(f.features)
		if err != nil {
			return cfg, usagef("--features: %v", err)
		}
		cfg.Features = map[string]bool{}
		for _, st := range settings {
			if st.Name == "mtu" {
				return cfg, usagef("--features %q: set the MTU with --mtu", f.features)
			}
			cfg.Features[st.Name] = st.On
		}
	}
	var err error
	if cfg.IPv4, err = netip.ParsePrefix(f.ipv4); err != nil {
		return cfg, usagef("--ipv4 %q: write a subnet like %s", f.ipv4, lab.DefaultIPv4)
	}
	if cfg.IPv6, err = netip.ParsePrefix(f.ipv6); err != nil {
		return cfg, usagef("--ipv6 %q: write a subnet like %s", f.ipv6, lab.DefaultIPv6)
	}
	return cfg, nil
}

// shaping adds the two-host lab's tbf queue and one-way shaping to cfg.
func (f *labUpFlags) shaping(cfg *lab.Config) error {
	q, err := f.tbfQueue(cfg.RateBitsPerSecond)
	if err != nil {
		return err
	}
	cfg.Queue = q
	switch f.oneWay {
	case "":
	case string(lab.A), string(lab.B):
		if cfg.RateBitsPerSecond == 0 {
			return usagef("--one-way %s needs --rate: it says which side's egress the rate limits", f.oneWay)
		}
		cfg.OneWay = lab.HostName(f.oneWay)
	default:
		return usagef("--one-way %q: use a (shape a's egress: server to client) or b (b's: client to server)", f.oneWay)
	}
	return nil
}

// tbfQueue reads --latency, --queue and --burst, which size the tbf of
// a lab limited to rate bits/s (0: none, in which case they are refused);
// their checks against the rate and MTU are lab's (Queue.Size).
func (f *labUpFlags) tbfQueue(rate uint64) (lab.Queue, error) {
	var q lab.Queue
	if f.latency != "" {
		d, err := units.ParseDuration(f.latency)
		if err != nil || d <= 0 {
			return q, usagef("--latency %q: write the time the queue holds at the rate, like 100ms", f.latency)
		}
		q.Latency = d
	}
	for _, b := range []struct {
		flag, val string
		n         *uint32
	}{{"queue", f.queue, &q.LimitBytes}, {"burst", f.burst, &q.BurstBytes}} {
		if b.val == "" {
			continue
		}
		n, err := units.ParseBytes(b.val)
		if err != nil || n <= 0 || n > math.MaxUint32 {
			return q, usagef("--%s %q: write bytes from 1 to 4G, like 64K", b.flag, b.val)
		}
		*b.n = uint32(n)
	}
	if q.Latency > 0 && q.LimitBytes > 0 {
		return q, usagef("--latency and --queue both size the tbf's queue: give one")
	}
	if !q.IsZero() && rate == 0 {
		return q, usagef("--latency, --queue and --burst size a rate limit's tbf: add --rate (or --host-rate in a mesh lab)")
	}
	if !q.IsZero() {
		if _, _, _, err := q.Size(rate, f.mtu); err != nil {
			return q, usagef("%v", err)
		}
	}
	return q, nil
}

// queueSized reports whether a tbf of l has a queue other than the one
// --rate alone makes (lab.TBF's): one lab up --latency, --queue or --burst
// sized, which lab status then shows.
func queueSized(l *lab.Lab) bool {
	for _, h := range []lab.Host{l.A, l.B} {
		if h.RateBitsPerSecond == 0 {
			continue
		}
		if _, _, limit := lab.TBF(h.RateBitsPerSecond, l.MTU); h.QueueBytes != limit {
			return true
		}
	}
	return false
}

// printQueues says the queue of each tbf of l, as the kernel holds it:
// what --latency, --queue and --burst made.
func printQueues(e *env, l *lab.Lab) {
	for _, h := range []lab.Host{l.A, l.B} {
		if h.RateBitsPerSecond > 0 {
			ms := float64(h.QueueBytes) * 8 / float64(h.RateBitsPerSecond) * 1e3
			fmt.Fprintf(e.stdout, "  queue:  tbf on %s (%s): %d bytes, %.0f ms at %s\n", h.Dev, h.Name, h.QueueBytes, ms,
				units.FormatBits(float64(h.RateBitsPerSecond)))
		}
	}
}

// labErr adds what to do to a permission error.
func labErr(err error) error {
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("%w; labs need root (CAP_SYS_ADMIN and CAP_NET_ADMIN)", err)
	}
	return err
}

func newLabDownCmd(e *env) *cobra.Command {
	var (
		name string
		all  bool
	)
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Remove a lab",
		Long: `Remove a lab: its server, its veth pair and both namespaces. Removing a lab that does not
exist, or what is left of a half-made one, is not an error. A process still
running inside a namespace keeps it alive, without its link, until it ends.

--name also removes a mesh lab of that name (lab up --hosts), with the
servers in its hosts.

--all removes the labs this user made (through sudo: the user sudo ran
for), as lab up recorded; another user's lab, or one with no record of
who made it, is left up and named, and --name removes it.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			names := []string{name}
			if all {
				var err error
				if names, err = ownLabs(e, lab.CurrentOwner()); err != nil {
					return err
				}
			} else if err := lab.CheckName(name); err != nil {
				return usagef("--name: %v", err)
			}
			for _, n := range names {
				if err := lab.Remove(n); err != nil {
					return labErr(err)
				}
				fmt.Fprintf(e.stdout, "lab %s is down\n", n)
			}
			if !all {
				// A mesh lab of that name, with the servers in its hosts.
				if err := lab.RemoveMesh(name); err != nil {
					return labErr(err)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", lab.DefaultName, "lab to remove")
	cmd.Flags().BoolVar(&all, "all", false, "remove every lab this user made (another user's labs stay, and are named)")
	return cmd
}

// ownLabs lists the labs that exist and returns those me made, saying on
// stderr which it leaves and whose they are.
func ownLabs(e *env, me lab.Owner) ([]string, error) {
	names, err := lab.List()
	if err != nil {
		return nil, err
	}
	var mine []string
	for _, n := range names {
		o, err := lab.LoadOwner(n)
		switch {
		case err != nil:
			fmt.Fprintf(e.stderr, "lab %s left up: %v; remove it with wirespeed lab down --name %s\n", n, err, n)
		case o == nil:
			fmt.Fprintf(e.stderr, "lab %s left up: no record of who made it; remove it with wirespeed lab down --name %s\n", n, n)
		case o.UID != me.UID:
			fmt.Fprintf(e.stderr, "lab %s left up: it is %s's, made %s; remove it with wirespeed lab down --name %s\n", n, o, o.Created.Format(time.DateTime), n)
		default:
			mine = append(mine, n)
		}
	}
	return mine, nil
}

func newLabStatusCmd(e *env) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the labs that exist, with their addresses, MTU, rate and offloads",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var names []string
			if name != "" {
				if err := lab.CheckName(name); err != nil {
					return usagef("--name: %v", err)
				}
				names = []string{name}
			} else {
				var err error
				if names, err = lab.List(); err != nil {
					return err
				}
			}
			var meshes []string
			if name != "" {
				if isMesh(name) {
					meshes = []string{name}
					if _, err := lab.Load(name); errors.Is(err, lab.ErrNotFound) {
						names = nil
					}
				}
			} else {
				var err error
				if meshes, err = lab.ListMeshes(); err != nil {
					return err
				}
			}
			if len(names) == 0 && len(meshes) == 0 {
				fmt.Fprintln(e.stdout, "no labs; make one with wirespeed lab up")
				return nil
			}
			for _, n := range meshes {
				m, err := lab.LoadMesh(n)
				if err != nil {
					report.Lab(e.stdout, report.LabStatus{Name: n, Error: err.Error()})
					continue
				}
				printMesh(e, m)
			}
			for _, n := range names {
				owner := ""
				if o, err := lab.LoadOwner(n); err == nil && o != nil {
					owner = o.String()
				}
				l, err := lab.Load(n)
				if err != nil {
					if name != "" {
						return labErr(err)
					}
					st := report.LabStatus{Name: n, Owner: owner, Error: err.Error()}
					if lab.Unreadable(err) {
						st.Error, st.Unreadable = "", "reading it needs root (CAP_SYS_ADMIN)"
					}
					report.Lab(e.stdout, st)
					continue
				}
				st := labStatus(l)
				st.Owner = owner
				report.Lab(e.stdout, st)
				if queueSized(l) {
					printQueues(e, l)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "show only this lab")
	return cmd
}

// labExecIn finds side in the lab called name: a or b of a two-host lab,
// a host of a mesh lab. It returns what starts a command there and the
// namespace's name; an error names the sides the lab has.
func labExecIn(name, side string) (func(*exec.Cmd) error, string, error) {
	if isMesh(name) {
		m, err := lab.LoadMesh(name)
		if err != nil {
			return nil, "", labErr(err)
		}
		i, err := m.HostIndex(side)
		if err != nil {
			return nil, "", usagef("--side: %v", err)
		}
		return func(c *exec.Cmd) error { return m.Start(i, c) }, m.Hosts[i].Netns, nil
	}
	s, err := lab.ParseHostName(side)
	if err != nil {
		if strings.HasPrefix(side, "h") {
			return nil, "", usagef("--side: %v: lab %s is not a mesh lab, whose hosts are h1 ... hN (lab up --hosts N makes one)", err, name)
		}
		return nil, "", usagef("--side: %v", err)
	}
	l, err := lab.Load(name)
	if err != nil {
		return nil, "", labErr(err)
	}
	return func(c *exec.Cmd) error { return l.Start(s, c) }, l.Host(s).Netns, nil
}

// labStatus describes l for report.Lab, with each end's offloads as far
// as they can be read.
func labStatus(l *lab.Lab) report.LabStatus {
	st := report.LabStatus{Name: l.Name, MTU: l.MTU, RateBitsPerSecond: l.RateBitsPerSecond}
	// Shaped one way (lab up --one-way), each side shows its own rate.
	perHost := l.A.RateBitsPerSecond != l.B.RateBitsPerSecond
	if perHost {
		st.RateBitsPerSecond = 0
	}
	for _, h := range []lab.Host{l.A, l.B} {
		lh := report.LabHost{Name: string(h.Name), Netns: h.Netns, Dev: h.Dev,
			IPv4: addrString(h.IPv4), IPv6: addrString(h.IPv6), Offloads: h.Offloads()}
		if perHost {
			lh.RateBitsPerSecond = h.RateBitsPerSecond
		}
		st.Hosts = append(st.Hosts, lh)
	}
	st.Server = labServerStatus(l.Name)
	return st
}

func addrString(a netip.Addr) string {
	if !a.IsValid() {
		return "-"
	}
	return a.String()
}

func newLabExecCmd(e *env) *cobra.Command {
	var name, side string
	cmd := &cobra.Command{
		Use:   "exec --side a|b|hN -- COMMAND [ARGS...]",
		Short: "Run a command inside one side of a lab, or one host of a mesh lab",
		Long: `Run a command inside the network namespace of one side of a lab (a or b), or
of one host of a mesh lab (h1 ... hN), with this terminal's input and output.
The exit status is the command's: wirespeed exits 1 when it fails. Unlike
"ip netns exec", /sys is not remounted, so /sys/class/net still shows the
host's interfaces; wirespeed itself reads interfaces through netlink and is
not affected.`,
		Example: `  wirespeed lab exec --side a -- wirespeed env --dev wst-a
  wirespeed lab exec --side b -- wirespeed run 10.77.0.1 --psk-file /run/wirespeed/labs/lab.key -l 5
  wirespeed lab exec --name vms --side h2 -- ping -c 3 10.77.1.3`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("lab exec needs a command after --, like: wirespeed lab exec --side a -- wirespeed serve")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if side == "" {
				return usagef("lab exec needs --side a or --side b (in a mesh lab, a host: --side h1)")
			}
			if err := lab.CheckName(name); err != nil {
				return usagef("--name: %v", err)
			}
			start, netnsName, err := labExecIn(name, side)
			if err != nil {
				return err
			}
			c := exec.CommandContext(cmd.Context(), args[0], args[1:]...)
			c.Stdin, c.Stdout, c.Stderr = os.Stdin, e.stdout, e.stderr
			// On SIGINT or SIGTERM the command gets SIGTERM and 5 s to end.
			c.Cancel = func() error { return c.Process.Signal(syscall.SIGTERM) }
			c.WaitDelay = 5 * time.Second
			if err := start(c); err != nil {
				return fmt.Errorf("start %s in %s: %w", args[0], netnsName, err)
			}
			if err := c.Wait(); err != nil {
				return fmt.Errorf("%s in %s: %w", args[0], netnsName, err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&name, "name", lab.DefaultName, "lab to run in")
	fl.StringVar(&side, "side", "", "side to run on: a or b, or a mesh lab's host, h1 ... hN")
	return cmd
}
