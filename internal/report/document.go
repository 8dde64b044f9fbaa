package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"wirespeed/internal/result"
)

// JSON writes the document, indented, with a final newline.
func JSON(w io.Writer, doc result.Document) error {
	return result.Encode(w, doc)
}

// csvHeader names the columns of CSV output.
var csvHeader = []string{
	"test", "direction", "parallel", "send_size", "recv_size", "elapsed_s",
	"throughput_bps", "sender_throughput_bps", "bytes", "sender_bytes",
	"retransmits", "congestion_control", "interrupted",
}

// CSV writes one row per direction of each run, and a "both" row for runs
// with two directions. A sweep's document has one row per point instead
// (PointsCSV).
func CSV(w io.Writer, doc result.Document) error {
	switch doc.Kind() {
	case result.KindMatrix:
		return PointsCSV(w, MatrixSeries(doc))
	case result.KindSweep:
		return PointsCSV(w, []Series{{Points: doc.Points}})
	}
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	runs := doc.Runs
	if len(runs) == 0 {
		runs = []result.Result{doc.Result}
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

func csvRow(r result.Result, dir string, s result.Summary) []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	return []string{
		string(r.Spec.Kind), dir, strconv.Itoa(r.Spec.Parallel), strconv.Itoa(r.Spec.SendSize),
		strconv.Itoa(r.Spec.RecvSize), f(s.ElapsedS), f(s.BitsPerSecond), f(s.SenderBitsPerSecond),
		strconv.FormatInt(s.Bytes, 10), strconv.FormatInt(s.SenderBytes, 10),
		strconv.FormatInt(s.Retransmits, 10), congestionControl(r), strconv.FormatBool(r.Interrupted),
	}
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
func WriteFile(path string, doc result.Document, text func(io.Writer)) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	var buf bytes.Buffer
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return result.WriteFile(path, doc)
	case ".csv":
		if err := CSV(&buf, doc); err != nil {
			return err
		}
	case ".txt":
		text(&buf)
	}
	return result.WriteAtomic(path, buf.Bytes())
}

// WriteAtomic is result.WriteAtomic, for the files report renders
// (plots, mesh documents).
func WriteAtomic(path string, b []byte) error { return result.WriteAtomic(path, b) }

// congestionControl is the run's TCP congestion control for the CSV: what
// the data sockets reported (the local side's, else the remote's),
// else the spec's --cc.
func congestionControl(r result.Result) string {
	for _, side := range []result.Side{result.Local, result.Remote} {
		if cc := r.CongestionControl(side); cc != "" {
			return cc
		}
	}
	return r.Spec.CongestionControl
}
