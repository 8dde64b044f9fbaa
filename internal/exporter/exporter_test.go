package exporter

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/stats"
	"wirespeed/internal/testkit"
)

// fakeRun is the measurement of the tests' modules: it records what it
// was asked, blocks while gate is held, and returns res.
type fakeRun struct {
	mu    sync.Mutex
	asked []spec.Test
	addrs []string
	gate  chan struct{} // nil: return at once
	err   error
}

func (f *fakeRun) measure(res result.Result) Measure {
	return func(ctx context.Context, addr string, t spec.Test, log *slog.Logger) (result.Result, error) {
		f.mu.Lock()
		f.asked = append(f.asked, t)
		f.addrs = append(f.addrs, addr)
		gate := f.gate
		f.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-ctx.Done():
				return result.Result{}, ctx.Err()
			}
		}
		log.Debug("fake measurement", "addr", addr)
		r := res // probes of distinct targets measure at once
		r.Spec = t
		return r, f.err
	}
}

// fakeBuild reads the keys test and length only, as a stand-in for the
// CLI's builder (whose reading of keys cli's tests check).
func fakeBuild(run *fakeRun, res result.Result) Builder {
	return func(settings []Setting) (Plan, error) {
		p := Plan{Test: spec.Default(), Port: 7575, Measure: run.measure(res)}
		for _, s := range settings {
			switch s.Key {
			case "test":
				k, err := spec.ParseKind(s.Value)
				if err != nil {
					return p, &KeyError{Key: s.Key, Err: err}
				}
				p.Test.Kind = k
			case "length":
				d, err := time.ParseDuration(s.Value)
				if err != nil {
					return p, &KeyError{Key: s.Key, Err: err}
				}
				p.Test.Duration, p.LengthSet = d, true
			case "omit":
				d, _ := time.ParseDuration(s.Value)
				p.Test.Omit = d
			case "ipv6":
				p.Test.IPVersion = 6
			default:
				return p, &KeyError{Key: s.Key, Err: errors.New("unknown")}
			}
		}
		return p, nil
	}
}

// streamResult is a hand-made TCP_STREAM result whose metrics the tests
// know.
func streamResult() result.Result {
	return result.Result{
		Started: time.Unix(1796000000, 250000000),
		Summary: result.Summary{
			LocalCPU:  &measure.CPU{UtilPct: 40, ServiceDemandMicrosPerKB: 2.048},
			RemoteCPU: &measure.CPU{UtilPct: 25, ServiceDemandMicrosPerKB: 1.024},
		},
		Directions: []result.DirectionResult{{
			Direction: spec.ClientToServer,
			Summary: result.Summary{BitsPerSecond: 9.5e8, SenderBitsPerSecond: 9.6e8, Bytes: 1187500000, ElapsedS: 10, Retransmits: 7,
				Limit: &result.Limit{Kind: result.LimitReceiverCPU, Side: result.Remote}},
			Streams: []result.Stream{
				{Sender: result.StreamSide{TCPInfo: &measure.TCPInfo{RTTMicros: 100}}},
				{Sender: result.StreamSide{TCPInfo: &measure.TCPInfo{RTTMicros: 300}}},
			},
		}},
	}
}

type harness struct {
	x    *Exporter
	srv  *httptest.Server
	run  *fakeRun
	path string
}

