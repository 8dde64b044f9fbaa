// Package dashboard serves the archive to a browser: the mesh grid
// (sources down, destinations across, each pair one cell above the
// diagonal, split for the two directions and coloured by the series'
// own history and change points, over a time range)
// and each pair's history (chart, change points with what changed in
// the environment, the points, their raw JSON, and the compare verdict
// of two of them). It reads the archive only, through an interface
// (Archive) the archive meets, and internal/history; charts are
// internal/plot's gonum SVG. Every page
// is html/template (so every string from a peer, label or title is
// escaped), every asset is embedded, and the one script is a file
// (assets/live.js), so the Content-Security-Policy forbids inline
// script.
package dashboard

import (
	"bytes"
	"cmp"
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"wirespeed/internal/comparison"
	"wirespeed/internal/history"
	"wirespeed/internal/httplimit"
	"wirespeed/internal/plot"
	"wirespeed/internal/record"
	"wirespeed/internal/report"
)

//go:embed assets templates
var files embed.FS

// Archive is what the dashboard reads (archive.Archive is one): the
// results and environments history loads, how many results there are,
// a result's row and its document.
type Archive interface {
	history.Archive
	Count(ctx context.Context) (record.Counts, error)
	Result(ctx context.Context, id int64) (record.Row, error)
	Document(ctx context.Context, id int64) (record.Stored, error)
}

// Options configure a Server.
type Options struct {
	Archive Archive
	// Window, when set, shows only results of the last Window.
	Window time.Duration
	// Alpha is the change points' significance level (default 0.01);
	// Permutations per test (0: stats' default).
	Alpha        float64
	Permutations int
	// Thresholds are fixed limits by test (TCP_STREAM).
	Thresholds map[string]Threshold
	// Token, when set, must come as "Authorization: Bearer TOKEN" or as
	// the password of basic authentication (any user name); User and
	// Password, when set, are basic authentication's.
	Token          string
	User, Password string
	// Poll is how often the page asks whether there is something new
	// (default 5 s).
	Poll time.Duration
	Now  func() time.Time
	// Limits are the HTTP server's (Serve); MaxRequests bounds the
	// costly pages answered at once (the grid, a pair, a chart, a
	// result, compare, the state), past which a request is answered 503.
	Limits httplimit.Limits
	// PageRows is how many points a pair's table lists a page (default
	// 200); ChartPoints how many points a chart draws of a series at
	// most (default 1000: the smallest and largest of each of 500
	// columns of time).
	PageRows, ChartPoints int
	// Hosts are names the Host header may give besides localhost,
	// 127.0.0.1 and [::1] when Serve listens on loopback (a name of
	// /etc/hosts for it).
	Hosts []string
	// Logger has what a page does not say (an archive's error); nil
	// for slog's default.
	Logger *slog.Logger
}

// MinTokenBytes is the shortest token New accepts.
const MinTokenBytes = 16

// ErrWeakToken is CheckToken's error for a token shorter than
// MinTokenBytes.
var ErrWeakToken = errors.New("the token is too short")

// CheckToken refuses a token shorter than MinTokenBytes, which a client
// could guess: 3 characters took an hour at the 5,000 guesses a second
// one connection made before guesses were throttled.
func CheckToken(token string) error {
	if len(token) < MinTokenBytes {
		return fmt.Errorf("%w: it is %d bytes, give one of at least %d (make one with `head -c 16 /dev/urandom | base64 > FILE`)", ErrWeakToken, len(token), MinTokenBytes)
	}
	return nil
}

// Server is the dashboard's http.Handler.
type Server struct {
	o    Options
	mux  *http.ServeMux
	tmpl *template.Template

	mu      sync.Mutex
	cache   map[string]cached
	flights map[string]*flight
	pairs   map[string]cachedPair
	known   knownTests

	guesses *throttle
	// hosts, when set, are the only names the Host header may give (a
	// loopback listener's: Serve).
	hosts []string
	conns atomic.Int64 // connections open (Serve)
}

type cached struct {
	results int64
	grid    *Grid
	built   time.Time
}

// windowTTL is how long a grid of a window of time (--since, ?range=1d)
// is kept while the archive has no more results: its window's start
// moves on, so it is made again, but not for every request.
const windowTTL = time.Minute

