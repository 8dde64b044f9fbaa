package exporter

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// The exporter under a hostile client and hostile targets (issue 47): a
// real exporter on 127.0.0.1 whose modules run wirespeed's own client,
// and targets the tests run themselves on loopback.

// clientMeasure runs a test with wirespeed's client, as the CLI's
// modules do (cli's moduleBuilder).
func clientMeasure(ctx context.Context, addr string, t spec.Test, log *slog.Logger) (result.Result, error) {
	c, err := client.Dial(ctx, client.Config{Addr: addr, IPVersion: t.IPVersion, Tool: "test", Hostname: "exporter", Logger: log})
	if err != nil {
		return result.Result{}, fmt.Errorf("%w: %w", ErrNotReached, err)
	}
	defer c.Close()
	return c.Run(ctx, t)
}

// withMeasure is b with m as every module's measurement.
func withMeasure(b Builder, m Measure) Builder {
	return func(s []Setting) (Plan, error) {
		p, err := b(s)
		p.Measure = m
		return p, err
	}
}

// scrape is one probe as Prometheus sends it, with its answer's body and
// when the answer came.
type scrape struct {
	body string
	took time.Duration
	err  error
}

func (h *harness) scrape(query string, timeout float64) scrape {
	req, _ := http.NewRequest("GET", h.srv.URL+"/probe?"+query, nil)
	if timeout > 0 {
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", strconv.FormatFloat(timeout, 'f', -1, 64))
	}
	start := time.Now()
	c := &http.Client{Timeout: 15 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return scrape{took: time.Since(start), err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return scrape{body: strings.ReplaceAll(string(b), `\"`, `"`), took: time.Since(start), err: err}
}

// silentServer is a wirespeed server that plays its part up to the start
// of a TCP test (hello, accepted, ready, start) and then never sends its
// result, as issue 47 found: each connection is held until the client
// closes it. It returns the address.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	track := func(c net.Conn) {
		mu.Lock()
		open = append(open, c)
		mu.Unlock()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			track(c)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				cc := control.NewConn(c, 0)
				if cc.ReadMagic(5*time.Second) != nil || cc.Expect(control.TypeHello, nil, 5*time.Second) != nil {
					return
				}
				cc.WriteMagic()
				cc.Send(control.TypeHello, control.NewHello("fake", "fake"))
				var req control.TestRequest
				if cc.Expect(control.TypeTest, &req, 5*time.Second) != nil {
					return
				}
				dl, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					return
				}
				defer dl.Close()
				go func() {
					for range req.Spec.Streams() {
						d, err := dl.Accept()
						if err != nil {
							return
						}
						track(d)
						go io.Copy(io.Discard, d)
					}
				}()
				cc.Send(control.TypeAccepted, control.Accepted{Token: control.NewToken(), DataPort: dl.Addr().(*net.TCPAddr).Port})
				cc.Send(control.TypeReady, struct{}{})
				// The test runs; the result never comes. Whatever the
				// client sends (its abort, bye) is read and ignored.
				io.Copy(io.Discard, c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// TestProbeAnswersByTheDeadline (issue 47, item 3): against a server that
// never sends its result, the answer comes before the scrape's deadline
// (its timeout less the offset), probe_success 0, for a fitted module and
// for one with its own length; and the probe gives back its global slot
// then, so that the next probe of another target runs at once. Before,
// the client waited for the result for the test's length and 20 s more:
// the answer came after 21.4 s of a 10 s scrape.
func TestProbeAnswersByTheDeadline(t *testing.T) {
	// One silent server each: a test past its deadline keeps its
	// target's turn.
	silent := map[string]string{"fit": silentServer(t), "short": silentServer(t)}
	run := &fakeRun{}
	honest := run.measure(streamResult())
	h := newHarness(t, "modules:\n  fit: {}\n  short:\n    length: 1s\n", func(o *Options) {
		o.MaxConcurrent = 1
		o.Build = withMeasure(o.Build, func(ctx context.Context, addr string, t spec.Test, log *slog.Logger) (result.Result, error) {
			if addr == silent["fit"] || addr == silent["short"] {
				return clientMeasure(ctx, addr, t, log)
			}
			return honest(ctx, addr, t, log)
		})
	})
	const timeout = 4.0 // the answer is due by 3.5 s: 0.5 s of offset
	due := time.Duration((timeout - 0.5) * float64(time.Second))
	for _, module := range []string{"fit", "short"} {
		a := h.scrape("debug=true&module="+module+"&target="+silent[module], timeout)
		if a.err != nil {
			t.Fatalf("%s: %v", module, a.err)
		}
		if a.took > due+200*time.Millisecond {
			t.Errorf("%s: answered after %v of a %gs scrape, due by %v", module, a.took.Round(time.Millisecond), timeout, due)
		}
		if !strings.Contains(a.body, "\nprobe_success 0\n") || !strings.Contains(a.body, "reason=test_failed") {
			t.Errorf("%s: want probe_success 0 with reason test_failed:\n%s", module, a.body)
		}
		// The global slot (one) is free again: a probe of another
		// target runs at once although the silent server's test goes on.
		b := h.scrape("module=fit&target=127.0.0.2", timeout)
		if b.err != nil || !strings.Contains(b.body, "\nprobe_success 1\n") || b.took > time.Second {
			t.Errorf("%s: the next probe of another target after %v: %v\n%s", module, b.took.Round(time.Millisecond), b.err, b.body)
		}
	}
}

// TestProbeWaitingBounded (issue 47, item 2): probes of a few hundred
// distinct silent targets (127.0.0.1 ports listening, never accepting)
// with a scrape timeout of 600 s: at most --max-waiting wait and
// --max-concurrent run, every other one is answered queue_full at once,
// no target becomes a label value, the goroutines stay bounded, and a
// probe asking 1e6 s is held no longer than the exporter's longest.
// Before, all were admitted (15,000 probes made 30,008 goroutines and
// 14,996 target series).
func TestProbeWaitingBounded(t *testing.T) {
	const targets = 300
	var addrs []string
	for range targets {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		addrs = append(addrs, ln.Addr().String())
	}
	h := newHarness(t, "modules:\n  fit: {}\n", func(o *Options) {
		o.Build = withMeasure(o.Build, clientMeasure)
	})
	maxRunning := h.x.opts.MaxConcurrent
	if h.x.opts.MaxWaiting != DefaultMaxWaiting {
		t.Fatalf("MaxWaiting %d, want the default %d", h.x.opts.MaxWaiting, DefaultMaxWaiting)
	}
	// The queue's figures, sampled while the probes come.
	var mu sync.Mutex
	peakWaiting, peakRunning, peakTargets := 0, 0, 0
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			q := h.x.queues
			q.mu.Lock()
			mu.Lock()
			peakWaiting, peakRunning, peakTargets = max(peakWaiting, q.waiting), max(peakRunning, q.running), max(peakTargets, len(q.targets))
			mu.Unlock()
			q.mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()

	goroutines := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	type answer struct {
		full bool
		err  error
	}
	answers := make(chan answer, targets)
	start := time.Now()
	for _, a := range addrs {
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", h.srv.URL+"/probe?debug=true&module=fit&target="+a, nil)
			req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "600")
			resp, err := c.Do(req)
			if err != nil {
				answers <- answer{err: err}
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			answers <- answer{full: strings.Contains(string(b), "reason=queue_full"), err: err}
		}()
	}
	// Every probe beyond those running and waiting is refused at once.
	refused := 0
	wantRefused := targets - DefaultMaxWaiting - maxRunning
	timeout := time.After(10 * time.Second)
	for refused < wantRefused {
		select {
		case a := <-answers:
			if a.err != nil {
				t.Fatalf("a probe: %v", a.err)
			}
			if a.full {
				refused++
			}
		case <-timeout:
			t.Fatalf("%d probes refused as queue_full within 10 s, want %d: the exporter admitted the others", refused, wantRefused)
		}
	}
	took := time.Since(start)
	_, m := h.get(t, "/metrics")
	if strings.Contains(m, "target=") {
		t.Errorf("a target the client made up is a label value on /metrics")
	}
	time.Sleep(200 * time.Millisecond) // the refused probes' goroutines end
	if g := runtime.NumGoroutine() - goroutines; g > 300 {
		t.Errorf("%d more goroutines with %d probes held, want at most 300", g, DefaultMaxWaiting+maxRunning)
	}
	cancel()
	close(stop)
	<-sampled
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d of %d probes refused in %v; at the peak %d waiting, %d running, %d targets", refused, targets, took.Round(time.Millisecond), peakWaiting, peakRunning, peakTargets)
	if peakWaiting > DefaultMaxWaiting || peakRunning > maxRunning || peakTargets > DefaultMaxWaiting+maxRunning {
		t.Errorf("at the peak %d waiting, %d running, %d targets: want at most %d, %d and %d",
			peakWaiting, peakRunning, peakTargets, DefaultMaxWaiting, maxRunning, DefaultMaxWaiting+maxRunning)
	}
}

// TestProbeTimeoutClamped (issue 47, item 2): a scrape timeout of 1e6 s
// is taken as the exporter's longest, so that a probe cannot hold its
// place for days. Before, 1e6 s was accepted.
func TestProbeTimeoutClamped(t *testing.T) {
	h := newHarness(t, "modules:\n  fit: {}\n", func(o *Options) { o.MaxTimeout = 3 * time.Second })
	h.run.gate = make(chan struct{}) // the test runs until its context ends
	defer close(h.run.gate)
	a := h.scrape("debug=true&module=fit&target=127.0.0.1", 1e6)
	if a.err != nil {
		t.Fatal(a.err)
	}
	if a.took > 3*time.Second {
		t.Errorf("a 1e6 s scrape held for %v, want at most the exporter's longest, 3 s", a.took.Round(time.Millisecond))
	}
	if !strings.Contains(a.body, "over the exporter's longest") || !strings.Contains(a.body, "\nprobe_success 0\n") {
		t.Errorf("the answer does not say the timeout was cut:\n%s", a.body)
	}
}

// TestProbeTellsNothingOfNonServers (issue 47, item 9): a closed port, a
// silent one, an SSH server and a service that answers with other bytes
// are one sentence to the exporter's client, in the debug answer, the
// probe's log, /recent and the / page, answered at the probe's deadline
// every time; the exporter's own log has the cause. Before, the answers
// said "connection refused" in 3 ms, "no reply within 5s", "it is an SSH
// server", and quoted the other service's first bytes.
func TestProbeTellsNothingOfNonServers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	banner := func(b string) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				if b != "" {
					c.Write([]byte(b))
				}
				go func() {
					defer c.Close()
					io.Copy(io.Discard, c) // silent, or its banner said, until the client goes
				}()
			}
		}()
		return ln.Addr().String()
	}
	targets := map[string]string{
		"closed": closed,
		"silent": banner(""),
		"ssh":    banner("SSH-2.0-OpenSSH_9.6p1 Debian-4\r\n"),
		"other":  banner("QZXW-not-wirespeed\r\n"),
	}
	serverLog := &limitWriter{n: 1 << 20}
	h := newHarness(t, "modules:\n  fit: {}\n", func(o *Options) {
		o.Build = withMeasure(o.Build, clientMeasure)
		o.Logger = slog.New(slog.NewTextHandler(serverLog, nil))
	})
	const timeout = 4.0
	due := time.Duration((timeout - 0.5) * float64(time.Second))
	answers := map[string]chan scrape{}
	for name := range targets {
		answers[name] = make(chan scrape, 1)
	}
	for name, addr := range targets {
		ch := answers[name]
		go func() { ch <- h.scrape("debug=true&module=fit&target="+addr, timeout) }()
	}
	for name, addr := range targets {
		a := <-answers[name]
		if a.err != nil {
			t.Fatalf("%s: %v", name, a.err)
		}
		if a.took < due-100*time.Millisecond || a.took > due+300*time.Millisecond {
			t.Errorf("%s: answered after %v, want at the deadline, %v", name, a.took.Round(time.Millisecond), due)
		}
		if want := notReached(addr); !strings.Contains(a.body, want) || !strings.Contains(a.body, "\nprobe_success 0\n") {
			t.Errorf("%s: want probe_success 0 and %q:\n%s", name, want, a.body)
		}
		for _, tell := range []string{"refused", "SSH", "QZXW", "no reply", "closed the connection", "control connection open", "connect to"} {
			if strings.Contains(a.body, tell) {
				t.Errorf("%s: the answer says %q:\n%s", name, tell, a.body)
			}
		}
	}
	_, recent := h.get(t, "/recent")
	_, page := h.get(t, "/")
	for _, tell := range []string{"refused", "SSH", "QZXW", "no reply"} {
		if strings.Contains(recent, tell) || strings.Contains(page, tell) {
			t.Errorf("/recent or / says %q:\n%s\n%s", tell, recent, page)
		}
	}
	// The cause is in the exporter's own log.
	logged := serverLog.seal()
	for _, cause := range []string{"connection refused", "it is an SSH server", "QZXW"} {
		if !strings.Contains(logged, cause) {
			t.Errorf("the exporter's log lacks %q:\n%s", cause, logged)
		}
	}
}

