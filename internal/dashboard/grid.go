package dashboard

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"wirespeed/internal/history"
	"wirespeed/internal/record"
	"wirespeed/internal/report"
)

// The states a grid cell is coloured by.
const (
	Steady    = "steady"
	Improved  = "improved"
	Regressed = "regressed"
	Failing   = "failing"
	NoData    = "nodata"
	// Few is a series too short to test for a change point: it may be
	// steady or not, the dashboard cannot tell.
	Few = "toofew"
)

// Threshold is a fixed limit of one test's figure, in the figure's unit
// in the documents (bits/s, us), as MaDDash has: a figure worse than
// Warn is regressed, worse than Crit failing, whatever its history.
type Threshold struct {
	Warn, Crit float64
}

// Cell is one direction of a pair in the grid.
type Cell struct {
	Source, Destination string
	State               string
	// Figure is the latest figure with its unit; When its time; Limit
	// what limited it; Why the reason for the state.
	Figure, When, Limit, Why string
	Href                     string
}

// Tip is what hovering or focusing the cell says.
func (c Cell) Tip() string {
	if c.State == NoData {
		return fmt.Sprintf("%s -> %s: no data", c.Source, c.Destination)
	}
	s := fmt.Sprintf("%s -> %s: %s, measured %s", c.Source, c.Destination, c.Figure, c.When)
	if c.Limit != "" {
		s += ", limited by " + c.Limit
	}
	return s + "; " + c.State + ": " + c.Why
}

// Label is the cell's accessible name: its direction, figure and
// state ("a → b: 6010 Mbit/s, regressed"); Tip, its title, describes it.
func (c Cell) Label() string {
	if c.State == NoData {
		return fmt.Sprintf("%s → %s: no data", c.Source, c.Destination)
	}
	return fmt.Sprintf("%s → %s: %s, %s", c.Source, c.Destination, c.Figure, stateNames[c.State])
}

var stateNames = map[string]string{Steady: "steady", Improved: "improved", Regressed: "regressed", Failing: "failing", Few: "too few to tell", NoData: "no data"}

// Summary counts the grid's directions by state, the worst first: "12
// directions: 1 failing, 2 regressed, 9 steady".
func (g *Grid) Summary() string {
	n := 0
	var parts []string
	for _, st := range []string{Failing, Regressed, Improved, Steady, Few, NoData} {
		if k := g.Counts[st]; k > 0 {
			n += k
			parts = append(parts, fmt.Sprintf("%d %s", k, stateNames[st]))
		}
	}
	if n == 0 {
		return "no directions measured yet"
	}
	return fmt.Sprintf("%d directions: %s", n, strings.Join(parts, ", "))
}

// Grid is the mesh grid of one test: rows are sources, columns
// destinations; each pair is one cell, above the diagonal: cell (A, B),
// A before B, holds A->B (top) and B->A (bottom), and its mirror below
// the diagonal is left blank, so each direction is drawn once.
type Grid struct {
	Test   string
	Tests  []string
	Figure string
	Hosts  []string
	Rows   []GridRow
	// Newest is the time of the newest result; Results how many the
	// archive holds (what live updates watch).
	Newest  time.Time
	Results int64
	Counts  map[string]int
	// Range is the time range shown ("1d", "7d", "" for all).
	Range string
}

// GridRow is one source's row.
type GridRow struct {
	Host  string
	Cells []PairCell
}

// PairCell is one cell: the two directions between Row and Col, or,
// below the diagonal, the Mirror of the cell that holds them.
type PairCell struct {
	Self, Mirror bool
	Fwd, Rev     Cell
}

