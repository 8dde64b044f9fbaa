package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"wirespeed/internal/result"
)

// Doc is a document a command writes: a results document (run,
// tradeoff, sweep, matrix) or a mesh round, one of the two set.
type Doc struct {
	Results *result.Document
	Mesh    *result.MeshDocument
}

// Part is the list of a document that holds a result.
type Part string

// The parts.
const (
	Top    Part = ""       // a run's result, at the document's top level
	Runs   Part = "runs"   // a tradeoff's runs
	Points Part = "points" // a sweep's points
	Matrix Part = "matrix" // a matrix row's points
	Pairs  Part = "pairs"  // a mesh round's pairs
)

// Locator is where a result is in its document: the part, and the
// index in it (with the row's, for a matrix).
type Locator struct {
	Part  Part
	Row   int
	Index int
}

// String is the locator as the archive keeps it (its results.path
// column): "", "runs[1]", "points[3]", "matrix.rows[2].points[0]",
// "pairs[4]"; ParseLocator reads it back.
func (l Locator) String() string {
	switch l.Part {
	case Top:
		return ""
	case Matrix:
		return fmt.Sprintf("matrix.rows[%d].points[%d]", l.Row, l.Index)
	}
	return fmt.Sprintf("%s[%d]", l.Part, l.Index)
}

// ParseLocator reads a locator written by String, as every archive
// since the first has kept it.
func ParseLocator(s string) (Locator, error) {
	if s == "" {
		return Locator{}, nil
	}
	bad := fmt.Errorf("result path %q: want \"\", runs[N], points[N], matrix.rows[N].points[M] or pairs[N]", s)
	if rest, ok := strings.CutPrefix(s, "matrix.rows["); ok {
		row, rest, ok := index(rest)
		if !ok {
			return Locator{}, bad
		}
		rest, ok = strings.CutPrefix(rest, ".points[")
		if !ok {
			return Locator{}, bad
		}
		i, rest, ok := index(rest)
		if !ok || rest != "" {
			return Locator{}, bad
		}
		return Locator{Part: Matrix, Row: row, Index: i}, nil
	}
	for _, p := range []Part{Runs, Points, Pairs} {
		if rest, ok := strings.CutPrefix(s, string(p)+"["); ok {
			i, rest, ok := index(rest)
			if !ok || rest != "" {
				return Locator{}, bad
			}
			return Locator{Part: p, Index: i}, nil
		}
	}
	return Locator{}, bad
}

// index reads "N]" off the front of s.
func index(s string) (int, string, bool) {
	n, rest, ok := strings.Cut(s, "]")
	if !ok {
		return 0, "", false
	}
	i, err := strconv.Atoi(n)
	if err != nil || i < 0 {
		return 0, "", false
	}
	return i, rest, true
}

// Item is one result of a document as Each yields it, with what the
// document says of it beside the result: its message size, the
// settings that set it apart (a matrix row's label, "via=relay" for a
// relayed mesh pair), and a mesh pair's hosts ("" elsewhere: the
// result's sides name them).
type Item struct {
	Result              *result.Result
	MsgSize             int
	Settings            string
	Source, Destination string
}

// Each calls fn with every result of the document and where it is, in
// the document's order: a run's result, a tradeoff's runs, a sweep's
// points, a matrix's rows' points, a mesh round's pairs (a failed pair
// with a nil Result).
func (d Doc) Each(fn func(Locator, Item)) {
	if m := d.Mesh; m != nil {
		for i, p := range m.Pairs {
			it := Item{Result: p.Result, Source: p.Source, Destination: p.Destination}
			if p.Result != nil {
				it.MsgSize = p.Result.Spec.MessageSize()
			}
			if p.Via == result.ViaRelay {
				it.Settings = "via=relay"
			}
			fn(Locator{Part: Pairs, Index: i}, it)
		}
		return
	}
	doc := d.Results
	if doc == nil {
		return
	}
	switch doc.Kind() {
	case result.KindRun:
		fn(Locator{}, Item{Result: &doc.Result, MsgSize: doc.Spec.MessageSize()})
	case result.KindTradeoff:
		for i := range doc.Runs {
			fn(Locator{Part: Runs, Index: i}, Item{Result: &doc.Runs[i], MsgSize: doc.Runs[i].Spec.MessageSize()})
		}
	case result.KindSweep:
		for i := range doc.Points {
			p := &doc.Points[i]
			fn(Locator{Part: Points, Index: i}, Item{Result: &p.Result, MsgSize: p.MsgSize})
		}
	case result.KindMatrix:
		for i, row := range doc.Matrix.Rows {
			for j := range row.Points {
				p := &doc.Matrix.Rows[i].Points[j]
				fn(Locator{Part: Matrix, Row: i, Index: j}, Item{Result: &p.Result, MsgSize: p.MsgSize, Settings: row.Label})
			}
		}
	}
}

