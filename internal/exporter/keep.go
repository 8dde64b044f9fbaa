package exporter

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"wirespeed/internal/result"
)

// The archive sink's bounds: what the probes' results may take of the
// archive's disk, whoever names the targets and whatever their servers
// send. Before them, 40 probes of a server that sent a 1 MB result
// (250 warnings of 3.9 KB, a 40 KB environment string, all within what
// the client accepts) made a 32.5 MB archive in 20 s.
const (
	// DefaultArchiveEvery is the shortest time between two results of
	// one server (its address and port) the exporter archives; a probe
	// of the same server sooner is answered as any other, and its result
	// is not archived. One a minute is plenty for history; a scrape
	// interval of a minute or more loses nothing.
	DefaultArchiveEvery = time.Minute
	// DefaultArchiveBytesPerHour is the budget of the results' JSON the
	// exporter archives over all servers: a bucket of this many bytes,
	// refilled at this many an hour. A result past it is not archived
	// (a warning in the log, once an hour).
	DefaultArchiveBytesPerHour = 64 << 20
	// MaxArchivedString bounds each string of an archived result (a
	// warning's words, an environment record's values): a longer one is
	// cut to it, with ArchiveCutMark and the length it had.
	MaxArchivedString = 1 << 10
	// MaxArchivedWarnings bounds the warnings of an archived result;
	// those past it are replaced by one that says how many were cut.
	MaxArchivedWarnings = 32
	// MaxArchivedResult bounds an archived result's JSON once cut: a
	// larger one (its intervals, its streams) is not archived, with a
	// warning in the log. A 20 s RRUL run's is about 220 KB.
	MaxArchivedResult = 4 << 20
)

// ArchiveCutMark marks a string or a list of warnings cut for the
// archive.
const ArchiveCutMark = "[cut for the archive]"

// archiveGate is the exporter's archive sink: it hands Keep the probes'
// documents within the bounds above.
type archiveGate struct {
	keep   func(context.Context, result.Document) error
	every  time.Duration
	budget float64 // bytes an hour, and the bucket's size
	log    *slog.Logger
	now    func() time.Time

	mu     sync.Mutex
	last   map[string]time.Time // by the server's address: its last result archived
	tokens float64              // bytes the bucket holds
	filled time.Time            // when tokens was last refilled
	warned time.Time            // the last warning of the budget spent
}

func newArchiveGate(keep func(context.Context, result.Document) error, every time.Duration, bytesPerHour int64, log *slog.Logger, now func() time.Time) *archiveGate {
	return &archiveGate{keep: keep, every: every, budget: float64(bytesPerHour), log: log, now: now,
		last: map[string]time.Time{}, tokens: float64(bytesPerHour), filled: now()}
}

// Keep archives doc when its server's last archived result is older than
// the gate's interval and the budget allows its bytes, its strings and
// warnings cut to their bounds first. A document not archived is no
// error: its reason is in the log.
func (g *archiveGate) Keep(ctx context.Context, doc result.Document) error {
	server := doc.Remote.Address
	now := g.now()
	g.mu.Lock()
	for s, at := range g.last {
		if now.Sub(at) >= g.every {
			delete(g.last, s) // so that the map holds the servers of one interval
		}
	}
	if at, ok := g.last[server]; ok {
		g.mu.Unlock()
		g.log.Debug("probe's result not archived: its server's last one was archived less than the interval ago",
			"server", server, "last", at, "interval", g.every)
		return nil
	}
	g.mu.Unlock()

	cut, b, err := cutForArchive(doc)
	if err != nil {
		return err
	}
	if cut.strings > 0 || cut.warnings > 0 {
		g.log.Info("probe's result cut for the archive", "server", server,
			"strings_cut", cut.strings, "warnings_cut", cut.warnings, "max_string_bytes", MaxArchivedString, "max_warnings", MaxArchivedWarnings)
	}
	if len(b) > MaxArchivedResult {
		g.log.Warn("probe's result not archived: its document is larger than the exporter archives", "server", server,
			"bytes", len(b), "max_bytes", MaxArchivedResult)
		return nil
	}

	g.mu.Lock()
	g.tokens = min(g.budget, g.tokens+now.Sub(g.filled).Hours()*g.budget)
	g.filled = now
	if float64(len(b)) > g.tokens {
		warn := now.Sub(g.warned) >= time.Hour
		if warn {
			g.warned = now
		}
		g.mu.Unlock()
		if warn {
			g.log.Warn("probe results not archived: the exporter's archive budget is spent; results are archived again as it refills",
				"server", server, "bytes", len(b), "budget_bytes_per_hour", int64(g.budget))
		}
		return nil
	}
	g.tokens -= float64(len(b))
	if _, ok := g.last[server]; ok {
		// Another probe of the server got here first.
		g.tokens += float64(len(b))
		g.mu.Unlock()
		return nil
	}
	g.last[server] = now
	g.mu.Unlock()
	return g.keep(ctx, cut.doc)
}

