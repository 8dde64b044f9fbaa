package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/units"
)

// TestDocumentText: the text of each kind of document is what the
// renderers of that kind write (each checked against its golden file
// elsewhere), picked from the document alone.
func TestDocumentText(t *testing.T) {
	stream := load(t, "stream.json")
	trade := load(t, "tradeoff.json")
	tr := result.Tradeoff{Ratio: 0.5}
	trade.Tradeoff = &tr
	sweep, matrix := sweepDoc(t), matrixDoc(t)
	emptySweep := sweep
	emptySweep.Points = nil
	mesh := meshDoc(spec.TCPStream)
	o := TextOptions{Unit: units.RateUnit('g'), Server: "10.0.0.2:7575"}
	for _, tc := range []struct {
		name string
		doc  Doc
		want func(w io.Writer)
	}{
		{"run", Doc{Results: &stream}, func(w io.Writer) { TextIn(w, stream.Result, o); fmt.Fprintln(w) }},
		{"tradeoff", Doc{Results: &trade}, func(w io.Writer) {
			TextIn(w, trade.Runs[0], o)
			fmt.Fprintln(w)
			TextIn(w, trade.Runs[1], o)
			fmt.Fprintln(w)
			TradeoffIn(w, trade.Runs[0], trade.Runs[1], tr, o.Unit)
		}},
		{"sweep", Doc{Results: &sweep}, func(w io.Writer) { SweepTable(w, sweep, o.Verbose) }},
		{"sweep before its first point", Doc{Results: &emptySweep}, func(w io.Writer) { SweepTable(w, emptySweep, o.Verbose) }},
		{"matrix", Doc{Results: &matrix}, func(w io.Writer) { Heading(w, matrix.Spec, o.Server); MatrixTableOf(w, matrix, o.Verbose) }},
		{"mesh", Doc{Mesh: &mesh}, func(w io.Writer) { MeshText(w, mesh) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got, want bytes.Buffer
			DocumentText(&got, tc.doc, o)
			tc.want(&want)
			if got.String() != want.String() || got.Len() == 0 {
				t.Errorf("DocumentText:\n%s\nwant:\n%s", got.String(), want.String())
			}
		})
	}
}

// TestTextSink: what the terminal shows once a document is complete.
func TestTextSink(t *testing.T) {
	stream, trade := load(t, "stream.json"), load(t, "tradeoff.json")
	tr := result.Tradeoff{Ratio: 0.5}
	trade.Tradeoff = &tr
	sweep, matrix, mesh := sweepDoc(t), matrixDoc(t), meshDoc(spec.TCPRR)
	var want bytes.Buffer
	fmt.Fprintln(&want)
	TradeoffIn(&want, trade.Runs[0], trade.Runs[1], tr, 0)
	SweepNotes(&want, sweep, false)
	MatrixNotes(&want, matrix, false)
	MeshText(&want, mesh)
	fmt.Fprintln(&want) // between two rounds
	MeshText(&want, mesh)

	var got bytes.Buffer
	s := &TextSink{W: &got}
	for _, d := range []Doc{
		{Results: &stream}, // shown as it ran: nothing more
		{Results: &trade},
		{Results: &sweep, Partial: true},
		{Results: &sweep},
		{Results: &matrix},
		{Mesh: &mesh},
		{Mesh: &mesh},
	} {
		if err := s.Emit(d); err != nil {
			t.Fatal(err)
		}
	}
	if got.String() != want.String() {
		t.Errorf("TextSink wrote:\n%s\nwant:\n%s", got.String(), want.String())
	}
}

// TestWriteFile: each extension's format, for results and mesh
// documents, written whole (no temporary files left).
func TestWriteFile(t *testing.T) {
	doc := load(t, "stream.json")
	mesh := meshDoc(spec.TCPStream)
	dir := t.TempDir()
	var js, cs, txt, mjs, mcs bytes.Buffer
	result.Encode(&js, doc)
	CSV(&cs, doc)
	TextIn(&txt, doc.Result, TextOptions{})
	fmt.Fprintln(&txt)
	MeshJSON(&mjs, mesh)
	MeshCSV(&mcs, mesh)
	for _, tc := range []struct {
		name string
		doc  Doc
		want string
	}{
		{"out.json", Doc{Results: &doc}, js.String()},
		{"out.csv", Doc{Results: &doc}, cs.String()},
		{"out.txt", Doc{Results: &doc}, txt.String()},
		{"mesh.json", Doc{Mesh: &mesh}, mjs.String()},
		{"mesh.csv", Doc{Mesh: &mesh}, mcs.String()},
	} {
		path := filepath.Join(dir, tc.name)
		if err := (FileSink{Path: path}).Emit(tc.doc); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		if string(b) != tc.want || len(b) == 0 {
			t.Errorf("%s:\n%s\nwant:\n%s", tc.name, b, tc.want)
		}
	}
	if err := WriteFile(filepath.Join(dir, "out.xml"), Doc{Results: &doc}, TextOptions{}); err == nil {
		t.Errorf(".xml accepted")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 5 {
		t.Errorf("directory holds %d files, want 5 (no temporary files left)", len(ents))
	}
}

// failSink fails every Emit.
type failSink struct{ n *int }

func (f failSink) Emit(Doc) error { *f.n++; return errors.New("down") }
func (failSink) Close() error     { return nil }

// TestSinksEveryOne: a sink that fails does not keep the document from
// the others, and its error is returned.
func TestSinksEveryOne(t *testing.T) {
	doc := load(t, "stream.json")
	var n int
	var buf bytes.Buffer
	err := Sinks{failSink{&n}, JSONSink{&buf}, failSink{&n}}.Emit(Doc{Results: &doc})
	if err == nil || n != 2 || buf.Len() == 0 {
		t.Errorf("err %v, failing sinks called %d times, JSON %d bytes; want an error, 2, and the JSON", err, n, buf.Len())
	}
}
