package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"wirespeed/internal/measure"
	"wirespeed/internal/server"
)

type serveFlags struct {
	listen    string
	maxTests  int
	logFormat string
	logLevel  string
	procRoot  string
	sec       serveSecurityFlags
	iperf3    iperf3ServeFlags // serve_iperf3.go
	relay     serveRelayFlags  // serve_relay.go
	// allowNetconf lets authenticated clients change this host's devices.
	allowNetconf bool
	oneOff       bool // -1: serve one test, then exit
}

func newServeCmd(e *env) *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the wirespeed server",
		Long: fmt.Sprintf(`Run the wirespeed server. It listens on one TCP port (default %d) for both
control and data connections, on IPv4 and IPv6 unless --listen names an
address, and serves one test at a time unless --max-tests allows more; a
client that asks while the server is full is told it is busy.

Logs go to stderr, one line per test. SIGINT or SIGTERM stops the server:
it accepts nothing new, lets running tests go on for up to --shutdown-timeout,
then cuts them short (their clients still get what was measured) and exits 0.
A second signal ends it at once.

Left running on a reachable host, require a key (--psk-file), TLS for the
control connection (--tls-cert, --tls-key) or both, and keep the limits
(--max-duration, --max-parallel, --max-conns-per-addr, ...) to what the host
can give; docs/security.md says what each protects against.`, server.DefaultPort),
		Example: `  wirespeed serve
  wirespeed serve --listen 127.0.0.1:7575 --max-tests 4
  wirespeed serve --listen [::1] --log-format json
  wirespeed serve -1                     # one test, then exit
  wirespeed serve --psk-file /etc/wirespeed/key --metrics-listen 127.0.0.1:9575`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger(e, f.logFormat, f.logLevel)
			if err != nil {
				return err
			}
			addr, err := listenAddr(f.listen)
			if err != nil {
				return err
			}
			if f.maxTests < 1 {
				return usagef("--max-tests %d must be at least 1", f.maxTests)
			}
			cfg := server.Config{
				MaxTests: f.maxTests,
				Tool:     version(),
				Hostname: e.hostname,
				Logger:   log,
				ProcRoot: f.procRoot,

				AllowNetconf: f.allowNetconf,
				OneOff:       f.oneOff,
			}
			if err := f.sec.configure(&cfg); err != nil {
				return err
			}
			if cfg.Speaks, err = f.iperf3.speaks(); err != nil {
				return err
			}
			if cfg.Relay, err = f.relay.config(cfg.Auth); err != nil {
				return err
			}
			ln, err := listenTCP(cmd.Context(), addr)
			if err != nil {
				return fmt.Errorf("listen on %s: %w", addr, err)
			}
			log.Info("listening", "addr", ln.Addr().String(), "max_tests", f.maxTests, "version", version())
			f.relay.logStart(log, cfg.Relay)
			if cfg.AllowNetconf && cfg.Auth.PSK == nil {
				log.Warn("--allow-netconf has no effect without --psk-file: only clients that proved a pre-shared key may change this host's devices, and this server has none; add --psk-file FILE")
			}
			stopMetrics, err := f.sec.start(cmd.Context(), cfg, log)
			if err != nil {
				ln.Close()
				return err
			}
			defer stopMetrics()
			srv := server.New(cfg)
			err = srv.Serve(cmd.Context(), ln)
			log.Info("stopped")
			return err
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.listen, "listen", fmt.Sprintf(":%d", server.DefaultPort), "HOST:PORT, HOST or :PORT to listen on (IPv6 in brackets)")
	fl.IntVar(&f.maxTests, "max-tests", 1, "tests to run at once; further clients are told the server is busy")
	fl.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fl.StringVar(&f.procRoot, "proc-root", measure.DefaultProcRoot, "where procfs is mounted, for the CPU figures clients ask for")
	fl.BoolVarP(&f.oneOff, "one-off", "1", false, "serve one client's test (with the iterations it runs on its connection, or one iperf3 test), then exit 0 (iperf3's -1)")
	f.sec.register(fl)
	addIperf3ServeFlags(cmd, &f.iperf3)
	f.relay.register(fl)
	fl.BoolVar(&f.allowNetconf, "allow-netconf", false, "let authenticated clients change offload features and MTU of this host's devices for wirespeed matrix --remote-dev; every change is restored when the client's session ends")
	return cmd
}

// listenAddr completes HOST, :PORT or HOST:PORT with the default port.
func listenAddr(s string) (string, error) {
	if s == "" {
		return fmt.Sprintf(":%d", server.DefaultPort), nil
	}
	if h, p, err := net.SplitHostPort(s); err == nil {
		if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 65535 {
			return "", usagef("--listen %q: port %q must be a number between 0 and 65535", s, p)
		}
		return net.JoinHostPort(h, p), nil
	}
	h := strings.Trim(s, "[]")
	if strings.Contains(h, ":") && net.ParseIP(h) == nil {
		return "", usagef("--listen %q: write HOST:PORT, HOST or :PORT", s)
	}
	return net.JoinHostPort(h, strconv.Itoa(server.DefaultPort)), nil
}

func newLogger(e *env, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(e.stderr, opts)), nil
	case "json":
		jopts := *opts
		jopts.ReplaceAttr = jsonDuration
		return slog.New(slog.NewJSONHandler(e.stderr, &jopts)), nil
	}
	return nil, usagef("--log-format %q: use text or json", format)
}

// jsonDuration writes a duration in a JSON log as seconds under a key that
// says so ("duration_s":2.034): slog's JSON handler writes a bare count of
// nanoseconds ("duration":2034000000), a number without its unit. The
// text format's "duration=2.034s" carries its unit already.
func jsonDuration(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.Float64(a.Key+"_s", a.Value.Duration().Seconds())
	}
	return a
}

// listenTCP listens for wirespeed's control and data connections with
// plain TCP: Go listens with MPTCP by default where the kernel has it, and
// a measurement must not depend on whether the kernel's MPTCP fallback
// path stands between the socket and TCP (accept(2) on it, for one,
// ignores a receive timeout).
func listenTCP(ctx context.Context, addr string) (net.Listener, error) {
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	return lc.Listen(ctx, "tcp", addr)
}