var filterAll = record.Filter{}

// New makes the server.
func New(o Options) (*Server, error) {
	if o.Archive == nil {
		return nil, fmt.Errorf("dashboard: no archive")
	}
	if o.Alpha == 0 {
		o.Alpha = 0.01
	}
	if o.Poll == 0 {
		o.Poll = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Token != "" {
		if err := CheckToken(o.Token); err != nil {
			return nil, err
		}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.PageRows <= 0 {
		o.PageRows = 200
	}
	if o.ChartPoints <= 0 {
		o.ChartPoints = 1000
	}
	o.Limits = o.Limits.WithDefaults()
	t, err := template.New("").Funcs(template.FuncMap{"ago": ago}).ParseFS(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	s := &Server{o: o, tmpl: t, cache: map[string]cached{}, flights: map[string]*flight{}, pairs: map[string]cachedPair{}, mux: http.NewServeMux(),
		guesses: newThrottle(o.Logger)}
	assets, _ := fs.Sub(files, "assets")
	s.mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServer(http.FS(assets))))
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	// Every page that reads the archive is costly: at most MaxRequests
	// of them at once.
	limited := http.NewServeMux()
	limited.HandleFunc("GET /{$}", s.grid)
	limited.HandleFunc("GET /grid", s.gridFragment)
	limited.HandleFunc("GET /pair", s.pair)
	limited.HandleFunc("GET /chart.svg", s.chart)
	limited.HandleFunc("GET /result.json", s.resultJSON)
	limited.HandleFunc("GET /compare", s.compare)
	limited.HandleFunc("GET /state.json", s.state)
	s.mux.Handle("/", httplimit.Concurrent(limited, o.Limits.MaxRequests))
	return s, nil
}

// csp is on every answer: no script but the embedded file, no frames,
// no sniffing.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// chartCSP is a chart's, opened on its own (a new tab): gonum's SVG
// styles its text inline and embeds its fonts as data: URLs, which
// csp would block; it may run no script at all.
const chartCSP = "default-src 'none'; style-src 'unsafe-inline'; font-src data:; img-src data:; base-uri 'none'; frame-ancestors 'none'"

// ServeHTTP checks authentication, refuses what is not a read, and sets
// the security headers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if !s.hostAllowed(r.Host) {
		http.Error(w, "this dashboard answers only to the names of its loopback address (localhost, 127.0.0.1, [::1]): open it by one of them", http.StatusMisdirectedRequest)
		return
	}
	if !s.authenticate(w, r) {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "the dashboard is read-only: only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func same(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

func (s *Server) authorized(r *http.Request) bool {
	if s.o.Token == "" && s.o.User == "" {
		return true
	}
	if s.o.Token != "" {
		if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && same(b, s.o.Token) {
			return true
		}
	}
	u, p, ok := r.BasicAuth()
	if !ok {
		return false
	}
	if s.o.Token != "" && same(p, s.o.Token) {
		return true
	}
	return s.o.User != "" && same(u, s.o.User) && same(p, s.o.Password)
}

// timeRange is the time range a page shows: its name in the URL
// (?range=1d) and how far back it goes (0: all, or Options.Window).
type timeRange struct {
	Name   string
	Window time.Duration
}

// ranges are the choices the grid and the pair page offer.
var ranges = []timeRange{{"1d", 24 * time.Hour}, {"7d", 7 * 24 * time.Hour}, {"all", 0}}

// rangeOf is the request's ?range: 1d, 7d or all; absent, the
// dashboard's --window (Options.Window).
func (s *Server) rangeOf(q url.Values) (timeRange, error) {
	name := q.Get("range")
	if name == "" {
		return timeRange{Window: s.o.Window}, nil
	}
	for _, r := range ranges {
		if r.Name == name {
			return r, nil
		}
	}
	return timeRange{}, fmt.Errorf("range %q: give 1d (the last day), 7d (the last week) or all", name)
}

func (s *Server) since(r timeRange) time.Time {
	if r.Window == 0 {
		return time.Time{}
	}
	return s.o.Now().Add(-r.Window)
}

// gridFor is the grid of the test, computed again only when the archive
// has more (or fewer) results than when it was last (a window's grid
// also after windowTTL). Only a test the archive has results of, or ""
// (the newest result's), has a grid: another is a badRequest, and
// nothing is kept for it, so that the cache holds at most a grid per
// test and range the archive has. A grid is built once however many ask
// for it at once (shared), and not under s.mu.
func (s *Server) gridFor(ctx context.Context, test string, rg timeRange) (*Grid, error) {
	c, err := s.o.Archive.Count(ctx)
	if err != nil {
		return nil, err
	}
	if test != "" {
		tests, err := s.testsOf(ctx, c.Results)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(tests, test) {
			return nil, unknownTest{test, tests}
		}
	}
	key := test + "\x00" + rg.Name
	now := s.o.Now()
	s.mu.Lock()
	x, ok := s.cache[key]
	s.mu.Unlock()
	if ok && x.results == c.Results && (rg.Window == 0 || now.Sub(x.built) < windowTTL) {
		return x.grid, nil
	}
	v, err := s.shared(ctx, "grid\x00"+key, func(ctx context.Context) (any, error) {
		g, err := s.buildGrid(ctx, test, rg)
		if err != nil {
			return nil, err
		}
		g.Results = c.Results
		s.mu.Lock()
		s.cache[key] = cached{c.Results, g, now}
		s.mu.Unlock()
		return g, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Grid), nil
}

// unknownTest is a grid asked for a test the archive has no results of
// (404).
type unknownTest struct {
	test  string
	tests []string
}

func (u unknownTest) Error() string {
	t := u.test
	if len(t) > 40 {
		t = t[:40] + "..."
	}
	if len(u.tests) == 0 {
		return fmt.Sprintf("no results of test %q: the archive has none yet", t)
	}
	return fmt.Sprintf("no results of test %q in the archive; its tests are %s", t, strings.Join(u.tests, ", "))
}

type view struct {
	Title  string
	Poll   int64
	Newest time.Time
	Count  int64
	Grid   *Grid
	Pair   *pairPage
	Cmp    *comparePage
	Now    time.Time
	// Range is the page's time range ("" for the default); Ranges the
	// choices, each with its link.
	Range  string
	Ranges []rangeLink
}

type rangeLink struct {
	Name, Label, Href string
	On                bool
}

var rangeLabels = map[string]string{"1d": "last day", "7d": "last week", "all": "all"}

// rangeLinks are the range choices of a page at path with query q.
func rangeLinks(path string, q url.Values, current string) []rangeLink {
	var out []rangeLink
	for _, r := range ranges {
		v := url.Values{}
		for k, x := range q {
			v[k] = x
		}
		v.Set("range", r.Name)
		out = append(out, rangeLink{Name: r.Name, Label: rangeLabels[r.Name], Href: path + "?" + v.Encode(), On: r.Name == current})
	}
	return out
}

func (s *Server) render(w http.ResponseWriter, name string, p view) {
	p.Poll = s.o.Poll.Milliseconds()
	p.Now = s.o.Now()
	var b bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&b, name, p); err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

// fail answers code: with err's words when the request was at fault (a
// 4xx); otherwise with words that name nothing of the archive (its
// errors name its user, host and database), err going to the log.
func (s *Server) fail(w http.ResponseWriter, code int, err error) {
	if code >= 500 {
		s.o.Logger.Error("dashboard: a page failed", "err", err)
		http.Error(w, "the dashboard could not make this page (the archive may be unreachable): the dashboard's log says why", code)
		return
	}
	http.Error(w, err.Error(), code)
}

// failErr answers err: 400 for a bad request, 404 for an unknown test,
// else 500 (fail).
func (s *Server) failErr(w http.ResponseWriter, err error) {
	var u unknownTest
	switch {
	case isBad(err):
		s.fail(w, http.StatusBadRequest, err)
	case errors.As(err, &u):
		s.fail(w, http.StatusNotFound, err)
	default:
		s.fail(w, http.StatusInternalServerError, err)
	}
}

func (s *Server) grid(w http.ResponseWriter, r *http.Request) {
	rg, err := s.rangeOf(r.URL.Query())
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	g, err := s.gridFor(r.Context(), r.URL.Query().Get("test"), rg)
	if err != nil {
		s.failErr(w, err)
		return
	}
	s.render(w, "grid.html", view{Title: "mesh grid: " + g.Test, Grid: g, Newest: g.Newest, Count: g.Results,
		Range: rg.Name, Ranges: rangeLinks("/", url.Values{"test": {g.Test}}, rg.Name)})
}

func (s *Server) gridFragment(w http.ResponseWriter, r *http.Request) {
	rg, err := s.rangeOf(r.URL.Query())
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	g, err := s.gridFor(r.Context(), r.URL.Query().Get("test"), rg)
	if err != nil {
		s.failErr(w, err)
		return
	}
	s.render(w, "table", view{Grid: g, Newest: g.Newest, Count: g.Results})
}

// state is what the page polls: how many results the archive holds;
// when that changes the page fetches its grid or reloads.
func (s *Server) state(w http.ResponseWriter, r *http.Request) {
	c, err := s.o.Archive.Count(r.Context())
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"results": c.Results})
}

