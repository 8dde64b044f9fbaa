package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"wirespeed/internal/peertext"
)

// MaxFileBytes bounds what ReadFile reads: a document of a long run with
// per-stream intervals is tens of megabytes; a file larger than this is
// not one wirespeed wrote.
const MaxFileBytes = 512 << 20

// Encode writes doc as the results document's JSON, indented, one
// document followed by a newline. A figure that is not a finite number
// is an error naming it (CheckFinite), and nothing is written.
func Encode(w io.Writer, doc Document) error {
	return encodeChecked(w, doc)
}

// EncodeMesh writes a mesh round's document as Encode writes a results
// document.
func EncodeMesh(w io.Writer, doc MeshDocument) error {
	return encodeChecked(w, doc)
}

func encodeChecked(w io.Writer, doc any) error {
	if err := CheckFinite(doc); err != nil {
		return fmt.Errorf("the document cannot be written: %w", err)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// ReadFile reads a results document written by this schema version: the
// one reader of `sweep --resume`, `compare` and `plot`. The error names
// the file and what is wrong with it.
func ReadFile(path string) (Document, error) {
	var doc Document
	f, err := os.Open(path)
	if err != nil {
		return doc, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return doc, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > MaxFileBytes {
		return doc, fmt.Errorf("%s: over %d MiB, not a wirespeed results document", path, MaxFileBytes>>20)
	}
	doc, err = Decode(b)
	if err != nil {
		return doc, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// Decode reads a results document of this schema version from b (a
// file's content, or what `wirespeed ... --json` printed): the one
// decoder, which ReadFile and the benches use.
func Decode(b []byte) (Document, error) {
	var doc Document
	if err := json.Unmarshal(b, &doc); err != nil {
		return doc, fmt.Errorf("not a wirespeed results document: %w", err)
	}
	// A results document may come from anyone: what it holds is printed,
	// so its strings are escaped as a peer's are.
	peertext.Scrub(&doc)
	if doc.Schema != Schema {
		return doc, fmt.Errorf("schema %q, this wirespeed reads %q", doc.Schema, Schema)
	}
	return doc, nil
}

// WriteFile writes doc to path as JSON, atomically (see WriteAtomic): the
// one writer of results documents, so that a sweep rewritten after every
// point is never seen half written.
func WriteFile(path string, doc Document) error {
	var buf bytes.Buffer
	if err := Encode(&buf, doc); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return WriteAtomic(path, buf.Bytes())
}

// WriteAtomic writes b to path through a temporary file in the same
// directory and a rename, so that a reader never sees half a file, and an
// interrupted write leaves the old one.
func WriteAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp.Chmod(0o644)
	_, werr := tmp.Write(b)
	werr = errors.Join(werr, tmp.Close())
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}

// DocumentKind says what a results document holds, and so where its
// figures are: a run's result at the top level, a tradeoff's runs, a
// sweep's points or a matrix's rows.
type DocumentKind string

const (
	KindRun      DocumentKind = "run"      // one result, at the top level
	KindTradeoff DocumentKind = "tradeoff" // Runs: one direction, then the other
	KindSweep    DocumentKind = "sweep"    // Points, one per message size
	KindMatrix   DocumentKind = "matrix"   // Matrix.Rows, each with its points
	KindEmpty    DocumentKind = ""         // nothing was measured
)

// Kind says what the document holds. It is read from the document's
// content rather than from Command, so that a document is read the same
// whichever command wrote it (a matrix of sweeps is a matrix).
func (d *Document) Kind() DocumentKind {
	switch {
	case d.Matrix != nil:
		return KindMatrix
	case len(d.Points) > 0:
		return KindSweep
	case len(d.Runs) > 0:
		return KindTradeoff
	case len(d.Directions) > 0:
		return KindRun
	}
	return KindEmpty
}
