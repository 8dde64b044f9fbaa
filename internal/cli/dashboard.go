package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"wirespeed/internal/dashboard"
	"wirespeed/internal/units"
)

type dashboardFlags struct {
	target     string
	listen     string
	tlsCert    string
	tlsKey     string
	tokenFile  string
	authFile   string
	since      string
	thresholds []string
	alpha      float64
}

func newDashboardCmd(e *env) *cobra.Command {
	f := &dashboardFlags{}
	cmd := &cobra.Command{
		Use:   "dashboard --archive TARGET [flags]",
		Short: "Serve the archive to a browser: the mesh grid and each pair's history",
		Long: `Serve a read-only web dashboard of the archive: the mesh grid (sources
down, destinations across, each cell split for the two directions, the
latest figure coloured by the pair's own history: steady, improved,
regressed, failing, no data) and each pair's page (history chart with
confidence bars and change points, what changed in the environment, the
points, each point's JSON, and the compare verdict of two points). New
results appear without a reload.

It listens on loopback unless told otherwise; on any other address it
needs --tls-cert and --tls-key and --token-file or --auth-file.`,
		Example: `  wirespeed dashboard --archive results.db
  wirespeed dashboard --archive results.db --threshold TCP_STREAM=900M,500M
  wirespeed dashboard --archive postgres://ws@db/ws --listen :8575 --tls-cert c.pem \
      --tls-key k.pem --auth-file users`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDashboard(cmd.Context(), e, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.target, "archive", "", "the archive `TARGET`: a SQLite FILE or a postgres:// URL (default $"+ArchiveEnv+")")
	fl.StringVar(&f.listen, "listen", "127.0.0.1:8575", "`HOST:PORT` to serve on; other than loopback needs TLS and authentication")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate `FILE`: serve HTTPS")
	fl.StringVar(&f.tlsKey, "tls-key", "", "PEM private key `FILE` of --tls-cert")
	fl.StringVar(&f.tokenFile, "token-file", "", "`FILE` holding a token browsers give as the basic-auth password (or a Bearer header)")
	fl.StringVar(&f.authFile, "auth-file", "", "`FILE` holding USER:PASSWORD for basic authentication")
	fl.StringVar(&f.since, "since", "", "show only results of the last `AGE` (30d, 12h)")
	fl.StringArrayVar(&f.thresholds, "threshold", nil, "fixed `TEST=WARN,CRIT` limits (TCP_STREAM=900M,500M in bit/s; TCP_RR=200,1000 in us): worse than WARN is regressed, than CRIT failing")
	fl.Float64Var(&f.alpha, "alpha", 0.01, "significance level of the change points")
	return cmd
}

// parseThreshold reads TEST=WARN,CRIT: rates for throughput tests,
// microseconds for request/response tests.
func parseThreshold(s string) (string, dashboard.Threshold, error) {
	test, lims, ok := strings.Cut(s, "=")
	w, c, ok2 := strings.Cut(lims, ",")
	if !ok || !ok2 || test == "" {
		return "", dashboard.Threshold{}, fmt.Errorf("%q: give TEST=WARN,CRIT, such as TCP_STREAM=900M,500M", s)
	}
	test = strings.ToUpper(test)
	parse := func(v string) (float64, error) {
		if strings.HasSuffix(test, "_RR") {
			return strconv.ParseFloat(strings.TrimSuffix(v, "us"), 64)
		}
		return units.ParseRate(v)
	}
	var t dashboard.Threshold
	var err error
	if t.Warn, err = parse(w); err != nil {
		return "", t, fmt.Errorf("%q: warning limit %q: %v", s, w, err)
	}
	if t.Crit, err = parse(c); err != nil {
		return "", t, fmt.Errorf("%q: critical limit %q: %v", s, c, err)
	}
	return test, t, nil
}

func readSecretFile(flag, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", usagef("%s: %v", flag, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", usagef("%s %s is empty", flag, path)
	}
	return s, nil
}

func runDashboard(ctx context.Context, e *env, f *dashboardFlags) error {
	o := dashboard.Options{Alpha: f.alpha, Thresholds: map[string]dashboard.Threshold{}}
	if f.alpha <= 0 || f.alpha >= 1 {
		return usagef("--alpha %v: give a level between 0 and 1, such as 0.01", f.alpha)
	}
	for _, s := range f.thresholds {
		test, t, err := parseThreshold(s)
		if err != nil {
			return usagef("--threshold %v", err)
		}
		o.Thresholds[test] = t
	}
	if f.since != "" {
		at, err := parseSince(f.since, e.now())
		if err != nil {
			return usagef("--since: %v", err)
		}
		o.Window = e.now().Sub(at)
	}
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return usagef("--listen %q: give HOST:PORT, such as 127.0.0.1:8575", f.listen)
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usagef("--tls-cert and --tls-key go together")
	}
	if f.tokenFile != "" {
		if o.Token, err = readSecretFile("--token-file", f.tokenFile); err != nil {
			return err
		}
		if err := dashboard.CheckToken(o.Token); err != nil {
			return usagef("--token-file %s: %v", f.tokenFile, err)
		}
	}
	if f.authFile != "" {
		s, err := readSecretFile("--auth-file", f.authFile)
		if err != nil {
			return err
		}
		var ok bool
		if o.User, o.Password, ok = strings.Cut(s, ":"); !ok || o.User == "" || o.Password == "" {
			return usagef("--auth-file %s: write USER:PASSWORD on one line", f.authFile)
		}
	}
	ip := net.ParseIP(host)
	loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
	if !loopback && (f.tlsCert == "" || (o.Token == "" && o.User == "")) {
		return usagef("--listen %s is not loopback: the dashboard then needs --tls-cert/--tls-key and --token-file or --auth-file", f.listen)
	}
	var tlsCfg *tls.Config
	if f.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return usagef("--tls-cert/--tls-key: %v", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	}
	a, err := openArchiveToRead(ctx, e, f.target)
	if err != nil {
		return err
	}
	defer a.Close()
	o.Archive = a
	o.Logger = e.log
	h, err := dashboard.New(o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	scheme := "http"
	if tlsCfg != nil {
		scheme = "https"
	}
	fmt.Fprintf(e.stderr, "wirespeed: dashboard of %s on %s://%s/\n", a.Target(), scheme, ln.Addr())
	return h.Serve(ctx, ln, tlsCfg, nil)
}