func pairHref(src, dst, test, rg string) string {
	v := url.Values{"src": {src}, "dst": {dst}, "test": {test}}
	if rg != "" {
		v.Set("range", rg)
	}
	return "/pair?" + v.Encode()
}

// pairPage is a pair's history.
type pairPage struct {
	Source, Destination, Test string
	// Range is the time range shown ("" for the default).
	Range  string
	Series []seriesView
	// Page is the page of the points' tables shown (from 1).
	Page int
}

type seriesView struct {
	Name string
	// Figures are the table's figure columns after the main figure's
	// (rtt, p90, p99, throughput).
	Main    string
	Figures []string
	// HasCI and HasTitle say whether any point has an interval or a
	// title (the table's columns for them, else left out).
	HasCI, HasTitle bool
	Chart           string
	Alt             string
	Changes         []changeView
	Steps           []changeView
	Points          []pointView
	// Shown says which points the table lists of how many ("points 1 to
	// 200 of 100000, newest first"); Newer and Older link to the pages
	// beside this one ("" at either end).
	Shown, Newer, Older string
}

type changeView struct {
	When, Sentence, Env string
}

type pointView struct {
	When, Figure, CI, Limit, Title, Note string
	Extra                                []string
	Iterations                           int
	ID                                   int64
	Change, Step                         bool
}

