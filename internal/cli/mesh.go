package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"wirespeed/internal/client"
	"wirespeed/internal/mesh"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
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
  wirespeed mesh --peers-dns wirespeed.wirespeed.svc.cluster.local --psk-file /etc/wirespeed/psk \
      --every 15m`,
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

// mesher measures rounds of a mesh.
type mesher struct {
	e        *env
	f        *meshFlags
	plan     mesh.Plan
	measure  mesh.Measure
	port     int
	portSet  bool
	resolver mesh.Resolver
	sinks    report.Sinks // every round's document
}

func runMesh(ctx context.Context, e *env, f *meshFlags, portSet bool) (err error) {
	t, err := f.run.buildSpec()
	if err != nil {
		return err
	}
	if err := f.run.useArchive(ctx, e); err != nil {
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
	cfg := client.Config{IPVersion: t.IPVersion, Tool: version(), Hostname: e.hostname, Logger: e.log, ProcRoot: f.run.measure.procRoot, Security: sec,
		ConnectTimeout: f.run.connectTimeout, BindAddr: t.BindIP(), BindDev: t.BindDev}
	m := &mesher{e: e, f: f, port: f.run.port, portSet: portSet, resolver: e.resolver,
		plan:    mesh.Plan{Spec: t, Repeat: rep, Concurrency: f.concurrency, Tool: tool()},
		measure: mesh.PairMeasure(cfg, t, rep)}
	if m.resolver == nil {
		m.resolver = net.DefaultResolver
	}
	// Check what can be checked before the first round: the peers, the
	// pairs and --local, when they do not come from DNS.
	if len(f.peers) > 0 {
		if _, err := m.peers(ctx); err != nil {
			return err
		}
	}

	m.sinks = f.run.sinks(e.stdout, report.TextOptions{})
	defer func() {
		if cerr := m.sinks.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
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
			if err := m.show(doc); err != nil {
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
func (m *mesher) status(doc *result.MeshDocument) error {
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

// show emits a round's document: the matrix (or JSON) to stdout, and
// the -o file.
func (m *mesher) show(doc *result.MeshDocument) error {
	return m.sinks.Emit(report.Doc{Mesh: doc})
}

// peers returns this round's peers, with the one that is this host
// marked, and the pairs to measure: --peers (usage errors) or a lookup
// of --peers-dns.
func (m *mesher) peers(ctx context.Context) ([]result.MeshPeer, error) {
	var peers []result.MeshPeer
	if m.f.peersDNS != "" {
		name, port, err := parseTarget(m.f.peersDNS, m.port, m.portSet)
		if err != nil {
			return nil, err
		}
		if peers, err = mesh.LookupPeers(ctx, m.resolver, name, port, m.plan.Spec.IPVersion); err != nil {
			return nil, err
		}
	} else {
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
			peers = append(peers, result.MeshPeer{Name: p, Address: net.JoinHostPort(host, strconv.Itoa(port))})
		}
		switch {
		case len(peers) < 2:
			return nil, usagef("a mesh needs at least 2 peers, got %d", len(peers))
		case len(peers) > mesh.MaxPeers:
			return nil, usagef("a mesh of %d peers is over the limit of %d", len(peers), mesh.MaxPeers)
		}
	}
	pairs, err := mesh.ParsePairs(peers, m.f.pairs)
	if err != nil {
		return nil, usageError{err}
	}
	if err := mesh.MarkLocal(ctx, m.resolver, peers, m.f.local); err != nil {
		return nil, usageError{err}
	}
	m.plan.Peers, m.plan.Pairs = peers, pairs
	return peers, nil
}

// round measures one round of the mesh and returns its document; an
// error without a document means the peers could not be found.
func (m *mesher) round(ctx context.Context, round int) (*result.MeshDocument, error) {
	if _, err := m.peers(ctx); err != nil {
		return nil, err
	}
	plan := m.plan
	if m.f.every > 0 {
		plan.Round = round
	}
	return mesh.Run(ctx, plan, mesh.Options{Measure: m.measure, Observer: meshProgress{m.e.stderr}}), nil
}

// meshProgress writes a line per pair to stderr.
type meshProgress struct{ w io.Writer }

func (o meshProgress) Measured(k, n int, p result.MeshPair) {
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
	fmt.Fprintf(o.w, "mesh: %d/%d %s -> %s (%s): %s\n", k, n, p.Source, p.Destination, p.Via, what)
}
