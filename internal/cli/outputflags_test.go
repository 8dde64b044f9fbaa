package cli

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/result"
	"wirespeed/internal/testkit"
)

// TestFormatUnits: -f changes the units of the table and the interval
// lines, not the document: the table's throughput is the document's
// bits/s divided by 8*1024*1024 for -f M and by 10^9 for -f g, and each
// interval line's bitrate the interval's, in the same unit.
func TestFormatUnits(t *testing.T) {
	for _, tc := range []struct {
		unit, column, line string
		div                float64
	}{
		{"M", "MBytes/sec", "MBytes/sec", 8 * 1024 * 1024},
		{"g", "10^9bits/sec", "Gbits/sec", 1e9},
		{"k", "10^3bits/sec", "Kbits/sec", 1e3},
	} {
		t.Run(tc.unit, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "r.json")
			code, out, errOut := execute(t, context.Background(), "run", "-l", "0.4", "-i", "0.2", "--cpu=false", "-f", tc.unit, "-o", file)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			doc, err := result.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(`secs\.\s+` + regexp.QuoteMeta(tc.column)).MatchString(out) {
				t.Errorf("table heading lacks %s:\n%s", tc.column, out)
			}
			m := regexp.MustCompile(`(?m)^\s+\d+\s+\d+\s+\d+\s+[\d.]+\s+([\d.]+)\s+client->server$`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no table row:\n%s", out)
			}
			got, _ := strconv.ParseFloat(m[1], 64)
			want := doc.Summary.BitsPerSecond / tc.div
			if math.Abs(got-want) > 0.006 {
				t.Errorf("table shows %v %s, the document's %v bits/s is %v", got, tc.column, doc.Summary.BitsPerSecond, want)
			}
			lines := regexp.MustCompile(`(?m)^\[  1\] client->server .* sec .*  ([\d.]+) `+regexp.QuoteMeta(tc.line)+`  +\d+  `).FindAllStringSubmatch(out, -1)
			if len(lines) == 0 || len(lines) != len(doc.Intervals) {
				t.Fatalf("%d interval lines in %s for %d intervals:\n%s", len(lines), tc.line, len(doc.Intervals), out)
			}
			for i, l := range lines {
				got, _ := strconv.ParseFloat(l[1], 64)
				want := doc.Intervals[i].BitsPerSecond / tc.div
				if math.Abs(got-want) > 0.01*want+0.006 { // three significant digits
					t.Errorf("interval %d shows %v %s, the document's is %v", i, got, tc.line, want)
				}
			}
		})
	}
	if code, _, errOut := execute(t, context.Background(), "run", "-f", "x"); code != ExitUsage || !regexp.MustCompile(`format "x"`).MatchString(errOut) {
		t.Errorf("-f x: exit %d, %q", code, errOut)
	}
}

// TestTimestamps: --timestamps puts the wall-clock time of each tick in
// front of every interval line, in the strftime format given; the times
// lie within the run and do not go back.
func TestTimestamps(t *testing.T) {
	start := time.Now().Truncate(time.Second)
	code, out, errOut := execute(t, context.Background(), "run", "-l", "0.6", "-i", "0.2", "-P", "2", "--cpu=false", "--timestamps=%F %T ")
	end := time.Now()
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := regexp.MustCompile(`(?m)^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \[(  \d|SUM)\] client->server`).FindAllStringSubmatch(out, -1)
	if len(lines) < 6 { // 3 intervals, 2 streams and a sum each
		t.Fatalf("%d stamped interval lines:\n%s", len(lines), out)
	}
	if n := len(regexp.MustCompile(`(?m)^\[(  \d|SUM)\] client->server`).FindAllString(out, -1)); n > 0 {
		t.Errorf("%d interval lines without a timestamp:\n%s", n, out)
	}
	var last time.Time
	for _, l := range lines {
		at, err := time.ParseInLocation("2006-01-02 15:04:05", l[1], time.Local)
		if err != nil {
			t.Fatal(err)
		}
		if at.Before(start) || at.After(end) || at.Before(last) {
			t.Errorf("timestamp %s outside the run %s..%s or before %s", at, start, end, last)
		}
		last = at
	}
	if !strings.Contains(out, "Recv") || regexp.MustCompile(`(?m)^\d{4}-.*Recv`).MatchString(out) {
		t.Errorf("the table is stamped too:\n%s", out)
	}
	if code, _, errOut := execute(t, context.Background(), "run", "--timestamps=%Q"); code != ExitUsage || !strings.Contains(errOut, "%Q") {
		t.Errorf("--timestamps=%%Q: exit %d, %q", code, errOut)
	}
}

