package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"wirespeed/internal/client"
	"wirespeed/internal/iterate"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// sinks are where the documents of run, sweep, matrix and mesh go (see
// report.Sink): the terminal in the form the flags ask (text, --json,
// --json-stream or --fields), then -o FILE. An output that a flag of
// these commands adds (an archive, an exporter) is one more sink
// appended here from its flag; flags that every measuring command shares
// are registered in addRunFlags.
func (f *runFlags) sinks(w io.Writer, text report.TextOptions) report.Sinks {
	var out report.Sinks
	switch {
	case f.out.fields != nil:
		out = append(out, report.FieldsSink{W: w, Names: f.out.fields, Style: f.out.fieldStyle})
	case f.out.jsonStream:
		out = append(out, report.StreamSink{W: w})
	case f.json:
		out = append(out, report.JSONSink{W: w})
	default:
		out = append(out, &report.TextSink{W: w, Text: text})
	}
	if f.output != "" {
		out = append(out, report.FileSink{Path: f.output, Text: text})
	}
	// The archive last: the document is shown and in its file before
	// the archive (or the spool) is tried.
	if f.archiveSink != nil {
		out = append(out, f.archiveSink)
	}
	return out
}

// emit hands a complete document to out and closes it.
func emit(out report.Sinks, d report.Doc) error {
	return errors.Join(out.Emit(d), out.Close())
}

// measureRuns is the measuring and the output that run and run --iperf3
// share: the test (or the tradeoff) through client.Runs, shown as it goes
// by lv, then the document through the sinks. measure gets each test.
func (f *runFlags) measureRuns(ctx context.Context, lv *live, command, addr string, t spec.Test, rep spec.Repeat, measure client.Measure) error {
	if lv.stream {
		report.Stream(lv.w, "start", report.StreamStart{Server: addr, Spec: t})
	}
	doc := result.Document{Schema: result.Schema, Tool: tool(), Command: command}
	f.record.apply(&doc)
	if rep.Repeats() {
		doc.Repeat = &rep
	}
	lv.doc = &doc
	results, runErr := client.Runs(ctx, measure, t, f.tradeoff, &doc, lv)
	if len(results) == 0 {
		if lv.stream {
			streamEnd(lv.w, nil, runErr)
		}
		return runErr
	}
	if err := emit(f.sinks(lv.w, f.textOptions()), report.Doc{Results: &doc}); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	for _, r := range results {
		if r.Interrupted {
			return errInterrupted
		}
	}
	return nil
}

// live is what run shows while it measures: in text, each test's heading,
// its interval lines, iteration lines and result table; with
// --json-stream, interval events. It is run's client.RunObserver.
type live struct {
	w          io.Writer
	out        *outputFlags
	textOpts   report.TextOptions // how its results read (-f, -v)
	text       bool               // the terminal shows text
	stream     bool               // --json-stream
	iterations bool               // iteration lines (text, and more than one iteration)
	label      string
	doc        *result.Document // its title and labels head each test

	mu          sync.Mutex // interval lines come from the client's goroutines
	headerShown bool
	kind        spec.Kind         // the test's, whose interval lines show
	order       *report.TickOrder // the test's interval lines in its directions' order
}

// newLive returns what run shows as it goes on w; its label (the server,
// as the headings name it) is set once it is known.
func (f *runFlags) newLive(w io.Writer, rep spec.Repeat) *live {
	text := !f.json && !f.out.jsonStream && f.out.fields == nil
	return &live{w: w, out: &f.out, textOpts: f.textOptions(), text: text, stream: f.out.jsonStream, iterations: text && rep.Repeats()}
}

// tick is the interval handler of t's runs; nil when nothing shows them.
func (l *live) tick(t spec.Test) func(result.Tick) {
	switch {
	case t.Interval == 0:
		return nil
	case l.stream:
		return streamTick(l.w, &l.mu)
	case !l.text:
		return nil
	}
	l.mu.Lock()
	l.order = report.NewTickOrder(t)
	l.kind = t.Kind
	l.mu.Unlock()
	return func(tk result.Tick) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if !l.headerShown {
			report.IntervalHeaderIn(l.w, t.Kind, l.textOpts.Verbose)
			l.headerShown = true
		}
		l.show(l.order.Add(tk))
	}
}

// show writes the interval lines of ticks, which come in l.order's
// order: an RRUL test's one line an interval unless -v (report.Ticks).
// Its caller holds l.mu.
func (l *live) show(ticks []result.Tick) {
	if len(ticks) > 0 {
		report.Ticks(l.out.tickWriter(l.w), ticks, l.kind, l.out.unit, l.textOpts.Verbose)
	}
}

// flushTicks prints the interval lines a test's TickOrder still holds.
func (l *live) flushTicks() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.order == nil {
		return
	}
	l.show(l.order.Flush())
}

// progress is the iteration handler; nil when no lines show.
func (l *live) progress() func(iterate.Event) {
	return iterationLines(l.w, l.iterations, &l.mu, func() { l.headerShown = false })
}

func (l *live) Starting(i int, t spec.Test) {
	if !l.text {
		return
	}
	if i > 0 {
		fmt.Fprintln(l.w)
	}
	report.Record(l.w, l.doc.Title, l.doc.Labels)
	report.Heading(l.w, t, l.label)
	l.mu.Lock()
	l.headerShown = false
	l.mu.Unlock()
}

func (l *live) Measured(_ int, r result.Result) {
	l.flushTicks()
	if l.text {
		fmt.Fprintln(l.w)
		report.TextIn(l.w, r, l.textOpts)
	}
}
