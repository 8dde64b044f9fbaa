package exporter

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestProbeCutShort: a test that did not run its whole length answers
// probe_success 0, counted as a failed test, whether or not it measured
// some directions before it stopped: Prometheus must not store a
// success, nor the partial figures as if they were the run's. The
// results are the hand-made streamResult with what a cut-short run
// carries, set here: Interrupted, or an error from the measurement,
// with its directions or without them.
func TestProbeCutShort(t *testing.T) {
	cases := []struct {
		name  string
		cut   bool  // result.Interrupted
		err   error // the measurement's error
		dirs  bool  // keep streamResult's one direction
		inLog string
	}{
		{"interrupted with a direction", true, nil, true, "the test was cut short before its end"},
		{"interrupted with none", true, nil, false, "the test was cut short before its end"},
		{"failed with a direction", false, errors.New("server went away"), true, "server went away"},
		{"failed with none", false, errors.New("server went away"), false, "server went away"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := streamResult()
			res.Interrupted = c.cut
			if !c.dirs {
				res.Directions = nil
			}
			run := &fakeRun{err: c.err}
			h := newHarness(t, twoModules, func(o *Options) { o.Build = fakeBuild(run, res) })

			got := h.probe(t, "target=127.0.0.1&module=tcp", 10)
			if got["probe_success"] != 0 {
				t.Errorf("probe_success %v, want 0 for a test that did not finish", got["probe_success"])
			}
			for k := range got {
				if strings.HasPrefix(k, "wirespeed_probe_throughput") || strings.HasPrefix(k, "wirespeed_probe_received_bytes") {
					t.Errorf("the cut-short test's figure %s = %v answered", k, got[k])
				}
			}
			if len(run.asked) != 1 {
				t.Fatalf("%d tests ran, want 1", len(run.asked))
			}

			_, m := h.get(t, "/metrics")
			counts := parseSamples(t, strings.NewReader(m))
			if g := counts["wirespeed_exporter_probe_failures_total{reason="+reasonTest+"}"]; g != 1 {
				t.Errorf("failures by %s: %g, want 1", reasonTest, g)
			}
			if g := counts["wirespeed_exporter_probes_total{module=tcp,result=failure}"]; g != 1 {
				t.Errorf("failures of module tcp: %g, want 1", g)
			}

			resp, err := http.Get(h.srv.URL + "/probe?target=127.0.0.1&module=tcp&debug=true")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body := string(b)
			if !strings.Contains(body, "\nprobe_success 0\n") || !strings.Contains(body, "reason="+reasonTest) || !strings.Contains(body, c.inLog) {
				t.Errorf("debug answer lacks probe_success 0, reason=%s and %q:\n%s", reasonTest, c.inLog, body)
			}
		})
	}
}
