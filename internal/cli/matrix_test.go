package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/iterate"
	"wirespeed/internal/matrix"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

func TestMatrixUsageErrors(t *testing.T) {
	tests := []struct {
		args     []string
		inStderr string
	}{
		{[]string{"matrix", "--dev", "wst-x"}, "at least one --set"},
		{[]string{"matrix", "--set", "tso=on,off"}, "--dev IFACE"},
		{[]string{"matrix", "--dev", "wst-x", "--remote-netns", "wst-y", "--set", "tso=on,off"}, "give --remote-dev"},
		{[]string{"matrix", "--dev", "wst-x", "--set", "remote:tso=on,off"}, "give --remote-dev"},
		{[]string{"matrix", "--remote-dev", "wst-x", "--set", "local:tso=on,off"}, "give --dev"},
		{[]string{"matrix", "--dev", "wst-x", "--set", "tso=on,off", "--sizes", "64", "-m", "64"}, "drop -m"},
		{[]string{"matrix", "--set", "direction=stream", "--tradeoff"}, "--tradeoff varies the direction"},
		{[]string{"matrix", "--set", "direction=stream,maerts", "-t", "TCP_MAERTS"}, "drop -t"},
		{[]string{"matrix", "--tradeoff", "-t", "TCP_RR"}, "--tradeoff"},
		{[]string{"matrix", "--set", "direction=stream,sideways"}, "not a direction"},
		{[]string{"matrix", "a", "b"}, "at most one"},
	}
	for _, tt := range tests {
		code, _, stderr := runMain(t, tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.inStderr) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, ExitUsage, tt.inStderr)
		}
	}
}

// TestMatrixRemoteRefused: against a server without --allow-netconf, a
// remote change is refused before anything changes, and the message says
// what the server needs, and no more.
func TestMatrixRemoteRefused(t *testing.T) {
	code, out, stderr := execute(t, context.Background(), "matrix", "--remote-dev", "lo", "--set", "mtu=65536", "-l", "0.2")
	if code != ExitRuntime || !strings.Contains(stderr, "--allow-netconf") || !strings.Contains(stderr, "authenticated") {
		t.Errorf("exit %d, stderr %q, stdout %q", code, stderr, out)
	}
	// Nothing changed, so nothing failed to be restored (issue 18).
	if strings.Contains(strings.ToLower(out+stderr), "restore failed") {
		t.Errorf("a refused matrix reports a failed restore:\nstdout %q\nstderr %q", out, stderr)
	}
}