// Find is the result at l; false when the document has none there.
func (d Doc) Find(l Locator) (Item, bool) {
	var out Item
	found := false
	d.Each(func(at Locator, it Item) {
		if at == l && it.Result != nil {
			out, found = it, true
		}
	})
	return out, found
}

// Command, Title, Labels and Version are the document's.
func (d Doc) Command() string {
	if d.Mesh != nil {
		return d.Mesh.Command
	}
	if d.Results != nil {
		return d.Results.Command
	}
	return ""
}

// Title is the document's --title (a mesh round has none).
func (d Doc) Title() string {
	if d.Results != nil {
		return d.Results.Title
	}
	return ""
}

// Labels are the document's --label KEY=VALUE (a mesh round has none).
func (d Doc) Labels() map[string]string {
	if d.Results != nil {
		return d.Results.Labels
	}
	return nil
}

// Version is the version of the tool that wrote the document.
func (d Doc) Version() string {
	if d.Mesh != nil {
		return d.Mesh.Tool.Version
	}
	if d.Results != nil {
		return d.Results.Tool.Version
	}
	return ""
}

// Schema is the document's schema.
func (d Doc) Schema() string {
	if d.Mesh != nil {
		return d.Mesh.Schema
	}
	if d.Results != nil {
		return d.Results.Schema
	}
	return ""
}

// ErrNotDocument is wrapped by Decode's errors for JSON that is not a
// results document or a mesh round of a schema this wirespeed reads.
var ErrNotDocument = errors.New("not a wirespeed results or mesh document")

// Decode reads a document's JSON: a results document or a mesh round,
// by its schema.
func Decode(b []byte) (Doc, error) {
	schema := schemaOf(b)
	if schema == "" {
		var head struct {
			Schema *string `json:"schema"`
		}
		if err := json.Unmarshal(b, &head); err != nil {
			return Doc{}, fmt.Errorf("not a JSON object: %v: %w", err, ErrNotDocument)
		}
		if head.Schema == nil || *head.Schema == "" {
			return Doc{}, fmt.Errorf("no \"schema\" field: %w", ErrNotDocument)
		}
		schema = *head.Schema
	}
	switch schema {
	case result.Schema:
		var doc result.Document
		if err := json.Unmarshal(b, &doc); err != nil {
			return Doc{}, fmt.Errorf("%v: %w", err, ErrNotDocument)
		}
		return Doc{Results: &doc}, nil
	case result.MeshSchema:
		var doc result.MeshDocument
		if err := json.Unmarshal(b, &doc); err != nil {
			return Doc{}, fmt.Errorf("%v: %w", err, ErrNotDocument)
		}
		return Doc{Mesh: &doc}, nil
	}
	if strings.HasPrefix(schema, "wirespeed/") {
		return Doc{}, fmt.Errorf("schema %q, this wirespeed archives %q and %q (a newer wirespeed wrote it? archive it with that one): %w",
			schema, result.Schema, result.MeshSchema, ErrNotDocument)
	}
	return Doc{}, fmt.Errorf("schema %q, this wirespeed archives %q and %q: %w", schema, result.Schema, result.MeshSchema, ErrNotDocument)
}

// schemaOf is the schema a compact document names, when it names one
// this wirespeed reads: read from its first field, where wirespeed
// writes it, without decoding the whole document once more for it (a
// document's decoding is a third of an archive put's CPU time).
// Anything else is "", for Decode to look closer.
func schemaOf(b []byte) string {
	const head = `{"schema":"`
	if !bytes.HasPrefix(b, []byte(head)) {
		return ""
	}
	rest := b[len(head):]
	for _, s := range []string{result.Schema, result.MeshSchema} {
		if len(rest) > len(s) && string(rest[:len(s)]) == s && rest[len(s)] == '"' {
			return s
		}
	}
	return ""
}