// pairSet is one series of a pair (a message size and settings) in
// every figure it is charted with: the panels of history.Panels, each
// a series per figure that has points.
type pairSet struct {
	Main   history.Series
	Panels [][]history.Series
}

// pairSeries are the series of the pair and test q names, loaded once
// for the page, its charts and its other pages while the archive has as
// many results (and a window's for windowTTL): the last maxPairs pairs
// loaded are kept, and only a pair with results.
func (s *Server) pairSeries(ctx context.Context, q url.Values) ([]pairSet, error) {
	src, dst, test := q.Get("src"), q.Get("dst"), q.Get("test")
	if src == "" || dst == "" || test == "" {
		return nil, badf("give src, dst and test")
	}
	rg, err := s.rangeOf(q)
	if err != nil {
		return nil, badRequest{err}
	}
	c, err := s.o.Archive.Count(ctx)
	if err != nil {
		return nil, err
	}
	key := src + "\x00" + dst + "\x00" + test + "\x00" + rg.Name
	now := s.o.Now()
	s.mu.Lock()
	x, ok := s.pairs[key]
	s.mu.Unlock()
	if ok && x.results == c.Results && (rg.Window == 0 || now.Sub(x.built) < windowTTL) {
		return x.sets, nil
	}
	v, err := s.shared(ctx, "pair\x00"+key, func(ctx context.Context) (any, error) {
		sets, err := s.loadPair(ctx, src, dst, test, rg)
		if err != nil || len(sets) == 0 {
			return sets, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.pairs) >= maxPairs {
			var oldest string
			for k, p := range s.pairs {
				if oldest == "" || p.built.Before(s.pairs[oldest].built) {
					oldest = k
				}
			}
			delete(s.pairs, oldest)
		}
		s.pairs[key] = cachedPair{c.Results, sets, now}
		return sets, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]pairSet), nil
}

// maxPairs is how many pairs' series the dashboard keeps (pairSeries).
const maxPairs = 16

type cachedPair struct {
	results int64
	sets    []pairSet
	built   time.Time
}

