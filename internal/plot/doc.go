// Package plot draws what report writes as text: results files (lines
// against message size, bars with whiskers, latency), RRUL runs and the
// archive's history, as PNG, PDF or SVG with gonum/plot. It is the one
// package that links gonum/plot, so report and the packages below it do
// not; its axes and legends take report's units and names.
//
// Where things are:
//
//   - plot.go: Plot, the figure of results files, and Labels, which
//     names their lines; SavePlot and WritePlot write a Figure.
//   - whiskers.go: intervals drawn as whiskers, cut and marked at the
//     axis, and the key's words for them (whiskerKeys).
//   - wirebars.go: a bar figure's panels of the sender's device's
//     packets per second and bytes per packet.
//   - envlabels.go: the environment items Labels tells files apart by,
//     and the settings it folds into one (foldSettings).
//   - rrulplot.go: an RRUL run's throughput and latency (RRULAll) and
//     its latency CDFs (RRULCDF).
//   - historyplot.go: archived series over time with their change
//     points and the environment's steps (HistoryPlot, HistoryPanels,
//     EnvLabel).
package plot
