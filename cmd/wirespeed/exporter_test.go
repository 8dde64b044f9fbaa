package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"wirespeed/internal/record"

	"sigs.k8s.io/yaml"

	"wirespeed/internal/archive"
	"wirespeed/internal/result"
	"wirespeed/internal/testkit"
)

// The exporter end to end: `wirespeed serve` and `wirespeed exporter` as
// processes of this binary, and a real Prometheus (Debian's prometheus
// package) scraping the exporter through the relabelling that
// deploy/prometheus/prometheus.yml shows.

// startProcess starts cmd and waits until addr accepts connections; it is
// stopped when the test ends, and its log shown when the test failed.
func startProcess(t *testing.T, name string, cmd *exec.Cmd, addr string) {
	t.Helper()
	serveIn(t, name, cmd, func(c *exec.Cmd) error { return c.Start() }, func(f func() error) error { return f() }, addr)
}

// startExporter writes modules to a file and starts the exporter on
// loopback with it, allowing loopback targets only.
func startExporter(t *testing.T, modules string, extra ...string) string {
	t.Helper()
	addr, _, _ := startExporterCmd(t, modules, extra...)
	return addr
}

// startExporterCmd is startExporter, returning the process and the
// modules file too.
func startExporterCmd(t *testing.T, modules string, extra ...string) (addr string, cmd *exec.Cmd, config string) {
	t.Helper()
	config = filepath.Join(t.TempDir(), "probes.yml")
	if err := os.WriteFile(config, []byte(modules), 0o600); err != nil {
		t.Fatal(err)
	}
	addr = testkit.FreeAddr(t)
	cmd = wirespeed(append([]string{"exporter", "--config", config, "--listen", addr,
		"--allow-targets", "127.0.0.0/8", "--log-level", "debug"}, extra...)...)
	startProcess(t, "the exporter", cmd, addr)
	return addr, cmd, config
}

func startServer(t *testing.T) (string, *exec.Cmd) {
	t.Helper()
	addr := testkit.FreeAddr(t)
	srv := wirespeed("serve", "--listen", addr, "--log-level", "warn")
	startProcess(t, "the server", srv, addr)
	return addr, srv
}

func httpGet(t *testing.T, u string) []byte {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v\n%s", u, resp.StatusCode, err, b)
	}
	return b
}

// sample is one stored value of a series, as Prometheus's API gives it.
type sample struct {
	At    float64 // seconds since the epoch, the scrape's time
	Value string  // as Prometheus formats it
}

// promSeries asks Prometheus's HTTP API for the raw samples of the last
// minute of query (a selector) and returns them by series, the series
// named by its labels.
func promSeries(t *testing.T, prom, query string) map[string][]sample {
	t.Helper()
	b := httpGet(t, "http://"+prom+"/api/v1/query?query="+url.QueryEscape(query+"[1m]"))
	var resp struct {
		Status string
		Data   struct {
			ResultType string
			Result     []struct {
				Metric map[string]string
				Values [][2]any
			}
		}
	}
	if err := json.Unmarshal(b, &resp); err != nil || resp.Status != "success" || resp.Data.ResultType != "matrix" {
		t.Fatalf("query %s: %v\n%s", query, err, b)
	}
	out := map[string][]sample{}
	for _, r := range resp.Data.Result {
		var s []sample
		for _, v := range r.Values {
			s = append(s, sample{At: v[0].(float64), Value: v[1].(string)})
		}
		out[fmt.Sprint(r.Metric)] = s
	}
	return out
}

// only returns the samples of the one series a query found.
func only(t *testing.T, series map[string][]sample, what string) []sample {
	t.Helper()
	if len(series) != 1 {
		t.Fatalf("%s: %d series, want 1: %v", what, len(series), series)
	}
	for _, s := range series {
		return s
	}
	return nil
}

func valueAt(samples []sample, at float64) (string, bool) {
	for _, s := range samples {
		if s.At == at {
			return s.Value, true
		}
	}
	return "", false
}

