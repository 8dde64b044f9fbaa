package exporter

import (
	"encoding/json"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"time"
)

var indexPage = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>wirespeed exporter</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:2px 10px;text-align:left;border-bottom:1px solid #ddd}code{background:#f4f4f4}.fail{color:#b00}</style>
</head><body>
<h1>wirespeed exporter</h1>
<p>Probe a wirespeed server: <a href="probe?target=127.0.0.1&amp;module={{.First}}&amp;debug=true">probe?target=HOST[:PORT]&amp;module=NAME</a>
(add <code>debug=true</code> for the probe's log) &middot; <a href="metrics">metrics</a> &middot; <a href="recent">recent probes as JSON</a>.
Reload the modules with <code>POST /-/reload</code> or SIGHUP.</p>
<h2>Modules</h2>
<table><tr><th>module</th><th>test</th><th>keys</th></tr>
{{range .Modules}}<tr><td>{{.Name}}</td><td>{{.Plan.Test.Kind}}</td><td>{{range .Settings}}<code>{{.Key}}: {{.Value}}</code> {{end}}</td></tr>
{{end}}</table>
<h2>Recent probes</h2>
<table><tr><th>id</th><th>module</th><th>target</th><th>started</th><th>took</th><th>result</th><th></th></tr>
{{range .Recent}}<tr><td>{{.ID}}</td><td>{{.Module}}</td><td>{{.Target}}</td><td>{{.Start.UTC.Format "2006-01-02 15:04:05"}}</td><td>{{.Took}}</td>
<td>{{if .Success}}success{{else}}<span class="fail">{{.Reason}}</span>{{end}}</td>
<td><a href="logs?id={{.ID}}">log</a>{{if .Result}} &middot; <a href="result?id={{.ID}}">result</a>{{end}}</td></tr>
{{end}}</table>
</body></html>
`))

type pageProbe struct {
	*probeRecord
	Took string
}

func (x *Exporter) serveIndex(w http.ResponseWriter, r *http.Request) {
	c := x.Config()
	data := struct {
		First   string
		Modules []*Module
		Recent  []pageProbe
	}{}
	for _, n := range c.Names() {
		data.Modules = append(data.Modules, c.Modules[n])
	}
	if len(data.Modules) > 0 {
		data.First = data.Modules[0].Name
	}
	for _, p := range slices.Backward(x.recentProbes()) {
		data.Recent = append(data.Recent, pageProbe{p, p.Duration.Round(time.Millisecond).String()})
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	indexPage.Execute(w, data)
}

func (x *Exporter) recentProbes() []*probeRecord {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.recent)
}

func (x *Exporter) find(w http.ResponseWriter, r *http.Request) *probeRecord {
	id, err := strconv.ParseUint(r.URL.Query().Get("id"), 10, 64)
	if err != nil {
		http.Error(w, "id=N: the number of a recent probe, as the / page lists them", http.StatusBadRequest)
		return nil
	}
	for _, p := range x.recentProbes() {
		if p.ID == id {
			return p
		}
	}
	http.Error(w, "no recent probe with that id: the exporter keeps the last 100", http.StatusNotFound)
	return nil
}

// serveLog answers /logs?id=N: a recent probe's log.
func (x *Exporter) serveLog(w http.ResponseWriter, r *http.Request) {
	if p := x.find(w, r); p != nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte(p.Log))
	}
}

// serveResult answers /result?id=N: a recent probe's results document,
// as `wirespeed run --json` writes it.
func (x *Exporter) serveResult(w http.ResponseWriter, r *http.Request) {
	p := x.find(w, r)
	if p == nil {
		return
	}
	if p.Result == nil {
		http.Error(w, "that probe ran no test: see its log", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(p.Result)
}

// RecentProbe is one entry of /recent.
type RecentProbe struct {
	ID              uint64    `json:"id"`
	Module          string    `json:"module"`
	Target          string    `json:"target"`
	Start           time.Time `json:"start"`
	DurationSeconds float64   `json:"duration_seconds"`
	Success         bool      `json:"success"`
	Reason          string    `json:"reason,omitempty"`
	Error           string    `json:"error,omitempty"`
	// ResultStarted is the result's start, the value of
	// wirespeed_probe_started_timestamp_seconds: what ties a stored
	// sample to its probe.
	ResultStarted *time.Time `json:"result_started,omitempty"`
}

// serveRecent answers /recent: the recent probes, newest first, as JSON.
func (x *Exporter) serveRecent(w http.ResponseWriter, r *http.Request) {
	var list []RecentProbe
	for _, p := range slices.Backward(x.recentProbes()) {
		e := RecentProbe{ID: p.ID, Module: p.Module, Target: p.Target, Start: p.Start, DurationSeconds: p.Duration.Seconds(),
			Success: p.Success, Reason: p.Reason, Error: p.Message}
		if p.Result != nil {
			t := p.ResultStarted
			e.ResultStarted = &t
		}
		list = append(list, e)
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(list)
}