// buildGrid reads the archive's results of test ("" for the test of
// the newest result) and makes the grid.
func (s *Server) buildGrid(ctx context.Context, test string, rg timeRange) (*Grid, error) {
	since := s.since(rg)
	all, err := s.o.Archive.Results(ctx, record.Filter{Since: since})
	if err != nil {
		return nil, err
	}
	g := &Grid{Counts: map[string]int{}, Range: rg.Name}
	var newest record.Row
	for _, r := range all {
		if !slices.Contains(g.Tests, r.Test) {
			g.Tests = append(g.Tests, r.Test)
		}
		if !r.Started.Before(newest.Started) {
			newest = r
		}
	}
	slices.Sort(g.Tests)
	g.Newest = newest.Started
	if test == "" {
		test = newest.Test
	}
	g.Test = test
	fig := history.DefaultFigure(test)
	g.Figure = fig.Name
	series, rows, _, err := history.Load(ctx, s.o.Archive, history.Query{
		Filter: record.Filter{Since: since, Test: test}, Figures: []history.Figure{fig}, Latest: true,
		Options: history.Options{Alpha: s.o.Alpha, Permutations: s.o.Permutations}})
	if err != nil {
		return nil, err
	}
	// The newest result of each pair, and the newest document of the
	// test (a mesh round): a mesh pair missing from it failed there.
	latestRow := map[[2]string]record.Row{}
	hosts := map[string]bool{}
	var newestDoc record.Row
	for _, r := range rows {
		latestRow[[2]string{r.Source, r.Destination}] = r
		hosts[r.Source], hosts[r.Destination] = true, true
		if r.DocumentID >= newestDoc.DocumentID {
			newestDoc = r
		}
	}
	for h := range hosts {
		g.Hosts = append(g.Hosts, h)
	}
	slices.Sort(g.Hosts)
	// The series of each pair with the newest point: a pair measured at
	// several sizes or settings shows the one measured last.
	bySeries := map[[2]string]*history.Series{}
	for i := range series {
		bySeries[[2]string{series[i].Key.Source, series[i].Key.Destination}] = &series[i]
	}
	th, hasTh := s.o.Thresholds[test]
	cell := func(src, dst string) Cell {
		c := Cell{Source: src, Destination: dst, State: NoData, Href: pairHref(src, dst, test, rg.Name)}
		lr, any := latestRow[[2]string{src, dst}]
		sr := bySeries[[2]string{src, dst}]
		if !any {
			return c
		}
		c.When = lr.Started.UTC().Format("2006-01-02 15:04:05 UTC")
		c.Limit = lr.LimitKind
		switch {
		case sr == nil || last(sr).ResultID != lr.ID:
			c.State, c.Figure, c.Why = Failing, "no figure", "the newest result has no "+fig.Name
			return c
		}
		p := last(sr)
		c.Figure = report.FigureShort(sr.Unit, p.Value)
		c.State, c.Why = Steady, fmt.Sprintf("no change point in %d results", len(sr.Points))
		if sn := sr.Sensitivity; !sn.Detectable() {
			c.State, c.Why = Few, fmt.Sprintf("%d results: too few to tell (a change point needs %d)", sn.Points, sn.Needed)
		}
		if n := len(sr.Changes); n > 0 {
			ch := sr.Changes[n-1]
			c.State = Improved
			if ch.Worse {
				c.State = Regressed
			}
			c.Why = report.ChangeSentence(*sr, ch)
		}
		if lr.Command == "mesh" && lr.DocumentID != newestDoc.DocumentID && newestDoc.Command == "mesh" {
			c.State, c.Why = Failing, "not measured in the newest mesh round (its pair failed there)"
		}
		if hasTh {
			worse := func(lim float64) bool {
				if fig.HigherIsBetter {
					return p.Value < lim
				}
				return p.Value > lim
			}
			switch {
			case th.Crit != 0 && worse(th.Crit):
				c.State, c.Why = Failing, "worse than the critical threshold "+report.FigureValue(sr.Unit, th.Crit)
			case th.Warn != 0 && worse(th.Warn) && c.State != Failing:
				c.State, c.Why = Regressed, "worse than the warning threshold "+report.FigureValue(sr.Unit, th.Warn)
			}
		}
		return c
	}
	for i, a := range g.Hosts {
		row := GridRow{Host: a}
		for j, b := range g.Hosts {
			switch {
			case i == j:
				row.Cells = append(row.Cells, PairCell{Self: true})
				continue
			case i > j:
				row.Cells = append(row.Cells, PairCell{Mirror: true})
				continue
			}
			pc := PairCell{Fwd: cell(a, b), Rev: cell(b, a)}
			g.Counts[pc.Fwd.State]++
			g.Counts[pc.Rev.State]++
			row.Cells = append(row.Cells, pc)
		}
		g.Rows = append(g.Rows, row)
	}
	return g, nil
}

func last(s *history.Series) history.Point { return s.Points[len(s.Points)-1] }
