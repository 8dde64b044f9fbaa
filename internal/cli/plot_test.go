package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wirespeed/internal/iterate"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/sweep"
)

// writeSweep writes the document of a sweep measured by fakeIterate,
// with three iterations per point so that every point has an interval.
func writeSweep(t *testing.T, path string, cc string, sizes []int) {
	t.Helper()
	base := sweepSpec()
	base.CongestionControl = cc
	rep := spec.Repeat{MaxIterations: 3, MinIterations: 3, ConfidenceLevel: 0.99, ConfidenceWidthPct: 5}
	n := 0
	measure := func(ctx context.Context, t spec.Test, rep spec.Repeat, p func(iterate.Event)) (result.Result, error) {
		return iterate.Run(ctx, rep, func(ctx context.Context) (result.Result, error) {
			n++
			r, err := fakeIterate(ctx, t, rep, nil)
			r.Summary.BitsPerSecond *= 1 + 0.01*float64(n%3)
			return r, err
		}, p)
	}
	save := func(d *result.Document) error {
		return report.WriteFile(path, report.Doc{Results: d}, report.TextOptions{})
	}
	if _, err := sweep.Run(context.Background(), sweep.Plan{Base: base, Repeat: rep, Sizes: sizes}, sweep.Options{Measure: measure, Save: save}); err != nil {
		t.Fatal(err)
	}
}

// TestPlot: the SVG parses and has one line per input file, through every
// point, labelled with what differs between the files; CSV has a row per
// point; PNG is a PNG.
func TestPlot(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	sizes := []int{64, 1024, 16384, 65536}
	writeSweep(t, a, "cubic", sizes)
	writeSweep(t, b, "bbr", sizes)

	svg := filepath.Join(dir, "p.svg")
	if code, _, errOut := execute(t, context.Background(), "plot", a, b, "-o", svg); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f, err := os.Open(svg)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := xml.NewDecoder(f)
	lines := map[string]int{} // stroke colour -> vertices of the series line
	var texts []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG does not parse: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if el.Name.Local == "text" {
				if cd, ok := nextText(dec); ok {
					texts = append(texts, cd)
				}
			}
			if el.Name.Local != "path" {
				continue
			}
			var d, style string
			for _, at := range el.Attr {
				switch at.Name.Local {
				case "d":
					d = at.Value
				case "style":
					style = at.Value
				}
			}
			// Series lines are the only 1.5 pt strokes with more than
			// two vertices (the legend's samples have two).
			if !strings.Contains(style, "stroke-width:1.5") {
				continue
			}
			if v := strings.Count(d, "L") + 1; v > 2 {
				lines[style] = v
			}
		}
	}
	if len(lines) != 2 {
		t.Errorf("%d series lines, want one per file: %v", len(lines), lines)
	}
	for style, v := range lines {
		if v != len(sizes) {
			t.Errorf("line %s has %d vertices, want one per point (%d)", style, v, len(sizes))
		}
	}
	all := strings.Join(texts, "|")
	for _, want := range []string{"congestion_control=cubic", "congestion_control=bbr", "TCP_STREAM", "64K"} {
		if !strings.Contains(all, want) {
			t.Errorf("SVG text lacks %q: %s", want, all)
		}
	}

	csvPath := filepath.Join(dir, "p.csv")
	if code, _, errOut := execute(t, context.Background(), "plot", a, b, "-o", csvPath); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	csvb, _ := os.ReadFile(csvPath)
	if n := strings.Count(string(csvb), "\n"); n != 1+2*len(sizes) {
		t.Errorf("csv has %d lines, want a header and %d points:\n%s", n, 2*len(sizes), csvb)
	}
	png := filepath.Join(dir, "p.png")
	if code, _, errOut := execute(t, context.Background(), "plot", a, "-o", png); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if pb, _ := os.ReadFile(png); !bytes.HasPrefix(pb, []byte("\x89PNG")) {
		t.Errorf("%s is not a PNG", png)
	}

	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"plot", a}, ExitUsage, "-o"},
		{[]string{"plot", a, "-o", "x.gif"}, ExitUsage, ".svg"},
		{[]string{"plot", "-o", "x.svg"}, ExitUsage, "at least one"},
		{[]string{"plot", filepath.Join(dir, "none.json"), "-o", svg}, ExitRuntime, "no such file"},
	} {
		code, _, errOut := execute(t, context.Background(), tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tt.args, code, errOut, tt.code, tt.want)
		}
	}
}

// nextText returns the character data right after a start element.
func nextText(dec *xml.Decoder) (string, bool) {
	tok, err := dec.Token()
	if err != nil {
		return "", false
	}
	cd, ok := tok.(xml.CharData)
	return strings.TrimSpace(string(cd)), ok
}

// TestPlotMatrix: a matrix document gives a line per measured row,
// labelled with its settings.
func TestPlotMatrix(t *testing.T) {
	b, err := os.ReadFile("testdata/compare/base.json")
	if err != nil {
		t.Fatal(err)
	}
	var sweepDoc result.Document
	if err := json.Unmarshal(b, &sweepDoc); err != nil {
		t.Fatal(err)
	}
	doc := sweepDoc
	doc.Command, doc.Points = "matrix", nil
	doc.Matrix = &result.Matrix{Rows: []result.MatrixRow{
		{Index: 1, Label: "mtu=1500", Points: sweepDoc.Points},
		{Index: 2, Label: "mtu=9000", Skipped: "no"},
		{Index: 3, Label: "mtu=4000", Points: sweepDoc.Points[:1]},
	}}
	dir := t.TempDir()
	in := filepath.Join(dir, "m.json")
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, out, 0o644); err != nil {
		t.Fatal(err)
	}
	csvPath := filepath.Join(dir, "m.csv")
	if code, _, stderr := runMain(t, "plot", in, "-o", csvPath); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, _ := os.ReadFile(csvPath)
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "mtu=1500,") || !strings.HasPrefix(lines[2], "mtu=1500,") || !strings.HasPrefix(lines[3], "mtu=4000,") {
		t.Errorf("csv:\n%s", got)
	}
}

// TestPlotTradeoff: a --tradeoff document gives one series per direction,
// labelled with its test.
func TestPlotTradeoff(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t.csv")
	if code, _, stderr := runMain(t, "plot", "../report/testdata/tradeoff.json", "-o", out); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "TCP_STREAM,TCP_STREAM,") || !strings.HasPrefix(lines[2], "TCP_MAERTS,TCP_MAERTS,") {
		t.Errorf("csv:\n%s", got)
	}
	png := filepath.Join(t.TempDir(), "t.png")
	if code, _, stderr := runMain(t, "plot", "../report/testdata/tradeoff.json", "-o", png); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
