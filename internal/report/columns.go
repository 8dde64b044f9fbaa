package report

import (
	"fmt"
	"strings"
)

// gap is the least space before a right-aligned column's value.
const gap = 2

// fixedColumns lay out a table printed a line at a time, as its rows
// finish: right-aligned columns of at least their starting widths. A value
// that would not leave gap spaces before it widens its column, for its
// line and every later one, so that values never run into each other; fit
// widens the columns for lines known in advance, so that a whole table
// lines up under its header.
type fixedColumns struct {
	widths []int
	hidden map[int]bool // columns left out of every line (hide)
}

// hide leaves columns out of every line, header and rows: the default
// text's tables show fewer columns than -v's, from the same cells.
func (c *fixedColumns) hide(cols ...int) *fixedColumns {
	if c.hidden == nil {
		c.hidden = map[int]bool{}
	}
	for _, i := range cols {
		c.hidden[i] = true
	}
	return c
}

// newFixedColumns starts columns at these widths (a copy is kept).
func newFixedColumns(widths ...int) *fixedColumns {
	return &fixedColumns{widths: append([]int(nil), widths...)}
}

// fit widens the columns for a line of values.
func (c *fixedColumns) fit(cells []string) { c.fitGap(cells, gap) }

// fitGap widens the columns so that each cell has at least g spaces
// before it.
func (c *fixedColumns) fitGap(cells []string, g int) {
	for i, s := range cells {
		if i >= len(c.widths) {
			c.widths = append(c.widths, 0)
		}
		c.widths[i] = max(c.widths[i], len(s)+g)
	}
}

// line is a line of values right-aligned in their columns (widened where
// they must be), then note after two spaces, without trailing blanks.
func (c *fixedColumns) line(cells []string, note string) string {
	c.fit(cells)
	return c.format(cells, note)
}

// header is a line of the header: words, which need one space before
// them only.
func (c *fixedColumns) header(cells []string) string {
	c.fitGap(cells, 1)
	return c.format(cells, "")
}

func (c *fixedColumns) format(cells []string, note string) string {
	var b strings.Builder
	for i, s := range cells {
		if !c.hidden[i] {
			fmt.Fprintf(&b, "%*s", c.widths[i], s)
		}
	}
	if note != "" {
		b.WriteString("  " + note)
	}
	return strings.TrimRight(b.String(), " ")
}