func newHarness(t *testing.T, config string, mod func(*Options)) *harness {
	t.Helper()
	h := &harness{run: &fakeRun{}, path: filepath.Join(t.TempDir(), "probes.yml")}
	if err := os.WriteFile(h.path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := Options{ConfigPath: h.path, Build: fakeBuild(h.run, streamResult()), MaxConcurrent: 4, QueueSize: 1,
		TimeoutOffset: 500 * time.Millisecond, Setup: time.Second}
	if mod != nil {
		mod(&opts)
	}
	x, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.x = x
	h.srv = httptest.NewServer(x.Handler())
	t.Cleanup(h.srv.Close)
	return h
}

// probe scrapes /probe with the query and the scrape timeout (0: no
// header) and returns the samples by their name and labels.
func (h *harness) probe(t *testing.T, query string, timeout float64) map[string]float64 {
	t.Helper()
	req, _ := http.NewRequest("GET", h.srv.URL+"/probe?"+query, nil)
	if timeout > 0 {
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", strconv.FormatFloat(timeout, 'f', -1, 64))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("probe %s: status %d, want 200 (a refusal is probe_success 0): %s", query, resp.StatusCode, b)
	}
	return parseSamples(t, resp.Body)
}

func parseSamples(t *testing.T, r io.Reader) map[string]float64 {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("exposition: %v", err)
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.Metric {
			key := name
			var ls []string
			for _, l := range m.Label {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			if len(ls) > 0 {
				key += "{" + strings.Join(ls, ",") + "}"
			}
			switch {
			case m.Gauge != nil:
				out[key] = m.Gauge.GetValue()
			case m.Counter != nil:
				out[key] = m.Counter.GetValue()
			}
		}
	}
	return out
}

func (h *harness) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(h.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const twoModules = `
modules:
  tcp:
    length: 2s
  fit: {}
`

// TestProbeMetrics: a probe's answer carries the result's figures in base
// units, each worked out by hand from streamResult.
func TestProbeMetrics(t *testing.T) {
	h := newHarness(t, twoModules, nil)
	got := h.probe(t, "target=127.0.0.1&module=tcp", 10)
	want := map[string]float64{
		"probe_success": 1,
		"wirespeed_probe_throughput_bits_per_second{direction=client_to_server}":               9.5e8,
		"wirespeed_probe_sender_throughput_bits_per_second{direction=client_to_server}":        9.6e8,
		"wirespeed_probe_received_bytes{direction=client_to_server}":                           1187500000,
		"wirespeed_probe_elapsed_seconds{direction=client_to_server}":                          10,
		"wirespeed_probe_tcp_retransmits{direction=client_to_server}":                          7,
		"wirespeed_probe_tcp_rtt_seconds{direction=client_to_server}":                          200e-6, // mean of 100 and 300 us
		"wirespeed_probe_cpu_utilization_ratio{side=local}":                                    0.40,
		"wirespeed_probe_cpu_utilization_ratio{side=remote}":                                   0.25,
		"wirespeed_probe_service_demand_seconds_per_byte{side=local}":                          2e-9, // 2.048 us per 1024 bytes
		"wirespeed_probe_service_demand_seconds_per_byte{side=remote}":                         1e-9,
		"wirespeed_probe_limit_info{direction=client_to_server,kind=receiver_cpu,side=remote}": 1,
		"wirespeed_probe_started_timestamp_seconds":                                            1796000000.25,
		"wirespeed_probe_length_seconds":                                                       2,
		"wirespeed_probe_warnings":                                                             0,
		"probe_ip_protocol":                                                                    4, // 127.0.0.1
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s missing; got %v", k, got)
			continue
		}
		if diff := g - w; diff > 1e-12*max(1, w) || diff < -1e-12*max(1, w) {
			t.Errorf("%s = %g, want %g", k, g, w)
		}
	}
	if d := got["probe_duration_seconds"]; !(d > 0 && d < 5) {
		t.Errorf("probe_duration_seconds %g, want the probe's few milliseconds", d)
	}
	if h.run.addrs[0] != "127.0.0.1:7575" {
		t.Errorf("dialled %s, want the module's port on the target", h.run.addrs[0])
	}
}

// TestProbeDebugAnswer: debug=true answers blackbox_exporter's three
// sections in its order (the log, the metrics, the module's
// configuration: its keys as the file wrote them), and probe_ip_protocol
// is the version of the address dialled: 6 for ::1, 0 when the probe
// failed before it chose one.
func TestProbeDebugAnswer(t *testing.T) {
	h := newHarness(t, twoModules+"  six:\n    ipv6: true\n    length: 3s\n", nil)
	code, body := h.get(t, "/probe?module=six&target=::1&debug=true")
	i := strings.Index(body, "Logs for the probe:\n")
	j := strings.Index(body, "\n\n\nMetrics that would have been returned:\n")
	k := strings.Index(body, "\n\n\nModule configuration:\n")
	if code != 200 || i != 0 || j < i || k < j {
		t.Fatalf("status %d; sections at %d, %d, %d, want 0 and in order:\n%s", code, i, j, k, body)
	}
	if conf := body[k+len("\n\n\nModule configuration:\n"):]; conf != "ipv6: true\nlength: 3s\n" {
		t.Errorf("module configuration %q, want the file's two keys", conf)
	}
	if got := parseSamples(t, strings.NewReader(body[j+3+len("Metrics that would have been returned:\n"):k+1])); got["probe_ip_protocol"] != 6 || got["probe_success"] != 1 {
		t.Errorf("probe_ip_protocol %g, probe_success %g: want 6 and 1 for ::1", got["probe_ip_protocol"], got["probe_success"])
	}
	_, body = h.get(t, "/probe?module=fit&target=bad_host!&debug=true")
	if !strings.Contains(body, "\nprobe_ip_protocol 0\n") || !strings.HasSuffix(body, "Module configuration:\n{}\n") {
		t.Errorf("a probe refused before its address: want probe_ip_protocol 0 and the empty module as {}:\n%s", body)
	}
}

// TestProbeMetricsUDPAndRR: loss and jitter in ratios and seconds, RR
// latency per quantile in seconds.
func TestProbeMetricsUDPAndRR(t *testing.T) {
	udp := result.Result{Spec: spec.Test{Kind: spec.UDPStream}, Directions: []result.DirectionResult{{
		Direction: spec.ServerToClient,
		Summary:   result.Summary{BitsPerSecond: 1e8, UDPSummary: &result.UDPSummary{PacketsSent: 1000, Lost: 25, LossPct: 2.5, JitterMs: 1.5}},
	}}}
	got := collect(t, udp)
	for k, w := range map[string]float64{
		"wirespeed_probe_udp_loss_ratio{direction=server_to_client}":     0.025,
		"wirespeed_probe_udp_jitter_seconds{direction=server_to_client}": 0.0015,
		"wirespeed_probe_udp_lost_packets{direction=server_to_client}":   25,
		"wirespeed_probe_udp_sent_packets{direction=server_to_client}":   1000,
	} {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s = %v (present %v), want %g", k, g, ok, w)
		}
	}
	if _, ok := got["wirespeed_probe_tcp_retransmits{direction=server_to_client}"]; ok {
		t.Error("a UDP result has a TCP retransmit series")
	}

	rr := result.Result{Spec: spec.Test{Kind: spec.UDPRR}, Summary: result.Summary{LocalCPU: &measure.CPU{UtilPct: 50, ServiceDemandMicrosPerTransaction: 12}},
		Directions: []result.DirectionResult{{Direction: spec.RequestResponse, Summary: result.Summary{RRSummary: &result.RRSummary{
			TransactionsPerSecond: 20000, Latency: stats.Latency{Count: 200000, Min: 10, P50: 40, P90: 60, P99: 90, P999: 150, Max: 2000, Mean: 45}}}}}}
	got = collect(t, rr)
	for k, w := range map[string]float64{
		"wirespeed_probe_rr_latency_seconds{quantile=0}":                     10e-6,
		"wirespeed_probe_rr_latency_seconds{quantile=0.5}":                   40e-6,
		"wirespeed_probe_rr_latency_seconds{quantile=0.99}":                  90e-6,
		"wirespeed_probe_rr_latency_seconds{quantile=1}":                     2000e-6,
		"wirespeed_probe_rr_latency_mean_seconds":                            45e-6,
		"wirespeed_probe_rr_transactions_per_second":                         20000,
		"wirespeed_probe_service_demand_seconds_per_transaction{side=local}": 12e-6,
		"wirespeed_probe_cpu_utilization_ratio{side=local}":                  0.5,
	} {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s = %v (present %v), want %g", k, g, ok, w)
		}
	}
	if _, ok := got["wirespeed_probe_throughput_bits_per_second{direction=request_response}"]; ok {
		t.Error("an RR result has a throughput series")
	}
}

