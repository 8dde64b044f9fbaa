package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"wirespeed/internal/result"
	"wirespeed/internal/units"
)

// The one way out. Every command that measures (run, run --iperf3,
// sweep, matrix, mesh) ends by handing its document to a list of Sinks:
// the terminal's form (text, JSON, JSON stream or --fields: one of them),
// -o FILE (FileSink, by extension), and whatever else a flag asks for.
//
// To add an output (an archive, an exporter), write a type with
//
//	Emit(Doc) error // one document: store, print or send it
//	Close() error   // once, after the last document
//
// and append it to the list where internal/cli builds it
// (runFlags.sinks, which run, sweep, matrix and mesh share). A sink
// that keeps only finished documents skips those with Partial set: a
// sweep or matrix saved after every point, to be emitted again.
//
// To add a kind of document, add its case to DocumentText and TextSink (the .txt and the
// closing text) and, if it is not a results document, a field to Doc.

// Doc is one document leaving a command: a results document (run, a
// tradeoff, sweep, matrix) or one round of a mesh. Exactly one of
// Results and Mesh is set.
type Doc struct {
	Results *result.Document
	Mesh    *result.MeshDocument
	// Partial marks a sweep or matrix saved after a point while it runs;
	// the same document is emitted again, complete, at the end.
	Partial bool
}

// Sink is one place documents go. Emit is called from one goroutine at
// a time; Close once, after the last Emit.
type Sink interface {
	Emit(Doc) error
	Close() error
}

// Sinks is a list of sinks, itself a sink: each document goes to every
// one of them in order, whatever the others did.
type Sinks []Sink

// Emit hands d to every sink and returns their errors joined.
func (s Sinks) Emit(d Doc) error {
	var errs []error
	for _, k := range s {
		errs = append(errs, k.Emit(d))
	}
	return errors.Join(errs...)
}

// Close closes every sink and returns their errors joined.
func (s Sinks) Close() error {
	var errs []error
	for _, k := range s {
		errs = append(errs, k.Close())
	}
	return errors.Join(errs...)
}

// TextOptions are the choices of the text report that the document does
// not hold.
type TextOptions struct {
	Unit units.RateUnit // -f: the unit of throughput in tables
	// Server labels a matrix's heading (the address it was measured
	// against).
	Server string
	// Verbose (-v) adds the detail to the answer: each stream's figures,
	// each side's CPU, device and environment, a table's every column,
	// the notes and warnings in full (Width holds only the default).
	Verbose bool
}

// DocumentText writes the text report of a document, chosen by its kind: a run's
// or a tradeoff's result tables (and the tradeoff), a sweep's table, a
// matrix's heading and table, a mesh round's matrix. It is the .txt
// form of -o.
func DocumentText(w io.Writer, d Doc, o TextOptions) {
	if d.Mesh != nil {
		MeshText(w, *d.Mesh)
		return
	}
	doc := d.Results
	switch {
	case doc == nil:
	case doc.Kind() == result.KindMatrix:
		Heading(w, doc.Spec, o.Server)
		MatrixTableOf(w, *doc, o.Verbose)
	case doc.Kind() == result.KindSweep || len(doc.Sizes) > 0:
		SweepTable(w, *doc, o.Verbose)
	default:
		runs := doc.Runs
		if len(runs) == 0 {
			runs = []result.Result{doc.Result}
		}
		for _, r := range runs {
			TextIn(w, r, o)
			fmt.Fprintln(w)
		}
		if len(runs) == 2 && doc.Tradeoff != nil {
			TradeoffIn(w, runs[0], runs[1], *doc.Tradeoff, o.Unit)
		}
	}
}

// TextSink is the terminal in text mode: what it shows once a document is
// complete, after the lines shown while it ran (interval lines, each
// run's table, a sweep's or a matrix's rows): a tradeoff's comparison, a
// sweep's or a matrix's notes, a mesh round's matrix.
type TextSink struct {
	W    io.Writer
	Text TextOptions

	rounds int // mesh rounds shown, to separate them
}

func (s *TextSink) Emit(d Doc) error {
	if d.Partial {
		return nil
	}
	if d.Mesh != nil {
		if s.rounds > 0 {
			fmt.Fprintln(s.W)
		}
		s.rounds++
		MeshText(s.W, *d.Mesh)
		return nil
	}
	doc := d.Results
	switch {
	case doc == nil:
	case doc.Kind() == result.KindMatrix:
		if len(doc.Matrix.Rows) > 0 || len(doc.Matrix.RestoreErrors) > 0 {
			MatrixNotes(s.W, *doc, s.Text.Verbose)
		}
	case doc.Kind() == result.KindSweep || len(doc.Sizes) > 0:
		SweepNotes(s.W, *doc, s.Text.Verbose)
	case len(doc.Runs) == 2 && doc.Tradeoff != nil:
		fmt.Fprintln(s.W)
		TradeoffIn(s.W, doc.Runs[0], doc.Runs[1], *doc.Tradeoff, s.Text.Unit)
	}
	return nil
}

func (s *TextSink) Close() error { return nil }

// JSONSink is --json: each complete document, indented.
type JSONSink struct{ W io.Writer }

func (s JSONSink) Emit(d Doc) error {
	switch {
	case d.Partial:
		return nil
	case d.Mesh != nil:
		return MeshJSON(s.W, *d.Mesh)
	case d.Results != nil:
		return JSON(s.W, *d.Results)
	}
	return nil
}

func (JSONSink) Close() error { return nil }

// StreamSink is the end of --json-stream: the document as its last
// event. The events before it (start, intervals) are written as they
// happen, with Stream.
type StreamSink struct{ W io.Writer }

func (s StreamSink) Emit(d Doc) error {
	if d.Partial || d.Results == nil {
		return nil
	}
	return StreamEnd(s.W, *d.Results)
}

func (StreamSink) Close() error { return nil }

// FieldsSink is --fields: the named figures of each complete document.
type FieldsSink struct {
	W     io.Writer
	Names []string
	Style string // one of FieldStyles
}

func (s FieldsSink) Emit(d Doc) error {
	if d.Partial || d.Results == nil {
		return nil
	}
	return Fields(s.W, *d.Results, s.Names, s.Style)
}

func (FieldsSink) Close() error { return nil }

// FileSink is -o FILE: every document, partial ones too, written to Path
// in the format its extension names (WriteFile), replacing the last.
type FileSink struct {
	Path string
	Text TextOptions
}

func (s FileSink) Emit(d Doc) error { return WriteFile(s.Path, d, s.Text) }

func (FileSink) Close() error { return nil }

// WriteFile writes the document to path in the format its extension
// names (see Formats), atomically: to a temporary file in the same
// directory, then renamed, so a reader never sees half a document.
func WriteFile(path string, d Doc, o TextOptions) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	var buf bytes.Buffer
	switch ext := strings.ToLower(filepath.Ext(path)); {
	case ext == ".json" && d.Mesh != nil:
		if err := MeshJSON(&buf, *d.Mesh); err != nil {
			return err
		}
	case ext == ".json" && d.Results != nil:
		return result.WriteFile(path, *d.Results)
	case ext == ".csv" && d.Mesh != nil:
		if err := MeshCSV(&buf, *d.Mesh); err != nil {
			return err
		}
	case ext == ".csv" && d.Results != nil:
		if err := CSV(&buf, *d.Results); err != nil {
			return err
		}
	case ext == ".txt":
		DocumentText(&buf, d, o)
	}
	return WriteAtomic(path, buf.Bytes())
}
