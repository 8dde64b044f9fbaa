package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"wirespeed/internal/run"
)

// JSON writes the document, indented, with a final newline.
func JSON(w io.Writer, doc run.Document) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// csvHeader names the columns of CSV output.
var csvHeader = []string{
	"test", "direction", "parallel", "send_size", "recv_size", "elapsed_s",
	"throughput_bps", "sender_throughput_bps", "bytes", "sender_bytes",
	"retransmits", "congestion_control", "interrupted", "limit",
}

// CSV writes one row per direction of each run, and a "both" row for runs
// with two directions. A sweep's document has one row per point instead
// (PointsCSV).
func CSV(w io.Writer, doc run.Document) error {
	if doc.Matrix != nil {
		return PointsCSV(w, MatrixSeries(doc))
	}
	if len(doc.Points) > 0 {
		return PointsCSV(w, []Series{{Points: doc.Points}})
	}
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	runs := doc.Runs
	if len(runs) == 0 {
		runs = []run.Result{doc.Result}
	}
	for _, r := range runs {
		for _, d := range r.Directions {
			cw.Write(csvRow(r, string(d.Direction), d.Summary))
		}
		if len(r.Directions) > 1 {
			cw.Write(csvRow(r, "both", r.Summary))
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvRow(r run.Result, dir string, s run.Summary) []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	return []string{
		string(r.Spec.Kind), dir, strconv.Itoa(r.Spec.Parallel), strconv.Itoa(r.Spec.SendSize),
		strconv.Itoa(r.Spec.RecvSize), f(s.ElapsedS), f(s.BitsPerSecond), f(s.SenderBitsPerSecond),
		strconv.FormatInt(s.Bytes, 10), strconv.FormatInt(s.SenderBytes, 10),
		strconv.FormatInt(s.Retransmits, 10), r.Spec.CongestionControl, strconv.FormatBool(r.Interrupted),
		limitKind(s.Limit),
	}
}

// limitKind is a limit's kind for a CSV cell, empty for none.
func limitKind(l *run.Limit) string {
	if l == nil {
		return ""
	}
	return string(l.Kind)
}

// Formats maps file extensions to what WriteFile writes.
var Formats = map[string]string{".json": "JSON document", ".csv": "CSV", ".txt": "text report"}

// CheckPath returns an error when WriteFile cannot pick a format for path,
// so a command can refuse before it measures anything.
func CheckPath(path string) error {
	if _, ok := Formats[strings.ToLower(filepath.Ext(path))]; !ok {
		return fmt.Errorf("output file %q: use a .json, .csv or .txt name", path)
	}
	return nil
}

// WriteFile writes the document to path in the format its extension names,
// atomically: to a temporary file in the same directory, then renamed, so
// a reader never sees half a document. text renders the .txt form.
func WriteFile(path string, doc run.Document, text func(io.Writer)) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	var buf bytes.Buffer
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		if err := JSON(&buf, doc); err != nil {
			return err
		}
	case ".csv":
		if err := CSV(&buf, doc); err != nil {
			return err
		}
	case ".txt":
		text(&buf)
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
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}
