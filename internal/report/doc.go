// Package report owns what people read: it renders results as netperf-style
// text tables, iperf-style interval lines, the JSON document and CSV, and
// writes them to an io.Writer or a file. It computes nothing new: every
// figure it shows was computed by the packages that measured or joined it.
//
// Where things are:
//
//   - text.go: one run's table and per-side figures; cpu.go the top-like
//     CPU line; datapath.go the data path records.
//   - fit.go: the default text's width (Width, 100 columns) and how a
//     line is made to fit it: a warning cut after a clause (brief), a
//     list or a note continued on the next line, tables without trailing
//     blanks. -v (TextOptions.Verbose) adds the detail, which may be
//     wider.
//   - confidence.go, points.go, sweep.go: iteration lines, the cells of a
//     point (+/-%, iterations, notes) and netperf's sweep table.
//   - matrix.go, mesh.go, compare.go, lab.go, labserver.go: the tables of
//     those commands.
//   - env.go, envsummary.go: environment records in full, and as one
//     line per side.
//   - document.go: JSON (through result.Encode), CSV and WriteFile, which
//     picks the format from a file's extension and writes atomically.
//   - plotnames.go: the units and names the plots (internal/plot) write
//     as report does.
//
// Golden files under testdata/ hold what a person reads; `go test
// ./internal/report -update` rewrites them.
package report
