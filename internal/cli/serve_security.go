package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/spf13/pflag"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/server"
	"wirespeed/internal/units"
)

// serveSecurityFlags are the flags of `wirespeed serve` that make it safe
// to leave running: authentication, TLS, limits, shutdown and metrics.
type serveSecurityFlags struct {
	pskFile          string
	tlsCert, tlsKey  string
	maxDuration      time.Duration
	maxParallel      int
	maxDSCP          int
	maxUDPRate       string
	maxConnsPerAddr  int
	maxHandshakeRate float64
	maxTestMemory    int
	maxMemory        int
	handshakeTimeout time.Duration
	maxFrame         int
	shutdownTimeout  time.Duration
	metricsListen    string
}

// minMaxFrame keeps --max-frame large enough for a hello and a spec.
const minMaxFrame = 4 << 10

func (f *serveSecurityFlags) register(fl *pflag.FlagSet) {
	f.maxDuration = server.DefaultMaxDuration
	f.handshakeTimeout = 5 * time.Second
	f.maxFrame = control.DefaultMaxFrame
	f.shutdownTimeout = 10 * time.Second
	f.maxTestMemory = server.DefaultMaxTestMemory
	f.maxMemory = server.DefaultMaxMemory
	fl.StringVar(&f.pskFile, "psk-file", "", "require clients to prove knowledge of the pre-shared key in `FILE` (at least 16 bytes; make one with openssl rand -hex 32)")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate `FILE`: control connections must use TLS (data connections stay plain TCP)")
	fl.StringVar(&f.tlsKey, "tls-key", "", "PEM private key `FILE` of --tls-cert")
	fl.Var(durationValue{&f.maxDuration}, "max-duration", "longest test a client may ask for, warm-up included")
	fl.IntVar(&f.maxParallel, "max-parallel", server.DefaultMaxParallel, "most parallel streams per direction a client may ask for (-P)")
	fl.StringVar(&f.maxUDPRate, "max-udp-rate", "1G", "highest `rate` in bits/s a UDP test may make the server send (500M, 10G)")
	fl.IntVar(&f.maxConnsPerAddr, "max-conns-per-addr", server.DefaultMaxConnsPerAddr, "authenticated control connections one IP address (an IPv6 /64) may hold at once")
	fl.Float64Var(&f.maxHandshakeRate, "max-handshake-rate", server.DefaultMaxHandshakeRate, "control connections per second one IP address (an IPv6 /64) may start before authenticating, in bursts of twice as many")
	fl.IntVar(&f.maxDSCP, "max-dscp", server.DefaultMaxDSCP, "highest DSCP a client may have the server's packets carry (--tos, --dscp); 0 allows none, the default keeps CS6 and CS7 (48-63) for the network's own control traffic")
	fl.Var(bytesValue{&f.maxTestMemory}, "max-test-memory", "most buffer memory one test may make the server allocate (streams times message sizes)")
	fl.Var(bytesValue{&f.maxMemory}, "max-memory", "most buffer memory the running tests may hold together; a test that would go over is told the server is busy")
	fl.Var(durationValue{&f.handshakeTimeout}, "handshake-timeout", "time a new connection has to identify itself and authenticate")
	fl.Var(bytesValue{&f.maxFrame}, "max-frame", "largest control message accepted (a --payload file travels in one)")
	fl.Var(durationValue{&f.shutdownTimeout}, "shutdown-timeout", "on SIGTERM or SIGINT, how long running tests may go on before they are cut short")
	fl.StringVar(&f.metricsListen, "metrics-listen", "", "serve Prometheus metrics at http://`ADDR`/metrics (e.g. 127.0.0.1:9575)")
}

