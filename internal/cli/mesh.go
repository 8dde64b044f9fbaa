package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/iterate"
	"wirespeed/internal/report"
	"wirespeed/internal/run"
	"wirespeed/internal/spec"
	"wirespeed/internal/units"
)

// meshFlags are the flags of `wirespeed mesh`: every flag of run, and
// where the peers come from, which pairs, how many at once, how often.
type meshFlags struct {
	run         runFlags
	peers       []string
	peersDNS    string
	pairs       []string
	concurrency int
	every       time.Duration
	local       string
}

// MaxMeshPeers bounds a mesh: n peers make n*(n-1) pairs.
const MaxMeshPeers = 256

// Resolver looks up a host's addresses; net.DefaultResolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

func newMeshCmd(e *env) *cobra.Command {
	f := &meshFlags{run: runFlags{spec: spec.Default()}}
	cmd := &cobra.Command{
		Use:   "mesh --peers HOST[:PORT],HOST[:PORT],... [flags]",
		Short: "Measure every ordered pair of a set of wirespeed servers and show the matrix",
		Long: `Measure every ordered pair of peers (or the --pairs given), one test at a
time unless --concurrency says otherwise, and print a matrix: rows are the
senders and columns the receivers of a stream test's throughput, or the
clients and servers of a request/response test's p50 latency.

A pair whose source is this host is measured from this process. Any other
pair is relayed: wirespeed connects to the source's server and asks it to
run the test against the destination. The source must be started with
--allow-relay, --relay-peers covering the destination, and --psk-file;
give the same key here with --psk-file.

--peers-dns takes the peers from a name's A and AAAA records, such as a
Kubernetes headless service's. --every repeats the mesh until interrupted
(Ctrl-C or SIGTERM end it with status 0), looking the name up again each
round; the relaying servers export the latest figures of their pairs on
serve --metrics-listen.

Every flag of run applies to each pair, except --tradeoff and a --payload
FILE (which the relaying servers do not have).`,
		Example: `  wirespeed mesh --peers host1,host2,host3 --psk-file key -l 5
  wirespeed mesh --peers a,b,c --pairs a:b,b:c --psk-file key -t TCP_RR
  wirespeed mesh --peers-dns wirespeed.wirespeed.svc.cluster.local --psk-file /etc/wirespeed/psk --every 15m`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.run.changed = cmd.Flags().Changed
			return runMesh(cmd.Context(), e, f, cmd.Flags().Changed("port"))
		},
	}
	addRunFlags(cmd, &f.run)
	fl := cmd.Flags()
	fl.StringSliceVar(&f.peers, "peers", nil, "the servers, `HOST[:PORT]`, comma-separated or repeated")
	fl.StringVar(&f.peersDNS, "peers-dns", "", "take the peers from the A and AAAA records of `NAME[:PORT]` (a headless service), looked up again every round")
	fl.StringSliceVar(&f.pairs, "pairs", nil, "measure only these ordered pairs, `SRC:DST` of --peers names, comma-separated (default: every ordered pair)")
	fl.IntVar(&f.concurrency, "concurrency", 1, "pairs measured at once; never two on one peer at a time")
	fl.Var(durationValue{&f.every}, "every", "repeat the mesh every `DURATION` until interrupted, writing each round's document (0: once)")
	fl.StringVar(&f.local, "local", "auto", "the peer that is this host, measured from this process: a --peers name, none to relay every pair, or auto (the peer whose address is this host's)")
	return cmd
}

// meshPeer is one peer of a round, and whether it is this host.
type meshPeer = run.MeshPeer

// mesher measures rounds of a mesh.
type mesher struct {
	e        *env
	f        *meshFlags
	t        spec.Test
	rep      spec.Repeat
	sec      client.Security
	port     int
	portSet  bool
	resolver Resolver
}

