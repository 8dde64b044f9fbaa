package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"wirespeed/internal/record"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"wirespeed/internal/client"
	"wirespeed/internal/exporter"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// DefaultExporterListen is where `wirespeed exporter` listens by default.
const DefaultExporterListen = ":9575"

type exporterFlags struct {
	config        string
	check         bool
	listen        string
	allowTargets  []string
	maxLength     time.Duration
	maxConcurrent int
	queueSize     int
	maxWaiting    int
	timeoutOffset time.Duration
	logFormat     string
	logLevel      string
	archive       string
	archiveEvery  time.Duration
	archiveMiB    int64
}

func newExporterCmd(e *env) *cobra.Command {
	f := &exporterFlags{}
	cmd := &cobra.Command{
		Use:   "exporter --config FILE",
		Short: "Serve Prometheus probes: /probe?target=HOST&module=NAME runs a module's test against a wirespeed server",
		Long: `Serve wirespeed tests to Prometheus in blackbox_exporter's multi-target
pattern: Prometheus scrapes /probe?target=HOST[:PORT]&module=NAME, the
exporter runs the module's test against the wirespeed server at HOST and
answers with probe_success, probe_duration_seconds, probe_ip_protocol and
the result's figures (throughput per direction, retransmits, RTT, UDP loss
and jitter, RR latency, both sides' CPU and service demand, what limited
it). As blackbox_exporter, it answers HTTP 400 to an unknown module or a
missing target (the scrape's configuration is wrong); a probe that could
not run is HTTP 200 with probe_success 0 and the reason in its log
(debug=true).

Modules live in the --config file, a YAML mapping whose keys are the long
flag names of wirespeed run:

  modules:
    tcp:
      test: TCP_STREAM
    fq_250m:
      fq-rate: 250M
      length: 5s

A module without length runs as long as the scrape allows (its
scrape_timeout less --timeout-offset and a set-up allowance, at most run's
default 10 s and --max-length); one with a length is refused when the scrape
cannot give it that long. Probes of one target wait in line (a server runs
one test at a time, --queue-size waiting); probes of different targets run
side by side, up to --max-concurrent.

SIGHUP or POST /-/reload reads the file again; a file with a mistake leaves
the modules in force as they were. The exporter makes whoever can reach it
send traffic to the targets it is given: restrict them with --allow-targets
and keep the listen address private (docs/exporter.md).`,
		Example: `  wirespeed exporter --config /etc/wirespeed/probes.yml
  wirespeed exporter --config probes.yml --config.check
  wirespeed exporter --config probes.yml --listen 127.0.0.1:9575 --allow-targets 10.0.0.0/8,fd00::/8
  curl 'http://localhost:9575/probe?target=server1&module=tcp&debug=true'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runExporter(cmd.Context(), e, f)
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.config, "config", "", "the modules `FILE` (YAML; keys are wirespeed run's long flag names)")
	fl.BoolVar(&f.check, "config.check", false, "check the modules file, print its modules and exit (0 when it is good)")
	fl.StringVar(&f.listen, "listen", DefaultExporterListen, "HOST:PORT or :PORT to serve /probe, /metrics and the / page on")
	fl.StringSliceVar(&f.allowTargets, "allow-targets", nil, "networks a target's address must be in, as CIDRs or addresses, comma-separated (default: any address; see docs/exporter.md)")
	f.maxLength = time.Minute
	fl.Var(durationValue{&f.maxLength}, "max-length", "longest test (warm-up and length) a probe may run; 0 for no limit but the scrape's timeout")
	fl.IntVar(&f.maxConcurrent, "max-concurrent", exporter.DefaultMaxConcurrent, "probes running at once over all targets")
	fl.IntVar(&f.queueSize, "queue-size", exporter.DefaultQueueSize, "probes of one target that may wait while one runs; one more is answered probe_success 0")
	fl.IntVar(&f.maxWaiting, "max-waiting", exporter.DefaultMaxWaiting, "probes that may wait over all targets; one more is answered probe_success 0")
	f.timeoutOffset = exporter.DefaultTimeoutOffset
	fl.Var(durationValue{&f.timeoutOffset}, "timeout-offset", "taken from the scrape's timeout (X-Prometheus-Scrape-Timeout-Seconds) so that the answer arrives in time")
	fl.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error (debug logs every probe)")
	registerArchiveFlag(fl, &f.archive)
	f.archiveEvery = exporter.DefaultArchiveEvery
	fl.Var(durationValue{&f.archiveEvery}, "archive-every", "with --archive, the shortest time between two archived results of one server; the probes between are answered, not archived")
	fl.Int64Var(&f.archiveMiB, "archive-mib-per-hour", exporter.DefaultArchiveBytesPerHour>>20, "with --archive, the MiB of results' JSON archived an hour over all servers; past it results are not archived until it refills")
	return cmd
}

func runExporter(ctx context.Context, e *env, f *exporterFlags) error {
	log, err := newLogger(e, f.logFormat, f.logLevel)
	if err != nil {
		return err
	}
	if f.config == "" {
		return usagef("--config FILE is required: the modules to probe with (see wirespeed exporter --help)")
	}
	if f.check {
		c, err := exporter.Load(f.config, moduleBuilder(e))
		if err != nil {
			return configError(err)
		}
		fmt.Fprintf(e.stdout, "%s: %d modules\n", f.config, len(c.Modules))
		for _, n := range c.Names() {
			p := c.Modules[n].Plan
			length := p.Test.Duration.String()
			if !p.LengthSet {
				length = "up to " + length + ", fitted to the scrape"
			}
			fmt.Fprintf(e.stdout, "  %s: %s, %s\n", n, p.Test.Kind, length)
		}
		return nil
	}
	allow, err := parseAllowTargets(f.allowTargets)
	if err != nil {
		return err
	}
	switch {
	case f.maxLength < 0:
		return usagef("--max-length %v must be 0 (no limit) or more", f.maxLength)
	case f.maxConcurrent < 1:
		return usagef("--max-concurrent %d must be at least 1", f.maxConcurrent)
	case f.queueSize < 0:
		return usagef("--queue-size %d must be 0 or more", f.queueSize)
	case f.maxWaiting < 1:
		return usagef("--max-waiting %d must be at least 1", f.maxWaiting)
	case f.timeoutOffset < 0:
		return usagef("--timeout-offset %v must be 0 or more", f.timeoutOffset)
	case f.archiveEvery < time.Second:
		return usagef("--archive-every %v must be at least 1s", f.archiveEvery)
	case f.archiveMiB < 1 || f.archiveMiB > 1<<20:
		return usagef("--archive-mib-per-hour %d must be between 1 and %d", f.archiveMiB, 1<<20)
	}
	addr, err := exporterListenAddr(f.listen)
	if err != nil {
		return err
	}
	archiveAt, err := archiveTarget(e, f.archive)
	if err != nil {
		return err
	}
	var keep func(context.Context, result.Document) error
	if archiveAt != nil {
		keep = func(ctx context.Context, doc result.Document) error {
			return keepInArchive(ctx, e, archiveAt, record.Doc{Results: &doc})
		}
	}
	x, err := exporter.New(exporter.Options{
		ConfigPath: f.config, Build: moduleBuilder(e),
		AllowTargets: allow, MaxLength: f.maxLength,
		MaxConcurrent: f.maxConcurrent, QueueSize: f.queueSize, MaxWaiting: f.maxWaiting, TimeoutOffset: f.timeoutOffset,
		Tool: tool(), Logger: log, Keep: keep, ArchiveEvery: f.archiveEvery, ArchiveBytesPerHour: f.archiveMiB << 20,
	})
	if err != nil {
		return configError(err)
	}
	if len(allow) == 0 {
		log.Warn("no --allow-targets: anyone who can reach the exporter can make it send test traffic to any address; list the networks of your servers")
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := x.Server(slog.NewLogLogger(log.Handler(), slog.LevelWarn))
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if err := x.Reload(); err != nil {
					log.Error("reload on SIGHUP refused; the previous modules stay in force", "err", err)
				} else {
					log.Info("reloaded on SIGHUP", "modules", len(x.Config().Modules))
				}
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(x.Listener(ln)) }()
	log.Info("listening", "addr", ln.Addr().String(), "modules", strings.Join(x.Config().Names(), ","), "version", version())
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	// Probes running are cut short: their scrapes would time out anyway.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	log.Info("stopped")
	return nil
}

// configError is a mistake in the modules file: exit status 1 like any
// bad file, also when the key's flag would have been a usage error on
// run's command line.
func configError(err error) error {
	var ue usageError
	if errors.As(err, &ue) {
		return errors.New(err.Error())
	}
	return err
}

// exporterListenAddr accepts HOST:PORT or :PORT.
func exporterListenAddr(s string) (string, error) {
	if _, _, err := net.SplitHostPort(s); err != nil {
		return "", usagef("--listen %q: write HOST:PORT or :PORT (%s by default)", s, DefaultExporterListen)
	}
	return s, nil
}

// parseAllowTargets reads --allow-targets: CIDRs, or single addresses.
func parseAllowTargets(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			if p != p.Masked() {
				return nil, usagef("--allow-targets %q has host bits set: did you mean %s?", s, p.Masked())
			}
			out = append(out, p)
			continue
		}
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		return nil, usagef("--allow-targets %q is neither a CIDR (10.0.0.0/8, fd00::/8) nor an address", s)
	}
	return out, nil
}

// refusedModuleKeys are run flags a module may not set, and why.
var refusedModuleKeys = map[string]string{
	"json":       "a probe answers with metrics; its results document is at /result?id=N",
	"output":     "a probe writes no file; its results document is at /result?id=N",
	"tradeoff":   "a module runs one test: make a module for each direction",
	"iterations": "a probe is one run: Prometheus's schedule repeats it",
	"confidence": "a probe is one run: Prometheus's schedule repeats it",
	"iperf3":     "the exporter probes wirespeed servers only",
	"archive":    "the exporter's own --archive keeps every probe's result",
}

// moduleBuilder builds a module's test from its keys through `wirespeed
// run`'s own flag definitions and buildSpec, so a key means in a module
// what its flag means on run's command line, defaults and checks
// included.
func moduleBuilder(e *env) exporter.Builder {
	return func(settings []exporter.Setting) (exporter.Plan, error) {
		f, fl, err := moduleFlags(settings)
		if err != nil {
			return exporter.Plan{}, err
		}
		t, err := f.buildSpec()
		if err != nil {
			return exporter.Plan{}, keyOf(err, settings, fl.Lookup)
		}
		sec, err := f.sec.security(false)
		if err != nil {
			return exporter.Plan{}, keyOf(err, settings, fl.Lookup)
		}
		procRoot, connectTimeout := f.measure.procRoot, f.connectTimeout
		measure := func(ctx context.Context, addr string, t spec.Test, log *slog.Logger) (result.Result, error) {
			c, err := client.Dial(ctx, client.Config{Addr: addr, IPVersion: t.IPVersion, Tool: version(), Hostname: e.hostname,
				Logger: log, ProcRoot: procRoot, ConnectTimeout: connectTimeout,
				BindAddr: t.BindIP(), BindDev: t.BindDev, Security: sec})
			if err != nil {
				// The exporter tells its client one sentence for all of
				// these, and logs this.
				return result.Result{}, fmt.Errorf("%w: %w", exporter.ErrNotReached, err)
			}
			defer c.Close()
			res, err := c.Run(ctx, t)
			res.Remote.Address = addr
			return res, err
		}
		return exporter.Plan{Test: t, Port: f.port, Measure: measure,
			LengthSet: fl.Changed("length") || fl.Changed("bytes") || fl.Changed("blocks")}, nil
	}
}

// moduleFlags sets a module's keys on a fresh copy of run's flags.
func moduleFlags(settings []exporter.Setting) (*runFlags, *pflag.FlagSet, error) {
	f := &runFlags{spec: spec.Default()}
	cmd := &cobra.Command{Use: "module"}
	addRunFlags(cmd, f)
	fl := cmd.Flags()
	f.changed = fl.Changed
	for _, s := range settings {
		if why, refused := refusedModuleKeys[s.Key]; refused {
			return nil, nil, &exporter.KeyError{Key: s.Key, Err: errors.New(why)}
		}
		if fl.Lookup(s.Key) == nil {
			msg := "not a flag of wirespeed run: a module's keys are run's long flag names (see wirespeed run --help)"
			if len(s.Key) == 1 {
				if sf := fl.ShorthandLookup(s.Key); sf != nil {
					msg = fmt.Sprintf("-%s is a short flag: write its long name, %s", s.Key, sf.Name)
				}
			}
			return nil, nil, &exporter.KeyError{Key: s.Key, Err: errors.New(msg)}
		}
		if err := fl.Set(s.Key, s.Value); err != nil {
			return nil, nil, &exporter.KeyError{Key: s.Key, Err: err}
		}
	}
	return f, fl, nil
}

// keyOf names the key a refusal of the whole test is about: the key whose
// flag the message names, or else the first key that, added to those
// before it, makes run refuse the test.
func keyOf(err error, settings []exporter.Setting, lookup func(string) *pflag.Flag) error {
	for _, s := range settings {
		names := []string{"--" + s.Key}
		if fl := lookup(s.Key); fl != nil && fl.Shorthand != "" {
			names = append(names, "-"+fl.Shorthand+" ")
		}
		for _, n := range names {
			if strings.Contains(err.Error(), n) {
				return &exporter.KeyError{Key: s.Key, Err: err}
			}
		}
	}
	for i := range settings {
		f, _, ferr := moduleFlags(settings[:i+1])
		if ferr != nil {
			break
		}
		if _, berr := f.buildSpec(); berr != nil {
			return &exporter.KeyError{Key: settings[i].Key, Err: err}
		}
		if _, serr := f.sec.security(false); serr != nil {
			return &exporter.KeyError{Key: settings[i].Key, Err: err}
		}
	}
	return err
}
