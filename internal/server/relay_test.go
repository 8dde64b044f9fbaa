package server_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/report"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

// fakeResolver answers host names from a map.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	addrs, ok := f[host]
	if !ok {
		return nil, fmt.Errorf("lookup %s: no such host", host)
	}
	var out []netip.Addr
	for _, a := range addrs {
		if network == "ip" || (network == "ip4") == a.Is4() {
			out = append(out, a)
		}
	}
	return out, nil
}

func relayPeers(t *testing.T, entries ...string) server.RelayPeers {
	t.Helper()
	p, err := server.ParseRelayPeers(entries)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// gauge returns the value of the metric name whose labels include want,
// and whether there is one.
func gauge(t *testing.T, m *server.Metrics, name string, want map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, mt := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range mt.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for k, v := range want {
				if got[k] != v {
					continue next
				}
			}
			if g := mt.GetGauge(); g != nil {
				return g.GetValue(), true
			}
			return mt.GetCounter().GetValue(), true
		}
	}
	return 0, false
}

// TestRelay: a client asks server A to test against server B; A runs
// the test as B's client and sends the joined result back, with both
// servers' names in it, and exports the pair's figures.
func TestRelay(t *testing.T) {
	b := startServer(t, server.Config{Hostname: "server-b", Auth: server.Auth{PSK: testKey}})
	metrics := server.NewMetrics()
	a := startServer(t, server.Config{Hostname: "server-a",
		Auth: server.Auth{PSK: testKey}, Metrics: metrics,
		Relay: server.RelayConfig{Allow: true, Peers: relayPeers(t, "127.0.0.0/8")}})
	c := mustDial(t, client.Config{Addr: a.addr, Hostname: "requester", Security: client.Security{PSK: testKey}})

	for _, kind := range []spec.Kind{spec.TCPStream, spec.TCPRR} {
		t.Run(string(kind), func(t *testing.T) {
			res, err := c.Relay(context.Background(), control.RelayRequest{Peer: b.addr, Spec: shortSpec(kind, 1), Source: "a", Destination: "b"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Local.Hostname != "server-a" || res.Remote.Hostname != "server-b" || res.Remote.Address != b.addr {
				t.Errorf("local %+v remote %+v: want server-a measuring against server-b at %s", res.Local, res.Remote, b.addr)
			}
			if res.Interrupted || len(res.Directions) == 0 || len(res.Streams) == 0 {
				t.Fatalf("incomplete result: %+v", res)
			}
			labels := map[string]string{"source": "a", "destination": "b", "test": string(kind)}
			if kind == spec.TCPStream {
				if res.Summary.BitsPerSecond <= 0 {
					t.Errorf("throughput %v", res.Summary.BitsPerSecond)
				}
				if v, ok := gauge(t, metrics, "wirespeed_pair_throughput_bits_per_second", labels); !ok || v != res.Summary.BitsPerSecond {
					t.Errorf("pair gauge %v (present %v), want %v", v, ok, res.Summary.BitsPerSecond)
				}
			} else {
				if res.Summary.RRSummary == nil || res.Summary.Transactions == 0 {
					t.Fatalf("no transactions: %+v", res.Summary)
				}
				labels["quantile"] = "0.5"
				if v, ok := gauge(t, metrics, "wirespeed_pair_latency_seconds", labels); !ok || v != res.Summary.Latency.P50/1e6 {
					t.Errorf("p50 gauge %v (present %v), want %v", v, ok, res.Summary.Latency.P50/1e6)
				}
			}
			if v, ok := gauge(t, metrics, "wirespeed_pair_last_measured_timestamp_seconds", map[string]string{"source": "a", "test": string(kind)}); !ok || time.Since(time.Unix(int64(v), 0)) > time.Minute {
				t.Errorf("last measured %v (present %v)", v, ok)
			}
		})
	}
	if v, _ := gauge(t, metrics, "wirespeed_relays_total", map[string]string{"result": "ok"}); v != 2 {
		t.Errorf("wirespeed_relays_total{result=ok} = %v, want 2", v)
	}
	// Both servers logged the test: A its relay, B the test A ran.
	a.logs.waitLog(t, "relay done", "relay_to="+b.addr, "result=ok")
	b.logs.waitLog(t, "test done", "result=ok")
	// A session that relayed may run its own tests afterwards.
	if _, err := c.Run(context.Background(), shortSpec(spec.TCPStream, 1)); err != nil {
		t.Errorf("test after a relay: %v", err)
	}
}

// TestRelayRefused: a relay is refused without --allow-relay, toward a
// peer outside --relay-peers and on a server without a key (whose clients
// are not authenticated); the peer sees nothing, and the session goes on.
func TestRelayRefused(t *testing.T) {
	b := startServer(t, server.Config{Hostname: "server-b", Auth: server.Auth{PSK: testKey}})
	tests := []struct {
		name    string
		cfg     server.Config
		key     []byte
		peer    string
		wantErr error
		wantMsg string
		wantLog string
	}{
		{name: "no allow-relay", cfg: server.Config{Auth: server.Auth{PSK: testKey}},
			key: testKey, wantErr: control.ErrRelayRefused, wantMsg: "--allow-relay", wantLog: "reason=relay_not_allowed"},
		{name: "peer outside the list", cfg: server.Config{Auth: server.Auth{PSK: testKey},
			Relay: server.RelayConfig{Allow: true, Peers: relayPeers(t, "127.0.0.2/32", "10.0.0.0/8")}},
			key: testKey, wantErr: control.ErrRelayRefused, wantMsg: "not among this server's relay peers (serve --relay-peers 127.0.0.2,10.0.0.0/8)", wantLog: "reason=relay_peer_not_allowed"},
		{name: "host name resolving outside the list", cfg: server.Config{Auth: server.Auth{PSK: testKey},
			Relay: server.RelayConfig{Allow: true, Peers: relayPeers(t, "allowed.test"),
				Resolver: fakeResolver{"allowed.test": {netip.MustParseAddr("127.0.0.9")}, "other.test": {netip.MustParseAddr("127.0.0.1")}}}},
			key: testKey, peer: "other.test:" + port(b.addr), wantErr: control.ErrRelayRefused, wantMsg: "other.test:" + port(b.addr) + " (127.0.0.1) is not among", wantLog: "reason=relay_peer_not_allowed"},
		{name: "unauthenticated client", cfg: server.Config{Relay: server.RelayConfig{Allow: true, Peers: relayPeers(t, "127.0.0.0/8")}},
			wantErr: control.ErrAuth, wantMsg: "authenticated session", wantLog: "reason=relay_unauthenticated"},
		{name: "unspecified address", cfg: server.Config{Auth: server.Auth{PSK: testKey},
			Relay: server.RelayConfig{Allow: true, Peers: relayPeers(t, "0.0.0.0/0")}},
			key: testKey, peer: "0.0.0.0:" + port(b.addr), wantErr: control.ErrRelayRefused, wantMsg: "not among", wantLog: "reason=relay_peer_not_allowed"},
		{name: "relayed UDP over the rate limit", cfg: server.Config{Auth: server.Auth{PSK: testKey},
			Relay: server.RelayConfig{Allow: true, Peers: relayPeers(t, "127.0.0.0/8")}},
			key: testKey, wantErr: control.ErrLimit, wantMsg: "--max-udp-rate", wantLog: "reason=max_udp_rate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			metrics := server.NewMetrics()
			tt.cfg.Metrics = metrics
			a := startServer(t, tt.cfg)
			c := mustDial(t, client.Config{Addr: a.addr, Security: client.Security{PSK: tt.key}})
			peer := tt.peer
			if peer == "" {
				peer = b.addr
			}
			sp := shortSpec(spec.TCPStream, 1)
			if strings.Contains(tt.name, "UDP") {
				sp = shortSpec(spec.UDPStream, 1) // no -b: as fast as it can
				sp.SendSize = spec.DefaultUDPSize
			}
			_, err := c.Relay(context.Background(), control.RelayRequest{Peer: peer, Spec: sp})
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("got %v, want %v saying %q", err, tt.wantErr, tt.wantMsg)
			}
			a.logs.waitLog(t, "refused", tt.wantLog)
			// Counted: relay reasons apart, a limit with the tests'.
			reason := strings.TrimPrefix(tt.wantLog, "reason=")
			name := "wirespeed_relays_refused_total"
			if !strings.HasPrefix(reason, "relay_") {
				name = "wirespeed_tests_refused_total"
			}
			if v, _ := gauge(t, metrics, name, map[string]string{"reason": reason}); v != 1 {
				t.Errorf("%s{reason=%q} = %v, want 1", name, reason, v)
			}
			// The session goes on after a refusal.
			if _, err := c.Run(context.Background(), shortSpec(spec.TCPStream, 1)); err != nil {
				t.Errorf("test after a refused relay: %v", err)
			}
		})
	}
	if strings.Contains(b.logs.String(), "test done") || strings.Contains(b.logs.String(), "authentication") {
		t.Errorf("the peer heard from a refused relay:\n%s", b.logs.String())
	}
}