func runMesh(ctx context.Context, e *env, f *meshFlags, portSet bool) error {
	t, err := f.run.buildSpec()
	if err != nil {
		return err
	}
	switch {
	case f.run.tradeoff:
		return usagef("mesh runs one test per pair: drop --tradeoff (run the mesh with -t TCP_STREAM, then -t TCP_MAERTS)")
	case t.Payload.Kind == spec.PayloadFile:
		return usagef("--payload FILE cannot travel to relaying servers: use random or zeros")
	case (len(f.peers) == 0) == (f.peersDNS == ""):
		return usagef("give the peers with --peers HOST,HOST,... or --peers-dns NAME (one of the two)")
	case f.concurrency < 1:
		return usagef("--concurrency %d must be at least 1", f.concurrency)
	case f.every < 0:
		return usagef("--every %v must be 0 or more", f.every)
	}
	rep, err := f.run.measure.repeat()
	if err != nil {
		return err
	}
	sec, err := f.run.sec.security(false)
	if err != nil {
		return err
	}
	if f.run.port < 1 || f.run.port > 65535 {
		return usagef("port %d must be between 1 and 65535", f.run.port)
	}
	m := &mesher{e: e, f: f, t: t, rep: rep, sec: sec, port: f.run.port, portSet: portSet, resolver: e.resolver}
	if m.resolver == nil {
		m.resolver = net.DefaultResolver
	}
	// Check what can be checked before the first round: the peers, the
	// pairs and --local, when they do not come from DNS.
	if len(f.peers) > 0 {
		peers, err := m.staticPeers()
		if err != nil {
			return err
		}
		if _, err := m.pairsOf(peers); err != nil {
			return err
		}
		if err := m.markLocal(ctx, peers); err != nil {
			return err
		}
	}

	next := time.Now()
	for round := 1; ; round++ {
		doc, err := m.round(ctx, round)
		if err != nil && f.every == 0 {
			return err
		}
		if err != nil {
			// A failed lookup should not end a mesh that runs for days.
			fmt.Fprintf(e.stderr, "wirespeed: mesh round %d: %v\n", round, err)
		}
		if doc != nil {
			if err := m.show(doc, round); err != nil {
				return err
			}
		}
		if f.every == 0 {
			return m.status(doc)
		}
		if ctx.Err() != nil {
			return nil // Ctrl-C or SIGTERM is how a repeated mesh ends
		}
		next = next.Add(f.every)
		if wait := time.Until(next); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return nil
			}
		} else {
			fmt.Fprintf(e.stderr, "wirespeed: mesh round %d took longer than --every %v; starting the next at once\n", round, f.every)
			next = time.Now()
		}
	}
}