// configure checks the flags, loads the key and certificate and puts
// them into cfg: its authentication, limits, timeouts and metrics. Every
// problem is a usage error, reported before the server listens.
func (f *serveSecurityFlags) configure(cfg *server.Config) error {
	switch {
	case f.maxDuration <= 0:
		return usagef("--max-duration %v must be more than 0", f.maxDuration)
	case f.maxParallel < 1:
		return usagef("--max-parallel %d must be at least 1", f.maxParallel)
	case f.maxConnsPerAddr < 1:
		return usagef("--max-conns-per-addr %d must be at least 1", f.maxConnsPerAddr)
	case !(f.maxHandshakeRate > 0):
		return usagef("--max-handshake-rate %v must be more than 0", f.maxHandshakeRate)
	case f.maxDSCP < 0 || f.maxDSCP > 63:
		return usagef("--max-dscp %d must be between 0 (none) and 63", f.maxDSCP)
	case f.maxTestMemory < 1:
		return usagef("--max-test-memory %d must be more than 0", f.maxTestMemory)
	case f.maxMemory < f.maxTestMemory:
		return usagef("--max-memory %s is less than --max-test-memory %s: no test of that size could run", units.FormatSize(int64(f.maxMemory)), units.FormatSize(int64(f.maxTestMemory)))
	case f.handshakeTimeout <= 0:
		return usagef("--handshake-timeout %v must be more than 0", f.handshakeTimeout)
	case f.maxFrame < minMaxFrame:
		return usagef("--max-frame %d is too small for the control messages: use at least %s", f.maxFrame, units.FormatSize(minMaxFrame))
	case f.shutdownTimeout < 0:
		return usagef("--shutdown-timeout %v must be 0 or more", f.shutdownTimeout)
	case (f.tlsCert == "") != (f.tlsKey == ""):
		return usagef("--tls-cert and --tls-key go together")
	}
	rate, err := units.ParseRate(f.maxUDPRate)
	if err != nil || rate <= 0 {
		return usagef("--max-udp-rate %q: use bits/s like 500M or 10G", f.maxUDPRate)
	}
	cfg.Admission = server.Admission{
		MaxDuration:             f.maxDuration,
		MaxParallel:             f.maxParallel,
		MaxUDPRateBitsPerSecond: rate,
		MaxConnsPerAddr:         f.maxConnsPerAddr,
		MaxHandshakeRate:        f.maxHandshakeRate,
		MaxTestMemory:           int64(f.maxTestMemory),
		MaxMemory:               int64(f.maxMemory),
		MaxDSCP:                 f.maxDSCP,
	}
	if f.maxDSCP == 0 {
		cfg.Admission.MaxDSCP = server.NoDSCP
	}
	cfg.HandshakeTimeout = f.handshakeTimeout
	cfg.MaxFrame = f.maxFrame
	cfg.ShutdownTimeout = f.shutdownTimeout
	cfg.Auth = server.Auth{}
	if f.pskFile != "" {
		if cfg.Auth.PSK, err = control.LoadKey(f.pskFile); err != nil {
			return usagef("--psk-file: %v", err)
		}
	}
	if f.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return usagef("--tls-cert/--tls-key: %v", err)
		}
		cfg.Auth.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	}
	if f.metricsListen != "" {
		cfg.Metrics = server.NewMetrics()
	}
	return nil
}

// start logs what protects the server and starts the metrics listener; the
// returned function stops it.
func (f *serveSecurityFlags) start(ctx context.Context, cfg server.Config, log *slog.Logger) (func(), error) {
	if cfg.Auth.TLS != nil {
		log.Info("control connections require TLS", "fingerprint", client.Fingerprint(cfg.Auth.TLS.Certificates[0].Certificate[0]))
	}
	if cfg.Auth.PSK != nil {
		log.Info("clients must prove the pre-shared key", "psk_file", f.pskFile)
	}
	if cfg.Metrics == nil {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", f.metricsListen)
	if err != nil {
		return nil, fmt.Errorf("--metrics-listen %s: %w", f.metricsListen, err)
	}
	log.Info("metrics listening", "addr", ln.Addr().String(), "path", "/metrics")
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := cfg.Metrics.Serve(mctx, ln); err != nil {
			log.Error("metrics stopped", "err", err)
		}
	}()
	return func() { cancel(); <-done }, nil
}

// runSecurityFlags are the flags of `wirespeed run` that authenticate the
// server and this client.
type runSecurityFlags struct {
	pskFile        string
	tlsCA          string
	tlsFingerprint string
}

func (f *runSecurityFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.pskFile, "psk-file", "", "prove knowledge of the pre-shared key in `FILE`, and require the server to prove it too")
	fl.StringVar(&f.tlsCA, "tls-ca", "", "use TLS on the control connection and verify the server's certificate with the PEM CA certificates in `FILE`")
	fl.StringVar(&f.tlsFingerprint, "tls-fingerprint", "", "use TLS on the control connection and accept only the server certificate with this SHA-256 `fingerprint` (hex, as serve logs it)")
}

// security checks the flags and loads the key and CA. embedded says the
// run uses the in-process server, which needs none of them.
func (f *runSecurityFlags) security(embedded bool) (client.Security, error) {
	var sec client.Security
	if f.pskFile == "" && f.tlsCA == "" && f.tlsFingerprint == "" {
		return sec, nil
	}
	if embedded {
		return sec, usagef("--psk-file, --tls-ca and --tls-fingerprint are for a remote server: give its HOST")
	}
	if f.tlsCA != "" && f.tlsFingerprint != "" {
		return sec, usagef("--tls-ca and --tls-fingerprint exclude each other: verify by CA or by pin")
	}
	var err error
	if f.pskFile != "" {
		if sec.PSK, err = control.LoadKey(f.pskFile); err != nil {
			return sec, usagef("--psk-file: %v", err)
		}
	}
	switch {
	case f.tlsCA != "":
		pem, err := os.ReadFile(f.tlsCA)
		if err != nil {
			return sec, usagef("--tls-ca: %v", err)
		}
		if sec.TLS, err = client.TLSConfigCA(pem); err != nil {
			return sec, usagef("--tls-ca %s: %v", f.tlsCA, err)
		}
	case f.tlsFingerprint != "":
		if sec.TLS, err = client.TLSConfigPinned(f.tlsFingerprint); err != nil {
			return sec, usagef("--tls-fingerprint: %v", err)
		}
	}
	return sec, nil
}