// TestRelayRefusesBind: a relayed test cannot make the relay bind where
// the client says (-B, --bind-dev, --cport), and the peer hears nothing.
func TestRelayRefusesBind(t *testing.T) {
	b := startServer(t, server.Config{Hostname: "server-b", Auth: server.Auth{PSK: testKey}})
	a := startServer(t, server.Config{Auth: server.Auth{PSK: testKey}, Relay: server.RelayConfig{Allow: true, Peers: relayPeers(t, "127.0.0.0/8")}})
	c := mustDial(t, client.Config{Addr: a.addr, Security: client.Security{PSK: testKey}})
	for _, mod := range []func(*spec.Test){
		func(sp *spec.Test) { sp.BindAddr = "127.0.0.2" },
		func(sp *spec.Test) { sp.BindDev = "lo" },
		func(sp *spec.Test) { sp.ClientPort = 5001 },
	} {
		sp := shortSpec(spec.TCPStream, 1)
		mod(&sp)
		_, err := c.Relay(context.Background(), control.RelayRequest{Peer: b.addr, Spec: sp})
		if !errors.Is(err, control.ErrInvalid) || !strings.Contains(err.Error(), "-B, --bind-dev, --cport") {
			t.Errorf("relay with %+v: %v, want an invalid test naming the options", sp, err)
		}
	}
	if strings.Contains(b.logs.String(), "test done") {
		t.Errorf("the peer heard from a refused relay:\n%s", b.logs.String())
	}
}