// TestLogfile: --logfile sends what run prints to the file, appending,
// and nothing to stdout.
func TestLogfile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "run.log")
	for i := 0; i < 2; i++ {
		code, out, errOut := execute(t, context.Background(), "run", "-l", "0.2", "-i", "0.1", "--cpu=false", "--logfile", file)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if out != "" {
			t.Errorf("run --logfile printed to stdout:\n%s", out)
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	if n := strings.Count(log, "wirespeed TCP_STREAM to"); n != 2 {
		t.Errorf("the log holds %d runs, want 2 (appended):\n%s", n, log)
	}
	if !strings.Contains(log, "10^6bits/sec") || !strings.Contains(log, "[  1] client->server") {
		t.Errorf("the log lacks the table or the interval lines:\n%s", log)
	}
	// Unwritable: a usage error naming it, before anything is
	// measured (issue 42; it was exit 1).
	code, _, errOut := execute(t, context.Background(), "run", "--logfile", filepath.Join(file, "no", "dir"))
	if code != ExitUsage || !strings.Contains(errOut, "--logfile "+filepath.Join(file, "no", "dir")) {
		t.Errorf("unwritable --logfile: exit %d, %q; want 2 naming it", code, errOut)
	}
	// A file that takes no writes (issue 32: /dev/full exited 0 and the
	// output was lost without a word).
	code, _, errOut = execute(t, context.Background(), "run", "-l", "0.2", "--cpu=false", "--logfile", "/dev/full")
	if code != ExitRuntime || !strings.Contains(errOut, "--logfile") || !strings.Contains(errOut, "no space left") {
		t.Errorf("--logfile /dev/full: exit %d, %q; want exit 1 naming --logfile and the error", code, errOut)
	}
}

// TestJSONStream: --json-stream prints one JSON object a line: start,
// an interval event per tick as it comes, and the document at the end;
// the interval events are the document's intervals, in order.
func TestJSONStream(t *testing.T) {
	code, out, errOut := execute(t, context.Background(), "run", "-l", "0.6", "-i", "0.2", "--cpu=false", "--json-stream")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var events []string
	var ticks []result.Tick
	var doc result.Document
	for i, l := range lines {
		var ev struct {
			Event string
			Data  json.RawMessage
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line %d is not one JSON object: %v\n%s", i+1, err, l)
		}
		events = append(events, ev.Event)
		switch ev.Event {
		case "interval":
			var tk result.Tick
			if err := json.Unmarshal(ev.Data, &tk); err != nil {
				t.Fatal(err)
			}
			ticks = append(ticks, tk)
		case "end":
			if err := json.Unmarshal(ev.Data, &doc); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(events) < 4 || events[0] != "start" || events[len(events)-1] != "end" {
		t.Fatalf("events %q: want start, intervals, end", events)
	}
	if doc.Schema != result.Schema || doc.Summary.BitsPerSecond <= 0 {
		t.Errorf("the end event is not the results document: %+v", doc.Summary)
	}
	if len(ticks) != len(doc.Intervals) {
		t.Fatalf("%d interval events, the document has %d intervals", len(ticks), len(doc.Intervals))
	}
	for i, tk := range ticks {
		if tk.Index != i || tk.Interval.Bytes != doc.Intervals[i].Bytes {
			t.Errorf("interval event %d: index %d, %d bytes; the document's interval has %d bytes", i, tk.Index, tk.Interval.Bytes, doc.Intervals[i].Bytes)
		}
	}
	// A run that cannot start ends its stream with an error event.
	code, out, _ = execute(t, context.Background(), "run", testkit.FreeAddr(t), "--json-stream")
	if code != ExitRuntime || !strings.HasPrefix(out, `{"event":"error","data":{"error":"connect to`) || strings.Count(out, "\n") != 1 {
		t.Errorf("unreachable server: exit %d, stream %q", code, out)
	}
}

// TestFields: --fields prints the chosen figures and nothing else: the
// throughput is the bytes over the elapsed time, worked out here from
// the other two fields, and the values are the document's.
func TestFields(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.json")
	code, out, errOut := execute(t, context.Background(), "run", "-l", "0.3", "-i", "0.1", "--cpu=false",
		"--fields", "test,bytes,elapsed_s,throughput_bps,latency_p99_us", "-o", file)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || lines[0] != "test,bytes,elapsed_s,throughput_bps,latency_p99_us" {
		t.Fatalf("output is not a header and one line:\n%s", out)
	}
	v := strings.Split(lines[1], ",")
	if len(v) != 5 || v[0] != "TCP_STREAM" || v[4] != "" {
		t.Fatalf("values %q", v)
	}
	bytes, _ := strconv.ParseFloat(v[1], 64)
	elapsed, _ := strconv.ParseFloat(v[2], 64)
	bps, _ := strconv.ParseFloat(v[3], 64)
	if bytes <= 0 || math.Abs(bps-8*bytes/elapsed) > 1e-6*bps {
		t.Errorf("throughput %v is not 8 x %v bytes / %v s", bps, bytes, elapsed)
	}
	doc, err := result.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bps != doc.Summary.BitsPerSecond || int64(bytes) != doc.Summary.Bytes {
		t.Errorf("fields %v bits/s, %v bytes; the document %v, %d", bps, bytes, doc.Summary.BitsPerSecond, doc.Summary.Bytes)
	}

	code, out, errOut = execute(t, context.Background(), "run", "-l", "0.2", "-t", "TCP_BIDIR", "--cpu=false", "--fields", "direction,retransmits", "--fields-style", "values")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !regexp.MustCompile(`^client_to_server,\d+\nserver_to_client,\d+\nboth,\d+\n$`).MatchString(out) {
		t.Errorf("values style:\n%s", out)
	}
	code, out, _ = execute(t, context.Background(), "run", "-l", "0.2", "--cpu=false", "--fields", "test,throughput_bps", "--fields-style", "table")
	if code != ExitOK || !regexp.MustCompile(`^\s+test\s+throughput_bps\n\s+TCP_STREAM\s+[\d.]+\n$`).MatchString(out) {
		t.Errorf("table style: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{
		{"run", "--fields", "speed"},
		{"run", "--fields", "bytes", "--fields-style", "xml"},
		{"run", "--fields", "bytes", "--json"},
	} {
		if code, _, errOut := execute(t, context.Background(), args...); code != ExitUsage || !strings.Contains(errOut, "fields") {
			t.Errorf("%q: exit %d, %q", args, code, errOut)
		}
	}
}