func (s *Server) loadPair(ctx context.Context, src, dst, test string, rg timeRange) ([]pairSet, error) {
	panels := history.Panels(test)
	var figs []history.Figure
	for _, p := range panels {
		figs = append(figs, p...)
	}
	all, _, _, err := history.Load(ctx, s.o.Archive, history.Query{
		Filter:  record.Filter{Source: src, Destination: dst, Test: test, Since: s.since(rg)},
		Figures: figs, Options: history.Options{Alpha: s.o.Alpha, Permutations: s.o.Permutations}})
	if err != nil {
		return nil, err
	}
	// Each figure's series, by key; the main figure's give the order.
	byFigure := map[string]map[history.Key]history.Series{}
	var mains []history.Series
	for _, sr := range all {
		if byFigure[sr.Figure] == nil {
			byFigure[sr.Figure] = map[history.Key]history.Series{}
		}
		byFigure[sr.Figure][sr.Key] = sr
		if sr.Figure == panels[0][0].Label {
			mains = append(mains, sr)
		}
	}
	var out []pairSet
	for _, main := range mains {
		var set pairSet
		for _, p := range panels {
			var ss []history.Series
			for _, fig := range p {
				if sr, ok := byFigure[fig.Label][main.Key]; ok {
					ss = append(ss, sr)
				}
			}
			if len(ss) > 0 {
				set.Panels = append(set.Panels, ss)
			}
		}
		set.Main = set.Panels[0][0]
		out = append(out, set)
	}
	return out, nil
}

const timeFormat = "2006-01-02 15:04:05"