func port(addr string) string { return addr[strings.LastIndex(addr, ":")+1:] }

// TestRelayBeforeAuth: a client that has not proved the key cannot ask
// for a relay: the only message accepted before the proof is the proof.
func TestRelayBeforeAuth(t *testing.T) {
	b := startServer(t, server.Config{Auth: server.Auth{PSK: testKey}})
	a := startServer(t, server.Config{Auth: server.Auth{PSK: testKey},
		Relay: server.RelayConfig{Allow: true, Peers: relayPeers(t, "127.0.0.0/8")}})
	h := control.NewHello("test", "")
	h.Auth = &control.AuthHello{Scheme: control.AuthScheme, Nonce: control.NewNonce()}
	cc := rawConn(t, a.addr, "", h)
	if _, err := helloBack(t, cc); err != nil {
		t.Fatal(err)
	}
	if err := cc.Send(control.TypeRelay, control.RelayRequest{Peer: b.addr, Spec: shortSpec(spec.TCPStream, 1)}); err != nil {
		t.Fatal(err)
	}
	_, err := cc.Recv(5 * time.Second)
	if !errors.Is(err, control.ErrAuth) {
		t.Fatalf("relay before the proof: got %v, want an auth error", err)
	}
	if closed, _ := closedByServer(cc.NetConn(), 5*time.Second); !closed {
		t.Error("the server kept the connection open")
	}
	time.Sleep(100 * time.Millisecond)
	if strings.Contains(b.logs.String(), "test done") {
		t.Errorf("the peer ran a test:\n%s", b.logs.String())
	}
}