// TestProbeShortScrapeFirst (issue 47, item 2): the global slots go to
// the waiting probe whose test must start soonest, so probes with long
// timeouts (a client's 600 s, taken as 120 s) hold no probe of a 6 s
// scrape back. Before, the slots went in order of arrival: a legitimate
// 15 s scrape behind an attacker's waiting probes got queue_timeout after
// 11.5 s.
func TestProbeShortScrapeFirst(t *testing.T) {
	h := newHarness(t, twoModules, func(o *Options) { o.MaxConcurrent = 1 })
	h.run.gate = make(chan struct{})
	done := make(chan float64, 5)
	probe := func(target string, timeout float64) {
		go func() { done <- h.probe(t, "module=fit&target="+target, timeout)["probe_success"] }()
	}
	waiting := func(n float64) bool {
		_, m := h.get(t, "/metrics")
		return parseSamples(t, strings.NewReader(m))["wirespeed_exporter_probes_waiting"] == n
	}
	probe("127.0.0.1", 600)
	if !testkit.WaitFor(5*time.Second, func() bool {
		h.run.mu.Lock()
		defer h.run.mu.Unlock()
		return len(h.run.asked) == 1
	}) {
		t.Fatal("the first probe never started")
	}
	for i, target := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		probe(target, 600)
		if !testkit.WaitFor(5*time.Second, func() bool { return waiting(float64(i + 1)) }) {
			t.Fatalf("probe of %s not waiting", target)
		}
	}
	probe("127.0.0.5", 6)
	if !testkit.WaitFor(5*time.Second, func() bool { return waiting(4) }) {
		t.Fatal("the short scrape's probe not waiting")
	}
	close(h.run.gate)
	for range 5 {
		if s := <-done; s != 1 {
			t.Errorf("a probe failed: probe_success %g", s)
		}
	}
	h.run.mu.Lock()
	defer h.run.mu.Unlock()
	if got := h.run.addrs[1]; got != "127.0.0.5:7575" {
		t.Errorf("ran in the order %v: the 6 s scrape's probe waited behind those of 600 s", h.run.addrs)
	}
}