func (s *Server) pair(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page := 1
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			s.fail(w, http.StatusBadRequest, fmt.Errorf("page %.20q: give a page number from 1", p))
			return
		}
		page = n
	}
	sets, err := s.pairSeries(r.Context(), q)
	if err != nil {
		s.failErr(w, err)
		return
	}
	pp := &pairPage{Source: q.Get("src"), Destination: q.Get("dst"), Test: q.Get("test"), Range: q.Get("range"), Page: page}
	pageHref := func(n int) string {
		v := url.Values{"src": {pp.Source}, "dst": {pp.Destination}, "test": {pp.Test}}
		if pp.Range != "" {
			v.Set("range", pp.Range)
		}
		if n > 1 {
			v.Set("page", strconv.Itoa(n))
		}
		return "/pair?" + v.Encode()
	}
	var newest time.Time
	for i, set := range sets {
		sr := set.Main
		name := fmt.Sprintf("%s %d B", sr.Key.Test, sr.Key.MsgSize)
		if sr.Key.Settings != "" {
			name += " " + sr.Key.Settings
		}
		v := seriesView{Name: name, Main: sr.Figure}
		cq := url.Values{"src": {pp.Source}, "dst": {pp.Destination}, "test": {pp.Test}, "series": {strconv.Itoa(i)}}
		if pp.Range != "" {
			cq.Set("range", pp.Range)
		}
		v.Chart = "/chart.svg?" + cq.Encode()
		// The other figures, as table columns, by result.
		extra := map[int64][]string{}
		var others []history.Series
		for _, p := range set.Panels {
			for _, o := range p {
				if o.Figure == sr.Figure {
					continue
				}
				others = append(others, o)
				v.Figures = append(v.Figures, o.Figure)
			}
		}
		for k, o := range others {
			for _, p := range o.Points {
				if extra[p.ResultID] == nil {
					extra[p.ResultID] = make([]string, len(others))
				}
				extra[p.ResultID][k] = report.FigureValue(o.Unit, p.Value)
			}
		}
		var figs []string
		for _, p := range set.Panels {
			for _, o := range p {
				figs = append(figs, o.Figure)
			}
		}
		v.Alt = "history of " + strings.Join(figs, ", ") + ": points with confidence bands, change points dashed, environment changes dotted and labelled under the time axis"
		// The change points of every figure, by time.
		changeAt := map[int64]string{}
		var changes []history.Change
		var changeOf []history.Series
		for _, p := range set.Panels {
			for _, o := range p {
				for _, c := range o.Changes {
					changes = append(changes, c)
					changeOf = append(changeOf, o)
				}
			}
		}
		order := make([]int, len(changes))
		for k := range order {
			order[k] = k
		}
		slices.SortStableFunc(order, func(a, b int) int { return changes[a].Time.Compare(changes[b].Time) })
		for _, k := range order {
			c, o := changes[k], changeOf[k]
			env := report.EnvSentence(c.Env)
			if env == "" {
				env = "the recorded environment did not change"
			}
			v.Changes = append(v.Changes, changeView{When: c.Time.UTC().Format(timeFormat), Sentence: report.ChangeSentence(o, c), Env: env})
			id := o.Points[c.Index].ResultID
			if _, ok := changeAt[id]; !ok {
				changeAt[id] = o.Figure
			} else if !strings.Contains(changeAt[id], o.Figure) {
				changeAt[id] += ", " + o.Figure
			}
		}
		// Every change of the environment between consecutive points.
		stepAt := map[int64]string{}
		for _, st := range sr.Steps {
			env := report.EnvSentence(st.Env)
			v.Steps = append(v.Steps, changeView{When: st.Time.UTC().Format(timeFormat), Sentence: plot.EnvLabel(st.Env), Env: env})
			stepAt[sr.Points[st.Index].ResultID] = env
		}
		// The page's points, newest first: PageRows of them.
		rows := s.o.PageRows
		from := len(sr.Points) - 1 - (page-1)*rows // newest on the page
		to := max(from-rows+1, 0)                  // oldest on the page
		if from >= 0 {
			v.Shown = fmt.Sprintf("points %d to %d of %d, newest first", (page-1)*rows+1, (page-1)*rows+from-to+1, len(sr.Points))
		} else {
			v.Shown = fmt.Sprintf("no points on page %d: the series has %d", page, len(sr.Points))
		}
		if page > 1 {
			v.Newer = pageHref(min(page-1, (len(sr.Points)+rows-1)/rows))
		}
		if to > 0 {
			v.Older = pageHref(page + 1)
		}
		for _, p := range sr.Points {
			if p.Time.After(newest) {
				newest = p.Time
			}
		}
		for j := from; j >= to; j-- {
			p := sr.Points[j]
			pv := pointView{When: p.Time.UTC().Format(timeFormat), Figure: report.FigureValue(sr.Unit, p.Value),
				Limit: p.Limit, Title: p.Title, Iterations: p.Iterations, ID: p.ResultID, Extra: extra[p.ResultID]}
			if pv.Extra == nil {
				pv.Extra = make([]string, len(others))
			}
			if p.Lo != nil && p.Hi != nil {
				pv.CI = report.FigureValue(sr.Unit, *p.Lo) + " – " + report.FigureValue(sr.Unit, *p.Hi)
				v.HasCI = true
			}
			v.HasTitle = v.HasTitle || p.Title != ""
			var notes []string
			if figs, ok := changeAt[p.ResultID]; ok {
				pv.Change = true
				notes = append(notes, "change point ("+figs+")")
			}
			if env, ok := stepAt[p.ResultID]; ok {
				pv.Step = true
				notes = append(notes, "environment: "+env)
			}
			pv.Note = strings.Join(notes, "; ")
			v.Points = append(v.Points, pv)
		}
		pp.Series = append(pp.Series, v)
	}
	c, _ := s.o.Archive.Count(r.Context())
	s.render(w, "pair.html", view{Title: pp.Source + " → " + pp.Destination + " " + pp.Test, Pair: pp, Newest: newest, Count: c.Results,
		Range: pp.Range, Ranges: rangeLinks("/pair", url.Values{"src": {pp.Source}, "dst": {pp.Destination}, "test": {pp.Test}}, pp.Range)})
}

func (s *Server) chart(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sets, err := s.pairSeries(r.Context(), q)
	if err != nil {
		s.failErr(w, err)
		return
	}
	i, err := strconv.Atoi(q.Get("series"))
	if err != nil || i < 0 || i >= len(sets) {
		s.fail(w, http.StatusNotFound, fmt.Errorf("no series %.20q of that pair", q.Get("series")))
		return
	}
	// A chart draws about ChartPoints points of a series however many
	// it has: its cost is its pixels.
	var panels [][]history.Series
	for _, p := range sets[i].Panels {
		var ss []history.Series
		for _, sr := range p {
			ss = append(ss, thin(sr, s.o.ChartPoints))
		}
		panels = append(panels, ss)
	}
	f, err := plot.HistoryPanels(panels...)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	var b bytes.Buffer
	if err := plot.WritePlot(&b, f, ".svg"); err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Content-Security-Policy", chartCSP)
	w.Write(darkSVG(b.Bytes()))
}