// TestRelayPeerRefuses: the peer's own refusal comes back with its code:
// here B has another key, so A cannot authenticate to it.
func TestRelayPeerRefuses(t *testing.T) {
	b := startServer(t, server.Config{Auth: server.Auth{PSK: []byte("another-key-of-server-b-0123456")}})
	a := startServer(t, server.Config{Auth: server.Auth{PSK: testKey},
		Relay: server.RelayConfig{Allow: true, Peers: relayPeers(t, "127.0.0.1")}})
	c := mustDial(t, client.Config{Addr: a.addr, Security: client.Security{PSK: testKey}})
	_, err := c.Relay(context.Background(), control.RelayRequest{Peer: b.addr, Spec: shortSpec(spec.TCPStream, 1)})
	if !errors.Is(err, control.ErrAuth) || !strings.Contains(err.Error(), "relay to "+b.addr) {
		t.Fatalf("got %v, want the peer's auth error", err)
	}
	a.logs.waitLog(t, "relay failed")

	// With the peer's key given for relays (serve --relay-psk-file), it works.
	a2 := startServer(t, server.Config{Auth: server.Auth{PSK: testKey},
		Relay: server.RelayConfig{Allow: true, Peers: relayPeers(t, "127.0.0.1"), PSK: []byte("another-key-of-server-b-0123456")}})
	c2 := mustDial(t, client.Config{Addr: a2.addr, Security: client.Security{PSK: testKey}})
	if _, err := c2.Relay(context.Background(), control.RelayRequest{Peer: b.addr, Spec: shortSpec(spec.TCPStream, 1)}); err != nil {
		t.Fatalf("relay with the peer's key: %v", err)
	}
}

// TestRelayInterrupted: the requester's interrupt stops the relayed test
// at once, and the partial result still comes back.
func TestRelayInterrupted(t *testing.T) {
	b := startServer(t, server.Config{Auth: server.Auth{PSK: testKey}})
	a := startServer(t, server.Config{Auth: server.Auth{PSK: testKey},
		Relay: server.RelayConfig{Allow: true, Peers: relayPeers(t, "127.0.0.1")}})
	c := mustDial(t, client.Config{Addr: a.addr, Security: client.Security{PSK: testKey}})
	sp := shortSpec(spec.TCPStream, 1)
	sp.Duration = 20 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	res, err := c.Relay(ctx, control.RelayRequest{Peer: b.addr, Spec: sp})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("interrupted relay took %v", d)
	}
	if !res.Interrupted || res.Summary.Bytes == 0 {
		t.Errorf("interrupted %v, %d bytes: want a partial result", res.Interrupted, res.Summary.Bytes)
	}
	b.logs.waitLog(t, "test done", "result=interrupted")
}

func TestParseRelayPeers(t *testing.T) {
	tests := []struct {
		in      []string
		want    string
		wantErr bool
	}{
		{in: []string{"10.0.0.0/8,fd00::/8", "192.0.2.7"}, want: "10.0.0.0/8,fd00::/8,192.0.2.7"},
		{in: []string{"wirespeed.wirespeed.svc.cluster.local", "[::1]"}, want: "::1,wirespeed.wirespeed.svc.cluster.local"},
		{in: []string{"10.1.2.3/8"}, want: "10.0.0.0/8"},
		{in: []string{"bad host!"}, wantErr: true},
		{in: []string{"10.0.0.0/33"}, wantErr: true},
	}
	for _, tt := range tests {
		p, err := server.ParseRelayPeers(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("%q: error %v", tt.in, err)
			continue
		}
		if err == nil && p.String() != tt.want {
			t.Errorf("%q: got %s, want %s", tt.in, p, tt.want)
		}
	}
}

// failingResolver fails every lookup the way Go's resolver does, naming
// the DNS server it asked.
type failingResolver struct{}

func (failingResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "no such host", Name: host, Server: "127.0.0.53:53", IsNotFound: true}
}