// cutDoc is a document cut for the archive, and what was cut.
type cutDoc struct {
	doc      result.Document
	strings  int
	warnings int
}

// cutForArchive is doc with every string longer than MaxArchivedString
// cut and the warnings past MaxArchivedWarnings replaced by one saying
// so, as a copy (doc, shared with the probe, is left as it is), and its
// JSON, whose size the budget counts.
func cutForArchive(doc result.Document) (cutDoc, []byte, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return cutDoc{}, nil, fmt.Errorf("probe's result: %w", err)
	}
	c := cutDoc{doc: doc}
	if !tooLong(reflect.ValueOf(doc)) && len(doc.Warnings) <= MaxArchivedWarnings {
		return c, b, nil
	}
	var cp result.Document
	if err := json.Unmarshal(b, &cp); err != nil {
		return cutDoc{}, nil, fmt.Errorf("probe's result: %w", err)
	}
	if n := len(cp.Warnings); n > MaxArchivedWarnings {
		c.warnings = n - MaxArchivedWarnings + 1
		cp.Warnings = append(cp.Warnings[:MaxArchivedWarnings-1:MaxArchivedWarnings-1],
			result.Warning{Text: fmt.Sprintf("%d more warnings %s", c.warnings, ArchiveCutMark)})
	}
	c.strings = cutStrings(reflect.ValueOf(&cp).Elem())
	c.doc = cp
	b, err = json.Marshal(cp)
	if err != nil {
		return cutDoc{}, nil, fmt.Errorf("probe's result: %w", err)
	}
	return c, b, nil
}

// cutString is s cut to MaxArchivedString bytes with the mark, at a
// character's start.
func cutString(s string) string {
	n := MaxArchivedString - 64
	for n > 0 && n < len(s) && s[n]&0xc0 == 0x80 {
		n--
	}
	return fmt.Sprintf("%s %s (%d bytes)", s[:n], ArchiveCutMark, len(s))
}

// tooLong says whether v holds a string longer than MaxArchivedString.
func tooLong(v reflect.Value) bool {
	found := false
	walkStrings(v, func(s string) (string, bool) {
		found = found || len(s) > MaxArchivedString
		return s, false
	})
	return found
}

// cutStrings cuts every string of v (settable) longer than
// MaxArchivedString, and returns how many it cut.
func cutStrings(v reflect.Value) int {
	n := 0
	walkStrings(v, func(s string) (string, bool) {
		if len(s) <= MaxArchivedString {
			return s, false
		}
		n++
		return cutString(s), true
	})
	return n
}

// walkStrings calls f with every string v holds through its exported
// fields, pointers, slices, arrays and maps (values and keys), and
// replaces one where f says so (v must then be settable, as a map it
// holds is written only then); it says whether it replaced any.
func walkStrings(v reflect.Value, f func(string) (string, bool)) bool {
	changed := false
	switch v.Kind() {
	case reflect.String:
		if s, ok := f(v.String()); ok {
			v.SetString(s)
			changed = true
		}
	case reflect.Pointer:
		if !v.IsNil() {
			changed = walkStrings(v.Elem(), f)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				changed = walkStrings(v.Field(i), f) || changed
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			changed = walkStrings(v.Index(i), f) || changed
		}
	case reflect.Map:
		type entry struct{ old, k, e reflect.Value }
		var set []entry
		for it := v.MapRange(); it.Next(); {
			k := reflect.New(v.Type().Key()).Elem()
			k.Set(it.Key())
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			ck := walkStrings(k, f)
			if ce := walkStrings(e, f); ck || ce {
				set = append(set, entry{it.Key(), k, e})
			}
		}
		for _, c := range set {
			v.SetMapIndex(c.old, reflect.Value{})
			v.SetMapIndex(c.k, c.e)
		}
		changed = len(set) > 0
	}
	return changed
}
