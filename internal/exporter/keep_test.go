package exporter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/sysinfo"
)

// hostileResult is the result of issue 47's server: within what the
// client accepts, about a megabyte: 250 warnings of 3.9 KB, a 40 KB
// environment string.
func hostileResult() result.Result {
	r := streamResult()
	for i := range 250 {
		r.Warnings = append(r.Warnings, result.Warning{Text: fmt.Sprintf("%03d %s", i, strings.Repeat("w", 3900))})
	}
	r.Remote.Env = &sysinfo.Env{Hostname: "srv", KernelRelease: strings.Repeat("k", 40000),
		Sysctls: map[string][]int64{strings.Repeat("s", 5000): {1}}}
	return r
}

// TestArchiveCut: a hostile result is archived cut to its bounds (32
// warnings, the last saying how many more there were; each string at
// most MaxArchivedString, marked), its honest figures whole; the
// document the probe answered from is left as it was.
func TestArchiveCut(t *testing.T) {
	doc := result.Document{Schema: result.Schema, Command: "exporter", Result: hostileResult()}
	whole, _ := json.Marshal(doc)
	c, b, err := cutForArchive(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) < 1e6 || len(b) > 64<<10 {
		t.Errorf("the document is %d bytes, cut %d; want about 1 MB cut to less than 64 KiB", len(whole), len(b))
	}
	w := c.doc.Warnings
	if len(w) != MaxArchivedWarnings || c.warnings != 250-31 || w[len(w)-1].Text != "219 more warnings "+ArchiveCutMark {
		t.Errorf("%d warnings, the last %.80q; want 32, the last saying 219 more were cut", len(w), w[len(w)-1].Text)
	}
	if !strings.HasPrefix(w[30].Text, "030 www") || !strings.Contains(w[30].Text, ArchiveCutMark+" (3904 bytes)") || len(w[30].Text) > MaxArchivedString {
		t.Errorf("warning 30 is %.80q... (%d bytes); want its start, cut and marked, at most %d bytes", w[30].Text, len(w[30].Text), MaxArchivedString)
	}
	env := c.doc.Remote.Env
	if len(env.KernelRelease) > MaxArchivedString || !strings.HasSuffix(env.KernelRelease, ArchiveCutMark+" (40000 bytes)") || env.Hostname != "srv" {
		t.Errorf("kernel release of %d bytes ending %q, hostname %q; want it cut, the hostname kept", len(env.KernelRelease), env.KernelRelease[len(env.KernelRelease)-40:], env.Hostname)
	}
	for k := range env.Sysctls {
		if len(k) > MaxArchivedString {
			t.Errorf("a sysctl's name of %d bytes kept", len(k))
		}
	}
	if c.strings != 31+2 || c.doc.Directions[0].Summary.BitsPerSecond != 9.5e8 {
		t.Errorf("%d strings cut, throughput %v; want 33 (31 warnings, the kernel, a sysctl) and 9.5e8", c.strings, c.doc.Directions[0].Summary.BitsPerSecond)
	}
	if again, _ := json.Marshal(doc); !bytes.Equal(again, whole) {
		t.Error("cutting changed the probe's own document")
	}
	// An honest result is archived as it is.
	honest := result.Document{Schema: result.Schema, Command: "exporter", Result: streamResult()}
	hb, _ := json.Marshal(honest)
	if c, b, _ := cutForArchive(honest); c.strings+c.warnings != 0 || !bytes.Equal(b, hb) {
		t.Errorf("an honest result was cut: %+v", c)
	}
}