// status is the exit status of a single round: an error when a pair
// failed or the round was interrupted.
func (m *mesher) status(doc *run.MeshDocument) error {
	if doc.Interrupted {
		return errInterrupted
	}
	failed := 0
	for _, p := range doc.Pairs {
		if p.Result == nil {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d pairs failed; the matrix shows what was measured", failed, len(doc.Pairs))
	}
	return nil
}

// show writes a round's document: the matrix (or JSON) to stdout, and
// the -o file.
func (m *mesher) show(doc *run.MeshDocument, round int) error {
	f := &m.f.run
	if f.json {
		if err := report.MeshJSON(m.e.stdout, *doc); err != nil {
			return err
		}
	} else {
		if round > 1 {
			fmt.Fprintln(m.e.stdout)
		}
		report.MeshText(m.e.stdout, *doc)
	}
	if f.output != "" {
		return report.WriteMeshFile(f.output, *doc)
	}
	return nil
}

// staticPeers parses --peers.
func (m *mesher) staticPeers() ([]meshPeer, error) {
	var peers []meshPeer
	seen := map[string]bool{}
	for _, p := range m.f.peers {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		host, port, err := parseTarget(p, m.port, m.portSet)
		if err != nil {
			return nil, err
		}
		if seen[p] {
			return nil, usagef("--peers names %s twice", p)
		}
		seen[p] = true
		peers = append(peers, meshPeer{Name: p, Address: net.JoinHostPort(host, strconv.Itoa(port))})
	}
	return peers, checkPeerCount(peers)
}

func checkPeerCount(peers []meshPeer) error {
	switch {
	case len(peers) < 2:
		return usagef("a mesh needs at least 2 peers, got %d", len(peers))
	case len(peers) > MaxMeshPeers:
		return usagef("a mesh of %d peers is over the limit of %d", len(peers), MaxMeshPeers)
	}
	return nil
}

// dnsPeers looks up --peers-dns: every address is a peer, named by the
// address, in address order so that rounds line up.
func (m *mesher) dnsPeers(ctx context.Context) ([]meshPeer, error) {
	name, port, err := parseTarget(m.f.peersDNS, m.port, m.portSet)
	if err != nil {
		return nil, err
	}
	network := "ip"
	switch m.t.IPVersion {
	case 4:
		network = "ip4"
	case 6:
		network = "ip6"
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addrs, err := m.resolver.LookupNetIP(lctx, network, name)
	if err != nil {
		return nil, fmt.Errorf("--peers-dns %s: %w", name, err)
	}
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	slices.SortFunc(addrs, netip.Addr.Compare)
	addrs = slices.Compact(addrs)
	var peers []meshPeer
	for _, a := range addrs {
		peers = append(peers, meshPeer{Name: a.String(), Address: net.JoinHostPort(a.String(), strconv.Itoa(port))})
	}
	if len(peers) < 2 {
		return nil, fmt.Errorf("--peers-dns %s: %d address(es) found, a mesh needs at least 2 (are the servers running and ready?)", name, len(peers))
	}
	if len(peers) > MaxMeshPeers {
		return nil, fmt.Errorf("--peers-dns %s: %d addresses is over the limit of %d peers", name, len(peers), MaxMeshPeers)
	}
	return peers, nil
}

// meshPair is one ordered pair to measure.
type meshPair struct{ src, dst int }

// pairsOf returns the ordered pairs to measure: --pairs, or every one in
// the order of the peers (a to every other, then b, ...).
func (m *mesher) pairsOf(peers []meshPeer) ([]meshPair, error) {
	idx := map[string]int{}
	for i, p := range peers {
		idx[p.Name] = i
	}
	var pairs []meshPair
	if len(m.f.pairs) == 0 {
		for i := range peers {
			for j := range peers {
				if i != j {
					pairs = append(pairs, meshPair{i, j})
				}
			}
		}
		return pairs, nil
	}
	seen := map[meshPair]bool{}
	for _, s := range m.f.pairs {
		p, ok := splitPair(strings.TrimSpace(s), idx)
		if !ok {
			return nil, usagef("--pairs %q: write SRC:DST with two different names from the peers (%s)", s, peerNames(peers))
		}
		if !seen[p] {
			seen[p] = true
			pairs = append(pairs, p)
		}
	}
	return pairs, nil
}

// splitPair splits SRC:DST at the colon that leaves a peer name on both
// sides, so names with ports or IPv6 addresses work too.
func splitPair(s string, idx map[string]int) (meshPair, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		a, okA := idx[s[:i]]
		b, okB := idx[s[i+1:]]
		if okA && okB && a != b {
			return meshPair{a, b}, true
		}
	}
	return meshPair{}, false
}

func peerNames(peers []meshPeer) string {
	var names []string
	for _, p := range peers {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// markLocal sets Local on the peer that is this host (--local).
func (m *mesher) markLocal(ctx context.Context, peers []meshPeer) error {
	switch m.f.local {
	case "none":
		return nil
	case "auto", "":
	default:
		for i := range peers {
			if peers[i].Name == m.f.local {
				peers[i].Local = true
				return nil
			}
		}
		return usagef("--local %q is not one of the peers (%s); use a peer's name, none or auto", m.f.local, peerNames(peers))
	}
	mine := localAddrs()
	for i := range peers {
		host, _, err := net.SplitHostPort(peers[i].Address)
		if err != nil {
			continue
		}
		addrs := []netip.Addr{}
		if a, err := netip.ParseAddr(host); err == nil {
			addrs = append(addrs, a)
		} else {
			lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			addrs, _ = m.resolver.LookupNetIP(lctx, "ip", host)
			cancel()
		}
		for _, a := range addrs {
			if mine[a.Unmap()] {
				peers[i].Local = true
			}
		}
	}
	return nil
}

// localAddrs returns this host's interface addresses.
func localAddrs() map[netip.Addr]bool {
	out := map[netip.Addr]bool{}
	as, err := net.InterfaceAddrs()
	if err != nil {
		return out
	}
	for _, a := range as {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out[p.Addr().Unmap()] = true
		}
	}
	return out
}

// round measures one round of the mesh and returns its document; an
// error without a document means the peers could not be found.
func (m *mesher) round(ctx context.Context, round int) (*run.MeshDocument, error) {
	var peers []meshPeer
	var err error
	if m.f.peersDNS != "" {
		peers, err = m.dnsPeers(ctx)
	} else {
		peers, err = m.staticPeers()
	}
	if err != nil {
		return nil, err
	}
	pairs, err := m.pairsOf(peers)
	if err != nil {
		return nil, err
	}
	if err := m.markLocal(ctx, peers); err != nil {
		return nil, err
	}
	doc := &run.MeshDocument{
		Schema:  run.MeshSchema,
		Tool:    tool(),
		Command: "mesh",
		Spec:    m.t,
		Started: time.Now(),
		Peers:   peers,
	}
	if m.rep.Repeats() {
		r := m.rep
		doc.Repeat = &r
	}
	if m.f.every > 0 {
		doc.Round = round
	}
	doc.Pairs = m.measureAll(ctx, peers, pairs)
	if ctx.Err() != nil {
		doc.Interrupted = true
	}
	doc.BuildMatrix()
	return doc, nil
}

// measureAll measures the pairs, up to --concurrency at once but never
// two on one peer at a time, so that a server with --max-tests 1 is not
// asked twice and no peer's figures are shared with another test. It
// returns the pairs in the order asked. An interrupt stops it: pairs not
// started are listed with an error.
func (m *mesher) measureAll(ctx context.Context, peers []meshPeer, pairs []meshPair) []run.MeshPair {
	out := make([]run.MeshPair, len(pairs))
	pending := make([]int, len(pairs))
	for i := range pending {
		pending[i] = i
	}
	busy := make([]bool, len(peers))
	done := make(chan int)
	running, finished := 0, 0
	for len(pending) > 0 || running > 0 {
		if running < m.f.concurrency && ctx.Err() == nil {
			k := slices.IndexFunc(pending, func(i int) bool { return !busy[pairs[i].src] && !busy[pairs[i].dst] })
			if k >= 0 {
				i := pending[k]
				pending = slices.Delete(pending, k, k+1)
				p := pairs[i]
				busy[p.src], busy[p.dst] = true, true
				running++
				go func() {
					out[i] = m.measurePair(ctx, peers[p.src], peers[p.dst])
					done <- i
				}()
				continue
			}
		}
		if running == 0 {
			break // interrupted with pairs left
		}
		i := <-done
		running--
		finished++
		busy[pairs[i].src], busy[pairs[i].dst] = false, false
		m.progress(finished, len(pairs), out[i])
	}
	for _, i := range pending {
		p := pairs[i]
		out[i] = run.MeshPair{Source: peers[p.src].Name, Destination: peers[p.dst].Name, Via: via(peers[p.src]), Error: run.MeshNotMeasured}
	}
	return out
}

func via(src meshPeer) string {
	if src.Local {
		return run.ViaDirect
	}
	return run.ViaRelay
}

// progress writes a line per pair to stderr.
func (m *mesher) progress(k, n int, p run.MeshPair) {
	what := "failed: " + p.Error
	if r := p.Result; r != nil {
		if r.Spec.Kind.RR() && r.Summary.RRSummary != nil {
			what = fmt.Sprintf("p50 %.1f us, %.0f transactions/s", r.Summary.Latency.P50, r.Summary.TransactionsPerSecond)
		} else {
			what = units.FormatBits(r.Summary.BitsPerSecond)
		}
		if r.Interrupted {
			what += " (interrupted)"
		}
	}
	fmt.Fprintf(m.e.stderr, "mesh: %d/%d %s -> %s (%s): %s\n", k, n, p.Source, p.Destination, p.Via, what)
}

// busyRetries and busyWait: a pair whose server is busy (another client's
// test, or a previous round's still ending) is tried again a little later.
const (
	busyRetries = 2
	busyWait    = 2 * time.Second
)

// measurePair measures one pair, directly when the source is this host,
// through the source's server otherwise.
func (m *mesher) measurePair(ctx context.Context, src, dst meshPeer) run.MeshPair {
	mp := run.MeshPair{Source: src.Name, Destination: dst.Name, Via: via(src)}
	var res run.Result
	var err error
	for attempt := 0; ; attempt++ {
		res, err = m.measure(ctx, src, dst)
		if !errors.Is(err, control.ErrBusy) || attempt >= busyRetries || ctx.Err() != nil {
			break
		}
		select {
		case <-time.After(busyWait):
		case <-ctx.Done():
		}
	}
	if len(res.Directions) > 0 {
		res.Local.Address, res.Remote.Address = src.Address, dst.Address
		mp.Result = &res
	}
	if err != nil {
		mp.Error = err.Error()
	}
	return mp
}

func (m *mesher) measure(ctx context.Context, src, dst meshPeer) (run.Result, error) {
	cfg := client.Config{Addr: dst.Address, IPVersion: m.t.IPVersion, Tool: version(), Hostname: m.e.hostname, Logger: m.e.log, ProcRoot: m.f.run.measure.procRoot}
	cfg.Security = m.sec
	if src.Local {
		c, err := client.Dial(ctx, cfg)
		if err != nil {
			return run.Result{}, err
		}
		defer c.Close()
		return c.Iterate(ctx, m.t, m.rep, nil)
	}
	cfg.Addr = src.Address
	c, err := client.Dial(ctx, cfg)
	if err != nil {
		return run.Result{}, err
	}
	defer c.Close()
	req := control.RelayRequest{Peer: dst.Address, Spec: m.t, Source: src.Name, Destination: dst.Name}
	return iterate.Run(ctx, m.rep, func(ctx context.Context) (run.Result, error) {
		return c.Relay(ctx, req)
	}, nil)
}
