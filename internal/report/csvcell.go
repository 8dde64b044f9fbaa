package report

import (
	"strconv"
	"strings"
)

// csvSafe neutralises cells a spreadsheet would run as a formula
// (OWASP's CSV injection rule): a cell that starts with =, +, -, @, a tab
// or a carriage return gets a leading single quote, unless it is a plain
// number (a negative figure stays a number). Text from a peer (a host
// name, a congestion control name, labels) reaches every CSV writer, so
// each writes its rows through it.
func csvSafe(row []string) []string {
	var out []string
	for i, c := range row {
		if !formulaLike(c) {
			continue
		}
		if out == nil {
			out = append([]string(nil), row...)
		}
		out[i] = "'" + c
	}
	if out == nil {
		return row
	}
	return out
}

func formulaLike(c string) bool {
	if c == "" || !strings.ContainsAny(c[:1], "=+-@\t\r") {
		return false
	}
	_, err := strconv.ParseFloat(c, 64)
	return err != nil
}

// csvSafeAll is csvSafe for every row.
func csvSafeAll(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = csvSafe(r)
	}
	return out
}