// TestArchiveGate: a server's results are archived one an interval, all
// servers' within a budget of bytes an hour refilled as time passes, and
// a result too large even cut is not archived; each refusal is in the
// log.
func TestArchiveGate(t *testing.T) {
	now := time.Unix(1796000000, 0)
	var kept []string
	var logs bytes.Buffer
	g := newArchiveGate(func(_ context.Context, d result.Document) error {
		kept = append(kept, d.Remote.Address)
		return nil
	}, time.Minute, 100<<10, slog.New(slog.NewTextHandler(&logs, nil)), func() time.Time { return now })
	doc := func(server string, pad int) result.Document {
		r := streamResult()
		r.Remote.Address = server
		for range pad / 1000 {
			r.Warnings = append(r.Warnings, result.Warning{Text: strings.Repeat("p", 990)})
		}
		return result.Document{Schema: result.Schema, Command: "exporter", Result: r}
	}
	step := func(d time.Duration, server string, pad int) {
		now = now.Add(d)
		if err := g.Keep(context.Background(), doc(server, pad)); err != nil {
			t.Fatal(err)
		}
	}
	step(0, "a:1", 0)
	step(30*time.Second, "a:1", 0) // within the minute: not archived
	step(31*time.Second, "a:1", 0) // 61 s on: archived
	if strings.Join(kept, " ") != "a:1 a:1" {
		t.Errorf("kept %v; want the first and the one a minute later", kept)
	}
	// The budget: 100 KiB, less what a:1's two took (a few KB each);
	// 28 warnings of 990 bytes make about 30 KB.
	kept = nil
	step(0, "b:1", 28000)
	step(0, "c:1", 28000)
	step(0, "d:1", 28000)
	step(0, "e:1", 28000) // past the budget
	if strings.Join(kept, " ") != "b:1 c:1 d:1" || !strings.Contains(logs.String(), "budget is spent") {
		t.Errorf("kept %v; want b, c and d, then e refused with a log line:\n%s", kept, logs.String())
	}
	step(20*time.Minute, "e:1", 28000) // a third of the budget back
	if len(kept) != 4 || kept[3] != "e:1" {
		t.Errorf("kept %v; want e once the budget refilled", kept)
	}
	// Too large even cut: a million intervals.
	big := doc("f:1", 0)
	big.Intervals = make([]result.Interval, 1e5)
	for i := range big.Intervals {
		big.Intervals[i] = result.Interval{StartS: float64(i), EndS: float64(i + 1)}
	}
	g.budget, g.tokens = 1<<40, 1<<40
	kept = nil
	if err := g.Keep(context.Background(), big); err != nil {
		t.Fatal(err)
	}
	if len(kept) != 0 || !strings.Contains(logs.String(), "larger than the exporter archives") {
		t.Errorf("kept %v; want the large result refused with a log line", kept)
	}
}

// TestProbeArchiveBounded: issue 47's reproduction, 40 probes of a server
// whose result is a megabyte: one result is archived, cut, where 40 of a
// megabyte each were.
func TestProbeArchiveBounded(t *testing.T) {
	var mu sync.Mutex
	var kept [][]byte
	run := &fakeRun{}
	bad := hostileResult()
	h := newHarness(t, twoModules, func(o *Options) {
		measure := run.measure(bad)
		o.Build = fakeBuild(run, bad)
		build := o.Build
		o.Build = func(s []Setting) (Plan, error) {
			p, err := build(s)
			p.Measure = func(ctx context.Context, addr string, t spec.Test, log *slog.Logger) (result.Result, error) {
				r, err := measure(ctx, addr, t, log)
				r.Remote.Address = addr // as endpoint.Join does
				return r, err
			}
			return p, err
		}
		o.Keep = func(ctx context.Context, doc result.Document) error {
			b, _ := json.Marshal(doc)
			mu.Lock()
			defer mu.Unlock()
			kept = append(kept, b)
			return nil
		}
	})
	for range 40 {
		h.probe(t, "target=127.0.0.1&module=tcp", 10)
	}
	time.Sleep(100 * time.Millisecond) // the last probe's Keep runs after its answer
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, b := range kept {
		total += len(b)
	}
	t.Logf("40 probes archived %d results, %d bytes", len(kept), total)
	if len(kept) != 1 || total > 64<<10 || !bytes.Contains(kept[0], []byte(ArchiveCutMark)) {
		t.Errorf("40 probes archived %d results, %d bytes; want one, cut to less than 64 KiB", len(kept), total)
	}
}