// resultOf is the result of that id, found in its document by the
// row's locator, with the row.
func (s *Server) resultOf(ctx context.Context, id int64) (record.Item, record.Row, error) {
	row, err := s.o.Archive.Result(ctx, id)
	if err != nil {
		return record.Item{}, row, err
	}
	d, err := s.o.Archive.Document(ctx, row.DocumentID)
	if err != nil {
		return record.Item{}, row, err
	}
	doc, err := record.Decode(d.JSON)
	if err != nil {
		return record.Item{}, row, fmt.Errorf("document %d: %w", d.ID, err)
	}
	it, ok := doc.Find(row.At)
	if !ok {
		return it, row, fmt.Errorf("document %d has no result at %q", d.ID, row.At)
	}
	return it, row, nil
}

// noResult answers 404 for a result that could not be read, whether
// the archive has no such result or could not say: its error, which
// names the archive, goes to the log.
func (s *Server) noResult(w http.ResponseWriter, id int64, err error) {
	s.o.Logger.Info("dashboard: no result", "id", id, "err", err)
	s.fail(w, http.StatusNotFound, fmt.Errorf("no result %d in the archive (or it could not be read: the dashboard's log says which)", id))
}

func (s *Server) resultJSON(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.URL.Query().Get("id"), 10, 64)
	if err != nil {
		s.fail(w, http.StatusBadRequest, fmt.Errorf("give the result's id, a number"))
		return
	}
	it, _, err := s.resultOf(r.Context(), id)
	if err != nil {
		s.noResult(w, id, err)
		return
	}
	b, err := json.MarshalIndent(it.Result, "", "  ")
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

type comparePage struct {
	A, B  int64
	Text  string
	Error string
}

// compare is the compare command's verdict on two results.
func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	ids := r.URL.Query()["r"]
	cp := &comparePage{}
	if len(ids) != 2 {
		w.WriteHeader(http.StatusBadRequest)
		cp.Error = fmt.Sprintf("tick exactly two points to compare (%d were)", len(ids))
		s.render(w, "compare.html", view{Title: "compare", Cmp: cp})
		return
	}
	type ticked struct {
		it  record.Item
		row record.Row
	}
	var two []ticked
	for _, x := range ids {
		id, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			s.fail(w, http.StatusBadRequest, fmt.Errorf("result id %.20q is not a number", x))
			return
		}
		it, row, err := s.resultOf(r.Context(), id)
		if err != nil {
			s.noResult(w, id, err)
			return
		}
		row.ID = id
		two = append(two, ticked{it, row})
	}
	// The older is the baseline, whatever the order of the ticks (the
	// form sends them in the table's, newest first).
	slices.SortStableFunc(two, func(a, b ticked) int {
		if c := a.row.Started.Compare(b.row.Started); c != 0 {
			return c
		}
		return cmp.Compare(a.row.ID, b.row.ID)
	})
	var sources []comparison.Source
	for _, t := range two {
		name := fmt.Sprintf("%s #%d", t.row.Started.UTC().Format("2006-01-02 15:04"), t.row.ID)
		sources = append(sources, comparison.SourceOf(name, *t.it.Result, t.row.Title, t.row.Labels))
	}
	cp.A, cp.B = two[0].row.ID, two[1].row.ID
	newest := two[1].row.Started
	res, err := comparison.Compare(sources, comparison.Options{})
	if err == nil {
		var b bytes.Buffer
		report.Compare(&b, res)
		cp.Text = b.String()
	} else {
		cp.Error = err.Error()
	}
	c, _ := s.o.Archive.Count(r.Context())
	s.render(w, "compare.html", view{Title: "compare", Cmp: cp, Newest: newest, Count: c.Results})
}

// ago says how old t is, for people.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "no results yet"
	}
	d := now.Sub(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%.1f h ago", d.Hours())
	}
	return fmt.Sprintf("%d days ago", int(d.Hours()/24))
}