// scrapeConfig returns a Prometheus configuration of one job, the one
// named job of the file, scraping target through the exporter at exp with
// module, every interval (also the timeout). Every relabelling rule of
// the file's job is kept; the one whose replacement is the exporter's
// address gets exp.
func scrapeConfig(t *testing.T, file, job, target, exp, module, interval string) []byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ScrapeConfigs []map[string]any `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, j := range doc.ScrapeConfigs {
		if j["job_name"] != job {
			continue
		}
		j["static_configs"] = []any{map[string]any{"targets": []string{target}}}
		j["params"] = map[string]any{"module": []string{module}}
		j["scrape_interval"], j["scrape_timeout"] = interval, interval
		swapped := false
		for _, r := range j["relabel_configs"].([]any) {
			r := r.(map[string]any)
			if r["target_label"] == "__address__" {
				r["replacement"], swapped = exp, true
			}
		}
		if !swapped {
			t.Fatalf("%s: job %s has no relabelling to the exporter's __address__", file, job)
		}
		out, err := yaml.Marshal(map[string]any{"scrape_configs": []any{j}})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Fatalf("%s: no job %s", file, job)
	return nil
}

// TestPrometheusScrapesExporter: Prometheus, scraping the exporter with
// the multi-target relabelling, stores probe_success 1 and the throughput
// the probe's own results document gives; with the server stopped it
// stores probe_success 0 (a value, not a gap).
func TestPrometheusScrapesExporter(t *testing.T) {
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("needs Prometheus: install Debian's prometheus package (apt-get install prometheus)")
	}
	server, srv := startServer(t)
	exp := startExporter(t, "modules:\n  tcp_1s:\n    test: TCP_STREAM\n    length: 1s\n    parallel: 2\n")

	dir := t.TempDir()
	promAddr := testkit.FreeAddr(t)
	// The wirespeed job of deploy/prometheus/prometheus.yml, relabelling
	// and all: only its targets, module, exporter address and timing are
	// the test's. 4 s leave the 1 s test, the 2 s set-up and the 0.5 s
	// offset room.
	cfg := scrapeConfig(t, "../../deploy/prometheus/prometheus.yml", "wirespeed", server, exp, "tcp_1s", "4s")
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	prom := exec.Command(promBin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	// Started here rather than by startProcess, whose 10 s for the
	// first connection a loaded CI machine once outlasted: /-/ready
	// below waits 30 s for both the listener and the storage.
	var promLog bytes.Buffer
	prom.Stderr = &promLog
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		prom.Process.Signal(syscall.SIGTERM)
		prom.Wait()
		if t.Failed() {
			t.Logf("log of prometheus:\n%s", promLog.String())
		}
	})
	// It accepts connections before its storage is open: queries answer
	// 503 until /-/ready says 200.
	if !testkit.WaitFor(30*time.Second, func() bool {
		resp, err := http.Get("http://" + promAddr + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			time.Sleep(100 * time.Millisecond)
		}
		return resp.StatusCode == 200
	}) {
		t.Fatal("Prometheus never became ready")
	}

	// Wait for a stored probe_success 1.
	var ok sample
	found := testkit.WaitFor(30*time.Second, func() bool {
		for _, series := range promSeries(t, promAddr, `probe_success{job="wirespeed",instance="`+server+`"}`) {
			for _, s := range series {
				if s.Value == "1" {
					ok = s
					return true
				}
			}
		}
		time.Sleep(500 * time.Millisecond)
		return false
	})
	if !found {
		t.Fatalf("Prometheus stored no probe_success 1 within 30 s; exporter's recent probes:\n%s", httpGet(t, "http://"+exp+"/recent"))
	}
	// The same scrape's throughput and start, by the scrape's timestamp.
	tput, ok1 := valueAt(only(t, promSeries(t, promAddr, `wirespeed_probe_throughput_bits_per_second{instance="`+server+`",direction="client_to_server"}`), "throughput"), ok.At)
	started, ok2 := valueAt(only(t, promSeries(t, promAddr, `wirespeed_probe_started_timestamp_seconds{instance="`+server+`"}`), "started"), ok.At)
	if !ok1 || !ok2 {
		t.Fatalf("the scrape at %v stored probe_success 1 but no throughput (%v) or start (%v)", ok.At, ok1, ok2)
	}
	t.Logf("Prometheus at %.3f: probe_success 1, wirespeed_probe_throughput_bits_per_second %s, started %s", ok.At, tput, started)

	// The probe's results document, found by its start.
	startedS, _ := strconv.ParseFloat(started, 64)
	var recent []struct {
		ID            uint64
		ResultStarted *time.Time `json:"result_started"`
	}
	if err := json.Unmarshal(httpGet(t, "http://"+exp+"/recent"), &recent); err != nil {
		t.Fatal(err)
	}
	var id uint64
	for _, r := range recent {
		if r.ResultStarted != nil && math.Abs(float64(r.ResultStarted.UnixNano())/1e9-startedS) < 1e-6 {
			id = r.ID
		}
	}
	if id == 0 {
		t.Fatalf("no recent probe of the exporter started at %s", started)
	}
	var doc result.Document
	if err := json.Unmarshal(httpGet(t, fmt.Sprintf("http://%s/result?id=%d", exp, id)), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Directions) != 1 || doc.Spec.Parallel != 2 || doc.Spec.Duration != time.Second {
		t.Fatalf("probe %d's document: %d directions, spec %+v", id, len(doc.Directions), doc.Spec)
	}
	want := doc.Directions[0].Summary.BitsPerSecond
	got, _ := strconv.ParseFloat(tput, 64)
	if want <= 0 || math.Abs(got-want) > 1e-9*want {
		t.Errorf("Prometheus stored %s bit/s, the probe's document says %v", tput, want)
	}
	t.Logf("probe %d's document: directions[0].summary.throughput_bps %v", id, want)

	// The server goes down: the next scrapes store probe_success 0.
	down := float64(time.Now().UnixNano()) / 1e9
	srv.Process.Signal(syscall.SIGTERM)
	var zero sample
	found = testkit.WaitFor(30*time.Second, func() bool {
		for _, series := range promSeries(t, promAddr, `probe_success{instance="`+server+`"}`) {
			for _, s := range series {
				if s.At > down && s.Value == "0" {
					zero = s
					return true
				}
			}
		}
		time.Sleep(500 * time.Millisecond)
		return false
	})
	if !found {
		t.Fatal("with the server stopped Prometheus stored no probe_success 0 within 30 s")
	}
	up := only(t, promSeries(t, promAddr, `up{job="wirespeed"}`), "up")
	if v, ok := valueAt(up, zero.At); !ok || v != "1" {
		t.Errorf("up at the failed probe's scrape: %q (stored %v), want 1: the exporter answered", v, ok)
	}
	if _, ok := valueAt(only(t, promSeries(t, promAddr, `wirespeed_probe_throughput_bits_per_second{instance="`+server+`"}`), "throughput"), zero.At); ok {
		t.Error("a failed probe stored a throughput")
	}
	t.Logf("Prometheus at %.3f, server stopped: probe_success 0", zero.At)
	metrics := string(httpGet(t, "http://"+exp+"/metrics"))
	if !strings.Contains(metrics, `wirespeed_exporter_probe_failures_total{reason="test_failed"} `) ||
		strings.Contains(metrics, `wirespeed_exporter_probe_failures_total{reason="test_failed"} 0`) {
		t.Errorf("the exporter's metrics count no failed test:\n%s", metrics)
	}
}

// TestExporterFQRate: a probe of a module paced to 250 Mbit/s by
// --fq-rate reports within 5% of 250e6 bit/s.
func TestExporterFQRate(t *testing.T) {
	testkit.Serial(t)
	server, _ := startServer(t)
	exp := startExporter(t, "modules:\n  fq_250m:\n    fq-rate: 250M\n    length: 3s\n    omit: 500ms\n")
	const want = 250e6
	testkit.RetryRate(t, 3, func(int) testkit.RateAttempt {
		req, _ := http.NewRequest("GET", "http://"+exp+"/probe?module=fq_250m&target="+server, nil)
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "10")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got, util := math.NaN(), math.NaN()
		for _, line := range strings.Split(string(b), "\n") {
			name, v, _ := strings.Cut(line, " ")
			f, _ := strconv.ParseFloat(v, 64)
			switch name {
			case `wirespeed_probe_throughput_bits_per_second{direction="client_to_server"}`:
				got = f
			case `wirespeed_probe_cpu_utilization_ratio{side="local"}`:
				util = f
			case "probe_success":
				if f != 1 {
					t.Fatalf("probe failed:\n%s", b)
				}
			}
		}
		return testkit.RateAttempt{Got: got, Want: want, Tol: 0.05, Starved: testkit.CPUStarved(100*util, 0, 0, 0),
			Detail: fmt.Sprintf("local CPU %.0f%%", 100*util)}
	})
}

// exporterMetric reads one sample of the exporter's own /metrics.
func exporterMetric(t *testing.T, exp, name string) float64 {
	t.Helper()
	for _, line := range strings.Split(string(httpGet(t, "http://"+exp+"/metrics")), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("no %s on the exporter's /metrics", name)
	return 0
}

// TestExporterBadProbes: the exporter process, with --allow-targets and
// --max-length from its command line, answers an unknown module with HTTP
// 400 (blackbox_exporter's answer) and each other bad probe with HTTP
// 200 and probe_success 0, the reason in the debug log, each counted, and
// keeps serving; SIGHUP reloads its modules, and a bad file is refused
// with the modules in force kept. No test runs: nothing listens on the
// targets.
func TestExporterBadProbes(t *testing.T) {
	exp, cmd, config := startExporterCmd(t, "modules:\n  tcp:\n    length: 1s\n  long:\n    length: 2m\n", "--max-length", "30s")
	before := exporterMetric(t, exp, `wirespeed_exporter_probe_failures_total{reason="unknown_module"}`)
	resp, err := http.Get("http://" + exp + "/probe?debug=true&module=nope&target=127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), `unknown module "nope": the configuration has long, tcp`) {
		t.Errorf("unknown module: %d %s, want 400 naming the modules", resp.StatusCode, b)
	}
	if after := exporterMetric(t, exp, `wirespeed_exporter_probe_failures_total{reason="unknown_module"}`); after != before+1 {
		t.Errorf("failures by unknown_module went from %g to %g", before, after)
	}
	for _, c := range []struct{ query, reason string }{
		{"module=tcp&target=http://127.0.0.1:7575/", "bad_target"},
		{"module=tcp&target=127.0.0.1:0", "bad_target"},
		{"module=tcp&target=192.0.2.1", "target_not_allowed"},
		{"module=long&target=127.0.0.1", "max_length"},
	} {
		before := exporterMetric(t, exp, `wirespeed_exporter_probe_failures_total{reason="`+c.reason+`"}`)
		body := string(httpGet(t, "http://"+exp+"/probe?debug=true&"+c.query))
		if !strings.Contains(body, "\nprobe_success 0\n") || !strings.Contains(body, "reason="+c.reason) {
			t.Errorf("%s: want probe_success 0 and reason=%s in the debug answer:\n%s", c.query, c.reason, body)
		}
		if after := exporterMetric(t, exp, `wirespeed_exporter_probe_failures_total{reason="`+c.reason+`"}`); after != before+1 {
			t.Errorf("%s: failures by %s went from %g to %g", c.query, c.reason, before, after)
		}
	}
	if cmd.ProcessState != nil {
		t.Fatal("the exporter exited")
	}

	// SIGHUP: a good file replaces the modules, a bad one is refused.
	os.WriteFile(config, []byte("modules:\n  a: {}\n  b: {}\n  c: {}\n"), 0o600)
	cmd.Process.Signal(syscall.SIGHUP)
	if !testkit.WaitFor(5*time.Second, func() bool { return exporterMetric(t, exp, "wirespeed_exporter_config_modules") == 3 }) {
		t.Fatal("SIGHUP did not load the three modules")
	}
	os.WriteFile(config, []byte("modules:\n  a:\n    lenght: 1s\n"), 0o600)
	cmd.Process.Signal(syscall.SIGHUP)
	if !testkit.WaitFor(5*time.Second, func() bool { return exporterMetric(t, exp, "wirespeed_exporter_config_last_reload_successful") == 0 }) {
		t.Fatal("a bad file on SIGHUP was not refused")
	}
	if n := exporterMetric(t, exp, "wirespeed_exporter_config_modules"); n != 3 {
		t.Errorf("after a refused reload %g modules, want the 3 in force", n)
	}
	if page := string(httpGet(t, "http://"+exp+"/")); !strings.Contains(page, "<td>c</td>") {
		t.Errorf("the / page does not list module c:\n%s", page)
	}
}

// TestExporterArchive: with --archive every probe's results document is
// kept, its throughput the one the probe answered.
func TestExporterArchive(t *testing.T) {
	server, _ := startServer(t)
	db := filepath.Join(t.TempDir(), "probes.db")
	exp := startExporter(t, "modules:\n  tcp_1s:\n    length: 1s\n", "--archive", db)
	b := string(httpGet(t, "http://"+exp+"/probe?module=tcp_1s&target="+server))
	var answered float64
	for _, line := range strings.Split(b, "\n") {
		if v, ok := strings.CutPrefix(line, `wirespeed_probe_throughput_bits_per_second{direction="client_to_server"} `); ok {
			answered, _ = strconv.ParseFloat(v, 64)
		}
	}
	if answered <= 0 || !strings.Contains(b, "\nprobe_success 1\n") {
		t.Fatalf("the probe failed:\n%s", b)
	}
	// The probe keeps its document after answering: wait for it.
	var rows []archive.Row
	if !testkit.WaitFor(30*time.Second, func() bool {
		a, err := archive.Open(context.Background(), archive.Target{Backend: archive.SQLite, Path: db})
		if err != nil {
			return false
		}
		defer a.Close()
		rows, err = a.Results(context.Background(), archive.Filter{})
		return err == nil && len(rows) > 0
	}) {
		t.Fatalf("nothing in the archive %s", db)
	}
	if len(rows) != 1 || rows[0].Command != "exporter" || rows[0].Test != "TCP_STREAM" || rows[0].Figures[record.Throughput.Name] != answered {
		t.Errorf("archived %+v, want one TCP_STREAM row of the exporter at %v bit/s", rows, answered)
	}
}