// TestRelayUnreachableSaysOnlyThat: a relay toward a closed port, toward
// a port where another service answers and toward a name that does not
// resolve all get the same answer, that
// the peer could not be reached; it names neither the cause nor the
// server's DNS resolver.
func TestRelayUnreachableSaysOnlyThat(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	go func() {
		for {
			c, err := other.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			c.Close()
		}
	}()
	// A port that accepts and never says a word.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	a := startServer(t, server.Config{HandshakeTimeout: time.Second, Auth: server.Auth{PSK: testKey},
		Relay: server.RelayConfig{Allow: true, Peers: relayPeers(t, "127.0.0.0/8", "nowhere.test"), Resolver: failingResolver{}}})
	c := mustDial(t, client.Config{Addr: a.addr, Security: client.Security{PSK: testKey}})
	// The answer's time tells nothing either (issue 32: a closed port
	// answered in 0.2 s, a silent one in 5.2 s): every one comes 2 x the
	// handshake timeout + 1 s after the request, 3 s here.
	var took []time.Duration
	for _, peer := range []string{closedAddr, other.Addr().String(), "nowhere.test:7575", silent.Addr().String()} {
		start := time.Now()
		_, err := c.Relay(context.Background(), control.RelayRequest{Peer: peer, Spec: shortSpec(spec.TCPStream, 1)})
		took = append(took, time.Since(start))
		want := "relay to " + peer + ": the peer could not be reached as a wirespeed server"
		if !errors.Is(err, control.ErrRelayFailed) || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), "127.0.0.53") {
			t.Errorf("relay to %s: got %v, want %q", peer, err, want)
		}
	}
	for i, d := range took {
		if d < 3*time.Second || d > 3*time.Second+500*time.Millisecond {
			t.Errorf("answers came after %v: the answer's time depends on the peer (answer %d)", took, i)
			break
		}
	}
	// The server's own log keeps the causes.
	a.logs.waitLog(t, "relay failed", "refused")
	a.logs.waitLog(t, "relay failed", "127.0.0.53:53")
}

// TestRelayUDPRRPaced: a relayed UDP_RR keeps to the relaying server's
// --max-udp-rate for the requests it sends to its peer. Before (issue
// 32), with a 10M limit a 392-byte relay request made the relaying
// server send 19.7 Gbit/s of requests. The rate is taken from the peer's
// own count of what it received (its "test done" line).
func TestRelayUDPRRPaced(t *testing.T) {
	const limit = 10e6
	b := startServer(t, server.Config{Hostname: "server-b", Auth: server.Auth{PSK: testKey}})
	a := startServer(t, server.Config{Hostname: "server-a", Auth: server.Auth{PSK: testKey},
		Admission: server.Admission{MaxUDPRateBitsPerSecond: limit},
		Relay:     server.RelayConfig{Allow: true, Peers: relayPeers(t, "127.0.0.0/8")}})
	c := mustDial(t, client.Config{Addr: a.addr, Security: client.Security{PSK: testKey}})
	sp := shortSpec(spec.UDPRR, 2)
	sp.RequestSize, sp.ResponseSize, sp.Burst, sp.Duration = 8000, 1, 16, 2*time.Second
	res, err := c.Relay(context.Background(), control.RelayRequest{Peer: b.addr, Spec: sp, Source: "a", Destination: "b"})
	if err != nil {
		t.Fatal(err)
	}
	line := b.logs.waitLog(t, "test done", "test=UDP_RR")
	var bytes int64
	if _, err := fmt.Sscan(line[strings.Index(line, "bytes=")+len("bytes="):], &bytes); err != nil {
		t.Fatalf("no bytes in %s", line)
	}
	rate := float64(bytes) * 8 / sp.Duration.Seconds()
	t.Logf("the peer counted %d bytes in its window: %.3g bit/s; %d transactions", bytes, rate, res.Summary.Transactions)
	if rate > 1.25*limit {
		t.Errorf("the relaying server sent %.3g bit/s, over its limit of %g", rate, float64(limit))
	}
	if res.Summary.Transactions == 0 {
		t.Errorf("no transactions")
	}
	found := false
	for _, w := range report.WarningTexts(res.Warnings) {
		found = found || strings.Contains(w, "paced its UDP requests")
	}
	if !found {
		t.Errorf("no warning that the requests were paced: %q", report.WarningTexts(res.Warnings))
	}
}