// TestMatrixTradeoffCompared: --tradeoff in a matrix is the direction
// dimension (stream, then maerts; no device to change, against the
// embedded server), with iterations; compare on the document then tests
// TCP_MAERTS against TCP_STREAM point by point, with four iterations a
// side.
func TestMatrixTradeoffCompared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.json")
	code, out, errOut := execute(t, context.Background(), "matrix", "--tradeoff", "-l", "0.2", "-i", "0", "--iterations", "4,4", "-o", path)
	if code != ExitOK {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if !strings.Contains(out, "matrix of direction TCP_STREAM,TCP_MAERTS (no device changed): 2 combinations") {
		t.Errorf("heading:\n%s", out)
	}
	doc, err := result.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range doc.Matrix.Rows {
		if len(r.Points) != 1 || len(r.Points[0].Iterations) != 4 {
			t.Fatalf("row %s: %d points", r.Label, len(r.Points))
		}
		kinds = append(kinds, string(r.Points[0].Spec.Kind))
	}
	if strings.Join(kinds, ",") != "TCP_STREAM,TCP_MAERTS" {
		t.Errorf("rows measured %v", kinds)
	}

	code, cmpOut, errOut := runMain(t, "compare", path)
	if code != ExitOK {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"across directions", "TCP_STREAM -> TCP_MAERTS", "4+4"} {
		if !strings.Contains(cmpOut, want) {
			t.Errorf("compare lacks %q:\n%s", want, cmpOut)
		}
	}
	code, jsonOut, _ := runMain(t, "compare", "--json", path)
	var cd struct {
		AcrossDirections bool `json:"across_directions"`
		Figures          []struct {
			Figure string
			Points []struct {
				Compared []struct {
					N         int
					P         float64
					PAdjusted float64 `json:"p_adjusted"`
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(jsonOut), &cd); code != ExitOK || err != nil {
		t.Fatalf("compare --json: exit %d, %v", code, err)
	}
	if !cd.AcrossDirections || cd.Figures[0].Figure != "throughput_bps" {
		t.Fatalf("compare document %+v", cd)
	}
	// With 4 and 4 iterations the U test's p is a count over C(8,4) = 70
	// arrangements: at least 2/70, and no adjustment makes it smaller.
	c := cd.Figures[0].Points[0].Compared[0]
	if c.N != 4 || c.P < 2.0/70-1e-9 || c.P > 1 || c.PAdjusted < c.P {
		t.Errorf("throughput comparison %+v", c)
	}
}

// TestMatrixProgressLine: each iteration's line names the row, the size
// and the time left. Worked by hand: 6 iterations in 60 s are 10 s each;
// the finished points took 3 each; the current one is at its 2nd of at
// most 5, so 1 more (as the finished ones took), and 2 points after it take 3 each: 7 iterations,
// 70 s. A point that stopped counts no more of its own.
func TestMatrixProgressLine(t *testing.T) {
	ev := iterate.Event{Iteration: 2, Max: 5, Done: true}
	if got := matrixLeft(60*time.Second, 6, ev, 2, 2, 6); got != "elapsed 1m0s, about 1m10s left" {
		t.Errorf("matrixLeft = %q, want elapsed 1m0s, about 1m10s left", got)
	}
	ev.Stop = true
	if got := matrixLeft(60*time.Second, 6, ev, 2, 2, 6); got != "elapsed 1m0s, about 1m0s left" {
		t.Errorf("matrixLeft after a stop = %q, want about 1m0s left", got)
	}
	var errOut strings.Builder
	o := &matrixObserver{e: &env{stderr: &errOut}, sizes: []int{1460, 131072}}
	ev = iterate.Event{Iteration: 1, Max: 3, Done: true}
	ev.Result.Spec = spec.Default()
	ev.Result.Spec.SendSize = 131072
	o.Iteration(1, 4, "tso=on", ev)
	if line := errOut.String(); !strings.Contains(line, "matrix: row 1 of 4 (tso=on), 131072 bytes; ") || !strings.Contains(line, " left\n") {
		t.Errorf("progress line %q: want the row, its size and the time left", line)
	}
}

// TestMatrixResume interrupts a real matrix (of directions, against the
// embedded server: no device to change) once its first row is in the
// file, then resumes it from the file: the first row is kept as it was
// measured (its start time unchanged), the others are measured, and the
// document ends with every row once, in order. A resume with other
// settings is refused, naming each setting that differs.
func TestMatrixResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.json")
	args := []string{"matrix", "--set", "direction=stream,maerts,bidir", "-l", "0.3", "-i", "0", "--cpu=false"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Ctrl-C as soon as the file holds the first row.
		for ctx.Err() == nil {
			if doc, err := result.ReadFile(path); err == nil && doc.Matrix != nil && len(doc.Matrix.Rows) >= 1 {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	code, _, errOut := execute(t, ctx, append(args, "-o", path)...)
	if code != ExitRuntime || !strings.Contains(errOut, "interrupted") {
		t.Fatalf("interrupted matrix: exit %d: %s", code, errOut)
	}
	first, err := result.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Interrupted || len(first.Matrix.Rows) == 0 || len(first.Matrix.Rows) > 2 {
		t.Fatalf("interrupted file: interrupted %v, %d rows", first.Interrupted, len(first.Matrix.Rows))
	}
	if want := "continue with the same command and --resume " + path; !strings.Contains(errOut, want) || !strings.Contains(errOut, "direction=TCP_BIDIR") {
		t.Errorf("the interrupted matrix does not list its rows left and say %q:\n%s", want, errOut)
	}
	kept := first.Matrix.Rows[0]

	// Other settings: refused by name, nothing measured, the file as it was.
	for _, tc := range []struct {
		extra []string
		want  string
	}{
		{[]string{"-P", "2"}, "parallel 1 in the file, 2 now"},
		{[]string{"--cc", "cubic"}, "congestion_control"},
		{[]string{"--iterations", "3,2"}, "iterations and confidence"},
	} {
		code, _, errOut := execute(t, context.Background(), append(append(slices.Clone(args), tc.extra...), "--resume", path)...)
		if code != ExitUsage || !strings.Contains(errOut, "other settings") || !strings.Contains(errOut, tc.want) {
			t.Errorf("resume with %v: exit %d, want a usage error naming %q: %s", tc.extra, code, tc.want, errOut)
		}
	}
	code, _, errOut = execute(t, context.Background(), "matrix", "--set", "direction=stream,maerts", "-l", "0.3", "-i", "0", "--cpu=false", "--resume", path)
	if code != ExitUsage || !strings.Contains(errOut, "--set direction=TCP_STREAM,TCP_MAERTS,TCP_BIDIR in the file") {
		t.Errorf("resume with other --set: exit %d: %s", code, errOut)
	}
	code, _, errOut = execute(t, context.Background(), append(slices.Clone(args), "--resume", path, "-o", path+".csv")...)
	if code != ExitUsage || !strings.Contains(errOut, "writes the matrix back to that file") {
		t.Errorf("resume with another -o: exit %d: %s", code, errOut)
	}

	code, out, errOut := execute(t, context.Background(), append(slices.Clone(args), "--resume", path)...)
	if code != ExitOK {
		t.Fatalf("resumed matrix: exit %d: %s\n%s", code, errOut, out)
	}
	doc, err := result.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for i, r := range doc.Matrix.Rows {
		labels = append(labels, r.Label)
		if r.Index != i+1 || !matrix.Complete(r) || r.Points[0].Summary.BitsPerSecond <= 0 {
			t.Errorf("row %d (%s): index %d, complete %v", i+1, r.Label, r.Index, matrix.Complete(r))
		}
	}
	if want := "direction=TCP_STREAM,direction=TCP_MAERTS,direction=TCP_BIDIR"; strings.Join(labels, ",") != want || doc.Interrupted {
		t.Errorf("resumed file: rows %v (want %s), interrupted %v", labels, want, doc.Interrupted)
	}
	if got := doc.Matrix.Rows[0].Points[0]; !got.Started.Equal(kept.Points[0].Started) || got.Summary.BitsPerSecond != kept.Points[0].Summary.BitsPerSecond {
		t.Errorf("row 1 was measured again: started %v, was %v", got.Started, kept.Points[0].Started)
	}
	// The table shows every row, the kept one too.
	for _, k := range []string{"TCP_STREAM", "TCP_MAERTS", "TCP_BIDIR"} {
		if !strings.Contains(out, "  "+k+" ") {
			t.Errorf("table lacks the row of %s:\n%s", k, out)
		}
	}
}