func collect(t *testing.T, res result.Result) map[string]float64 {
	t.Helper()
	h := &harness{run: &fakeRun{}}
	path := filepath.Join(t.TempDir(), "p.yml")
	// The module runs the result's test, as a real probe's result is
	// of its module's test.
	module := "{}"
	if res.Spec.Kind != "" {
		module = "{test: " + string(res.Spec.Kind) + "}"
	}
	os.WriteFile(path, []byte("modules:\n  m: "+module+"\n"), 0o600)
	x, err := New(Options{ConfigPath: path, Build: fakeBuild(h.run, res), MaxConcurrent: 1, Setup: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h.srv = httptest.NewServer(x.Handler())
	defer h.srv.Close()
	return h.probe(t, "target=127.0.0.1&module=m", 30)
}

// TestProbeRefusals: a request no probe can be made of (a module not in
// the configuration, no target) is a 400 with the reason, as
// blackbox_exporter answers it, debug or not; every other bad request is a
// 200 with probe_success 0, its reason in the debug log. Each is counted
// by reason on /metrics and none runs a test.
func TestProbeRefusals(t *testing.T) {
	h := newHarness(t, twoModules+"  long:\n    length: 90s\n  six:\n    ipv6: true\n", func(o *Options) {
		o.AllowTargets = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
		o.MaxLength = time.Minute
	})
	for _, c := range []struct{ query, answer string }{
		{"target=127.0.0.1&module=nope", `unknown module "nope": the configuration has fit, long, six, tcp`},
		{"target=127.0.0.1", "no module: add module=NAME, one of fit, long, six, tcp"},
		{"module=tcp", "target parameter is missing: add target=HOST or target=HOST:PORT"},
		{"module=tcp&target=", "target parameter is missing"},
	} {
		for _, debug := range []string{"", "&debug=true"} {
			code, body := h.get(t, "/probe?"+c.query+debug)
			if code != http.StatusBadRequest || !strings.Contains(body, c.answer) || strings.Contains(body, "probe_success") {
				t.Errorf("%s%s: status %d, want 400 with %q and no metrics:\n%s", c.query, debug, code, c.answer, body)
			}
		}
	}
	for _, c := range []struct {
		query, reason, inLog string
	}{
		{"module=tcp&target=http://127.0.0.1/", reasonBadTarget, "no scheme or path"},
		{"module=tcp&target=127.0.0.1:99999", reasonBadTarget, `port "99999" must be a number from 1 to 65535`},
		{"module=tcp&target=a:b:c", reasonBadTarget, "write HOST, HOST:PORT or [IPv6]:PORT"},
		{"module=tcp&target=bad_host!", reasonBadTarget, "neither an IP address nor a host name"},
		{"module=tcp&target=" + strings.Repeat("a", 300), reasonBadTarget, "at most 253"},
		{"module=six&target=127.0.0.1", reasonBadTarget, "not an IPv6 address"},
		{"module=tcp&target=192.0.2.1:7575", reasonNotAllowed, "outside --allow-targets [127.0.0.0/8 ::1/128]"},
		{"module=tcp&target=[::ffff:10.0.0.1]", reasonNotAllowed, "outside --allow-targets"},
		{"module=long&target=127.0.0.1", reasonTooLong, `module "long" runs 1m30s, more than the exporter's --max-length 1m0s`},
		{"module=tcp&target=127.0.0.1&x=1", reasonCannotFit, "the scrape leaves 1.5s"},
	} {
		timeout := "10"
		if c.reason == reasonCannotFit {
			timeout = "2"
		}
		req, _ := http.NewRequest("GET", h.srv.URL+"/probe?"+c.query+"&debug=true", nil)
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", timeout)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body := strings.ReplaceAll(string(b), `\"`, `"`) // slog's text quotes the message
		if resp.StatusCode != 200 || !strings.Contains(body, "\nprobe_success 0\n") {
			t.Errorf("%s: status %d, want 200 with probe_success 0:\n%s", c.query, resp.StatusCode, body)
		}
		if !strings.Contains(body, "reason="+c.reason) || !strings.Contains(body, c.inLog) {
			t.Errorf("%s: debug log lacks reason=%s and %q:\n%s", c.query, c.reason, c.inLog, body)
		}
	}
	if len(h.run.asked) != 0 {
		t.Errorf("refused probes ran %d tests", len(h.run.asked))
	}
	_, m := h.get(t, "/metrics")
	got := parseSamples(t, strings.NewReader(m))
	for r, n := range map[string]float64{reasonUnknownModule: 4, reasonBadTarget: 10, reasonNotAllowed: 2, reasonTooLong: 1, reasonCannotFit: 1, reasonQueueFull: 0} {
		if g := got["wirespeed_exporter_probe_failures_total{reason="+r+"}"]; g != n {
			t.Errorf("failures by %s: %g, want %g", r, g, n)
		}
	}
	if g := got["wirespeed_exporter_probes_total{module=,result=failure}"]; g != 4 {
		t.Errorf("failures of unknown modules counted under module=\"\": %g, want 4", g)
	}
	if g := got["wirespeed_exporter_probes_total{module=tcp,result=failure}"]; g != 12 {
		t.Errorf("failures of module tcp: %g, want 12", g)
	}
}

// TestProbeFitsTheScrape: a module without a length runs what the scrape
// leaves (timeout less offset less set-up), at most its default; one
// with a length runs it as given.
func TestProbeFitsTheScrape(t *testing.T) {
	h := newHarness(t, twoModules+"  warm:\n    omit: 2s\n", nil)
	for _, c := range []struct {
		module  string
		timeout float64
		want    time.Duration
	}{
		{"fit", 5, 3500 * time.Millisecond},  // 5 - 0.5 offset - 1 set-up, less the probe's own few ms: 3.4s
		{"fit", 60, spec.DefaultDuration},    // room for more: run's default
		{"warm", 6, 2500 * time.Millisecond}, // 6 - 0.5 - 1 - 2 warm-up
		{"tcp", 3.6, 2 * time.Second},        // fits as given, with 100ms to spare
		{"fit", 0, spec.DefaultDuration},     // no header: DefaultTimeout, 120 s
	} {
		n := len(h.run.asked)
		got := h.probe(t, "target=127.0.0.1&module="+c.module, c.timeout)
		if got["probe_success"] != 1 || len(h.run.asked) != n+1 {
			t.Errorf("%s at %gs: probe_success %g, %d tests", c.module, c.timeout, got["probe_success"], len(h.run.asked)-n)
			continue
		}
		asked := h.run.asked[n].Duration
		if asked > c.want || asked < c.want-200*time.Millisecond {
			t.Errorf("%s at %gs: length %v, want %v (or up to 200ms less)", c.module, c.timeout, asked, c.want)
		}
		if got["wirespeed_probe_length_seconds"] != asked.Seconds() {
			t.Errorf("length metric %g, test ran %v", got["wirespeed_probe_length_seconds"], asked)
		}
	}
	// A probe whose test would overrun the scrape is refused before it runs.
	n := len(h.run.asked)
	if got := h.probe(t, "target=127.0.0.1&module=tcp", 3.4); got["probe_success"] != 0 || len(h.run.asked) != n {
		t.Errorf("2s module in a 3.4s scrape (0.5 offset, 1s set-up): probe_success %g, want 0 and no test", got["probe_success"])
	}
	// A timeout shorter than the offset leaves nothing: refused at once.
	if got := h.probe(t, "target=127.0.0.1&module=fit", 0.2); got["probe_success"] != 0 || len(h.run.asked) != n {
		t.Errorf("a 0.2s scrape: probe_success %g, want 0 and no test", got["probe_success"])
	}
	_, m := h.get(t, "/metrics")
	if s := parseSamples(t, strings.NewReader(m)); s["wirespeed_exporter_probe_failures_total{reason=scrape_timeout}"] != 2 {
		t.Errorf("scrape_timeout failures %g, want 2", s["wirespeed_exporter_probe_failures_total{reason=scrape_timeout}"])
	}
}

// TestProbeQueues: a second probe of one target waits for the first; one
// more than --queue-size is refused at once; another target runs beside
// them; a probe that waits past its scrape's timeout says so.
func TestProbeQueues(t *testing.T) {
	h := newHarness(t, twoModules, nil) // QueueSize 1
	h.run.gate = make(chan struct{})
	type answer struct {
		samples map[string]float64
		at      time.Time
	}
	probe := func(target string, timeout float64) <-chan answer {
		ch := make(chan answer, 1)
		go func() {
			s := h.probe(t, "module=tcp&target="+target, timeout)
			ch <- answer{s, time.Now()}
		}()
		return ch
	}
	running := func(n int) bool {
		h.run.mu.Lock()
		defer h.run.mu.Unlock()
		return len(h.run.asked) == n
	}
	first := probe("127.0.0.1", 30)
	if !testkit.WaitFor(5*time.Second, func() bool { return running(1) }) {
		t.Fatal("the first probe never started its test")
	}
	second := probe("127.0.0.1", 30)
	waiting := func(n float64) bool {
		_, m := h.get(t, "/metrics")
		s := parseSamples(t, strings.NewReader(m))
		return s["wirespeed_exporter_probes_waiting"] == n && s["wirespeed_exporter_targets_busy"] == 1
	}
	if !testkit.WaitFor(5*time.Second, func() bool { return waiting(1) }) {
		t.Fatal("the second probe of the target is not counted as waiting")
	}
	third := h.probe(t, "module=tcp&target=127.0.0.1", 30)
	if third["probe_success"] != 0 {
		t.Error("a third probe with --queue-size 1 was not refused")
	}
	other := probe("127.0.0.2", 30) // another target: runs beside the first
	if !testkit.WaitFor(5*time.Second, func() bool { return running(2) }) {
		t.Fatal("a probe of another target did not run beside the first")
	}
	if running(3) {
		t.Fatal("the second probe of the busy target ran beside the first")
	}
	close(h.run.gate)
	for _, ch := range []<-chan answer{first, second, other} {
		if a := <-ch; a.samples["probe_success"] != 1 {
			t.Errorf("a queued probe failed: %v", a.samples)
		}
	}
	_, m := h.get(t, "/metrics")
	s := parseSamples(t, strings.NewReader(m))
	if s["wirespeed_exporter_probe_failures_total{reason=queue_full}"] != 1 || s["wirespeed_exporter_probes_waiting"] != 0 {
		t.Errorf("queue_full %g, waiting %g: want 1 and 0", s["wirespeed_exporter_probe_failures_total{reason=queue_full}"], s["wirespeed_exporter_probes_waiting"])
	}
	if s["wirespeed_exporter_targets_busy"] != 0 {
		t.Error("an idle target's queue is still counted")
	}

	// A probe waiting behind a test that outlasts its scrape gives up.
	h.run.gate = make(chan struct{})
	n := len(h.run.asked)
	long := probe("127.0.0.1", 30)
	if !testkit.WaitFor(5*time.Second, func() bool { return running(n + 1) }) {
		t.Fatal("the long probe never started")
	}
	start := time.Now()
	short := h.probe(t, "module=tcp&target=127.0.0.1", 4)
	if short["probe_success"] != 0 || time.Since(start) > 4*time.Second {
		t.Errorf("a probe stuck in line: probe_success %g after %v", short["probe_success"], time.Since(start))
	}
	close(h.run.gate)
	<-long
	_, m = h.get(t, "/metrics")
	if s := parseSamples(t, strings.NewReader(m)); s["wirespeed_exporter_probe_failures_total{reason=queue_timeout}"] != 1 {
		t.Errorf("queue_timeout %g, want 1", s["wirespeed_exporter_probe_failures_total{reason=queue_timeout}"])
	}
}

// TestReload: a good file replaces the modules; a bad one is refused with
// its error, on POST /-/reload as on Reload, and the old modules stay.
func TestReload(t *testing.T) {
	h := newHarness(t, twoModules, nil)
	if code, _ := h.get(t, "/-/reload"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /-/reload: %d, want 405", code)
	}
	os.WriteFile(h.path, []byte("modules:\n  udp:\n    test: UDP_STREAM\n"), 0o600)
	resp, err := http.Post(h.srv.URL+"/-/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || h.x.Config().Names()[0] != "udp" || len(h.x.Config().Modules) != 1 {
		t.Fatalf("reload: %d, modules %v", resp.StatusCode, h.x.Config().Names())
	}
	os.WriteFile(h.path, []byte("modules:\n  broken:\n    test: TCP_SPRINT\n"), 0o600)
	resp, err = http.Post(h.srv.URL+"/-/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || !strings.Contains(string(b), `line 3: module "broken": key "test"`) {
		t.Errorf("bad reload: %d %s", resp.StatusCode, b)
	}
	if got := h.x.Config().Names(); len(got) != 1 || got[0] != "udp" {
		t.Errorf("after a refused reload the modules are %v, want [udp]", got)
	}
	_, m := h.get(t, "/metrics")
	if s := parseSamples(t, strings.NewReader(m)); s["wirespeed_exporter_config_last_reload_successful"] != 0 || s["wirespeed_exporter_config_modules"] != 1 {
		t.Errorf("reload metrics: %v", s)
	}
}

// TestParseErrors: the file's mistakes name the line, the module and the
// key.
func TestParseErrors(t *testing.T) {
	build := fakeBuild(&fakeRun{}, result.Result{})
	for _, c := range []struct{ file, want string }{
		{"", "want a mapping with a modules: key"},
		{"modules: {}\n", "no modules"},
		{"modules:\n  a: {}\nprobes: 1\n", `line 3: unknown top-level key "probes"`},
		{"modules:\n  a:\n    length: 10q\n", `line 3: module "a": key "length"`},
		{"modules:\n  a:\n    test: TCP_STREAM\n    test: UDP_STREAM\n", `line 4: module "a": key "test" is given twice`},
		{"modules:\n  a: {}\n  a: {}\n", `line 3: module "a" is defined twice`},
		{"modules:\n  a b: {}\n", `line 2: module name "a b"`},
		{"modules:\n  a: [1]\n", `module "a": want a mapping`},
		{"modules:\n  a:\n    length: {x: 1}\n", `line 3: module "a": key "length": want a value`},
		{"modules:\n  a:\n    length:\n", `key "length": has no value`},
		{"modules:\n  a:\n\tlength: 1s\n", "not YAML"},
	} {
		_, err := Parse([]byte(c.file), build)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.file, err, c.want)
		}
	}
	c, err := Parse([]byte("modules:\n  a:\n    test: [TCP_RR]\n  b: \n"), build)
	if err != nil || c.Modules["a"].Plan.Test.Kind != spec.TCPRR || c.Modules["b"].Plan.Test.Kind != spec.TCPStream {
		t.Errorf("a list value and an empty module: %v, %+v", err, c)
	}
}

// TestPageAndRecent: the / page lists the modules and recent probes with
// links; /recent, /logs and /result answer for a probe by id.
func TestPageAndRecent(t *testing.T) {
	h := newHarness(t, twoModules, nil)
	h.probe(t, "target=127.0.0.1&module=tcp", 10)
	if code, _ := h.get(t, "/probe?target=127.0.0.1&module=nope"); code != 400 {
		t.Errorf("unknown module: status %d, want 400", code)
	}
	_, page := h.get(t, "/")
	for _, want := range []string{"<td>fit</td>", "<code>length: 2s</code>", `<a href="logs?id=1">log</a> &middot; <a href="result?id=1">result</a>`,
		`<span class="fail">unknown_module</span>`, `<a href="logs?id=2">log</a></td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	_, recent := h.get(t, "/recent")
	if !strings.Contains(recent, `"result_started": "2026-12-01T`) && !strings.Contains(recent, `"result_started": "2026-11-30T`) {
		t.Logf("recent: %s", recent)
	}
	if code, js := h.get(t, "/result?id=1"); code != 200 || !strings.Contains(js, `"throughput_bps": 950000000`) || !strings.Contains(js, `"command": "exporter"`) {
		t.Errorf("/result?id=1: %d %s", code, js)
	}
	if code, _ := h.get(t, "/result?id=2"); code != 404 {
		t.Errorf("/result of a refused probe: %d, want 404", code)
	}
	if code, log := h.get(t, "/logs?id=2"); code != 200 || !strings.Contains(log, "reason=unknown_module") {
		t.Errorf("/logs?id=2: %d %s", code, log)
	}
	if code, _ := h.get(t, "/logs?id=x"); code != 400 {
		t.Errorf("/logs?id=x: %d, want 400", code)
	}
	if code, _ := h.get(t, "/nothing"); code != 404 {
		t.Errorf("/nothing: %d, want 404", code)
	}
}

// TestParseTarget: the forms a target may take.
func TestParseTarget(t *testing.T) {
	for _, c := range []struct {
		in, host string
		port     int
	}{
		{"server1", "server1", 7575},
		{"server1:8000", "server1", 8000},
		{"10.0.0.1", "10.0.0.1", 7575},
		{"[::1]:9", "::1", 9},
		{"::1", "::1", 7575},
		{"[fd00::1]", "fd00::1", 7575},
		{"host.example.org.", "host.example.org.", 7575},
	} {
		h, p, err := ParseTarget(c.in, 7575)
		if err != nil || h != c.host || p != c.port {
			t.Errorf("%q: %q %d %v, want %q %d", c.in, h, p, err, c.host, c.port)
		}
	}
	for _, bad := range []string{"", "a b", "x:0", ":80", "-lead", "fe80::1%eth0", "[fe80::1%eth0]:80", "user@host", "host/path"} {
		if _, _, err := ParseTarget(bad, 7575); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestKeep: a probe that ran a test hands its results document to Keep,
// after its answer; a refused probe hands nothing.
func TestKeep(t *testing.T) {
	var mu sync.Mutex
	var kept []result.Document
	h := newHarness(t, twoModules, func(o *Options) {
		o.Keep = func(ctx context.Context, doc result.Document) error {
			mu.Lock()
			defer mu.Unlock()
			kept = append(kept, doc)
			return nil
		}
	})
	h.probe(t, "target=127.0.0.1&module=tcp", 10)
	h.get(t, "/probe?target=127.0.0.1&module=nope")
	h.probe(t, "target=bad!&module=tcp", 10)
	mu.Lock()
	defer mu.Unlock()
	if len(kept) != 1 || kept[0].Command != "exporter" || kept[0].Schema != result.Schema || kept[0].Directions[0].Summary.BitsPerSecond != 9.5e8 {
		t.Errorf("kept %d documents (%+v), want the one probe's that ran", len(kept), kept)
	}
}
