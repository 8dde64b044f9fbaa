package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"wirespeed/internal/result"
)

// Field selection (run --fields, netperf's -o/-O output selectors): the
// figures a script asks for, by name, one line per row of the CSV output
// (a run's direction, and "both" for two). The names are the CSV
// columns, so a field means what its column means; FieldNames lists
// them.

// FieldStyles are the ways Fields writes: csv (a header line, then the
// rows; netperf's -o), table (aligned columns; netperf's -O) and values
// (the rows alone, for `read` in a shell).
var FieldStyles = []string{"csv", "table", "values"}

// CheckFields refuses an unknown field name or style, listing the names.
func CheckFields(names []string, style string) error {
	if !slices.Contains(FieldStyles, style) {
		return fmt.Errorf("fields style %q: one of %s", style, strings.Join(FieldStyles, ", "))
	}
	if len(names) == 0 {
		return fmt.Errorf("no fields named; choose among %s", strings.Join(csvHeader, ","))
	}
	for _, n := range names {
		if !slices.Contains(csvHeader, n) {
			return fmt.Errorf("no field %q; choose among %s", n, strings.Join(csvHeader, ","))
		}
	}
	return nil
}

// Fields writes the named fields of a run's document in style (see
// FieldStyles); a field that does not apply to a row is empty.
func Fields(w io.Writer, doc result.Document, names []string, style string) error {
	if err := CheckFields(names, style); err != nil {
		return err
	}
	idx := make([]int, len(names))
	for i, n := range names {
		idx[i] = slices.Index(csvHeader, n)
	}
	var rows [][]string
	for _, r := range runRows(doc) {
		row := make([]string, len(idx))
		for i, j := range idx {
			row[i] = r[j]
		}
		rows = append(rows, row)
	}
	switch style {
	case "table":
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, strings.Join(names, "\t")+"\t")
		for _, r := range rows {
			for i := range r {
				if r[i] == "" {
					r[i] = "-"
				}
			}
			fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
		}
		return tw.Flush()
	case "values":
		cw := csv.NewWriter(w)
		cw.WriteAll(csvSafeAll(rows))
		return cw.Error()
	}
	cw := csv.NewWriter(w)
	cw.Write(names)
	cw.WriteAll(csvSafeAll(rows))
	return cw.Error()
}
