package dashboard

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"wirespeed/internal/history"
	"wirespeed/internal/httplimit"
)

// Serve serves the dashboard on ln (over TLS when tlsCfg is set) until
// ctx is cancelled, with the limits every HTTP server of wirespeed has
// (Options.Limits: httplimit's timeouts, at most MaxConns connections,
// an idle one closed for a new one). On a loopback address it answers
// only requests whose Host names it (localhost, 127.0.0.1, [::1], the
// address, Options.Hosts), so that a web page cannot read it through a
// name of its own that resolves to 127.0.0.1 (DNS rebinding).
// errorLog may be nil.
func (s *Server) Serve(ctx context.Context, ln net.Listener, tlsCfg *tls.Config, errorLog *log.Logger) error {
	if a, ok := ln.Addr().(*net.TCPAddr); ok && a.IP.IsLoopback() {
		s.hosts = append([]string{"localhost", "127.0.0.1", "::1", a.IP.String()}, s.o.Hosts...)
	}
	ln = httplimit.Listener(ln, s.o.Limits.MaxConns, &s.conns)
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	hs := httplimit.Server(s, s.o.Limits, errorLog)
	if err := httplimit.Serve(ctx, hs, ln, 5*time.Second); err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	return nil
}

// hostAllowed says whether a request's Host may be answered: any when
// the dashboard is not on loopback (it then has TLS and authentication),
// else only the loopback's names.
func (s *Server) hostAllowed(host string) bool {
	if s.hosts == nil || host == "" {
		return true
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return slices.ContainsFunc(s.hosts, func(h string) bool { return strings.EqualFold(h, host) })
}

// authenticate answers r 401 when it lacks the credentials the
// dashboard has, and 429 while its address is throttled for wrong
// ones; it says whether r may go on.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) bool {
	if s.o.Token == "" && s.o.User == "" {
		return true
	}
	addr := r.RemoteAddr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		addr = h
	}
	if wait := s.guesses.wait(addr); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait/time.Second)+1))
		http.Error(w, "too many wrong credentials from your address: wait a second, then give the right token or user and password", http.StatusTooManyRequests)
		return false
	}
	if s.authorized(r) {
		return true
	}
	if r.Header.Get("Authorization") != "" {
		s.guesses.failed(addr)
	}
	w.Header().Set("WWW-Authenticate", `Basic realm="wirespeed dashboard", charset="UTF-8"`)
	http.Error(w, "authentication required: give the dashboard's token or user and password", http.StatusUnauthorized)
	return false
}

// Wrong credentials an address may give in a row (guessBurst), and how
// many a second after that (guessRate).
const (
	guessBurst      = 10
	guessRate       = 1.0
	maxGuessers     = 4096
	guessBucketFull = guessBurst
)

// throttle is a token bucket of wrong guesses per remote address: an
// address out of tokens is answered 429 without its credentials being
// looked at, so that guessing goes at guessRate at most. Each time an
// address runs out, one line is logged.
type throttle struct {
	log *slog.Logger
	now func() time.Time

	mu sync.Mutex
	by map[string]*guessBucket
}

type guessBucket struct {
	tokens    float64
	at        time.Time
	throttled bool
	refused   int
}

func newThrottle(log *slog.Logger) *throttle {
	return &throttle{log: log, now: time.Now, by: map[string]*guessBucket{}}
}

func (t *throttle) refill(b *guessBucket, now time.Time) {
	b.tokens = min(guessBucketFull, b.tokens+now.Sub(b.at).Seconds()*guessRate)
	b.at = now
}

// wait is how long addr must wait before its credentials are looked at
// again; 0 when they may be now.
func (t *throttle) wait(addr string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.by[addr]
	if b == nil {
		return 0
	}
	now := t.now()
	t.refill(b, now)
	if b.tokens >= 1 {
		if b.throttled && b.tokens >= guessBucketFull {
			b.throttled = false
		}
		return 0
	}
	b.refused++
	return time.Duration((1 - b.tokens) / guessRate * float64(time.Second))
}

// failed counts a wrong guess from addr.
func (t *throttle) failed(addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	b := t.by[addr]
	if b == nil {
		if len(t.by) >= maxGuessers {
			t.forget(now)
		}
		b = &guessBucket{tokens: guessBucketFull, at: now}
		t.by[addr] = b
	}
	t.refill(b, now)
	b.tokens--
	if b.tokens < 1 && !b.throttled {
		b.throttled = true
		t.log.Warn("dashboard: wrong credentials, throttling the address", "addr", addr,
			"wrong_in_a_row", guessBurst, "then_per_second", guessRate)
	}
}

// forget drops the addresses whose buckets are full again, or, when all
// are still draining, every address: the map stays within maxGuessers.
func (t *throttle) forget(now time.Time) {
	for a, b := range t.by {
		if t.refill(b, now); b.tokens >= guessBucketFull {
			delete(t.by, a)
		}
	}
	if len(t.by) >= maxGuessers {
		clear(t.by)
	}
}

// badRequest is an error in what a request asked, said to its client
// (400); any other error of a page is the archive's, said only in the
// log (fail).
type badRequest struct{ error }

func badf(format string, a ...any) error { return badRequest{fmt.Errorf(format, a...)} }

// flight is a build of a cached value that others wait for (shared).
type flight struct {
	done chan struct{}
	v    any
	err  error
}

// shared runs build once for every caller that asks for key while it
// runs: the others wait for its value, so that a grid or the list of
// tests is computed once however many ask, and never under s.mu. The
// build goes on if the caller who started it leaves.
func (s *Server) shared(ctx context.Context, key string, build func(context.Context) (any, error)) (any, error) {
	s.mu.Lock()
	f, ok := s.flights[key]
	if !ok {
		f = &flight{done: make(chan struct{})}
		s.flights[key] = f
		s.mu.Unlock()
		go func() {
			defer close(f.done)
			f.v, f.err = build(context.WithoutCancel(ctx))
			s.mu.Lock()
			delete(s.flights, key)
			s.mu.Unlock()
		}()
	} else {
		s.mu.Unlock()
	}
	select {
	case <-f.done:
		return f.v, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// knownTests are the tests the archive holds results of, when it held
// results results.
type knownTests struct {
	results int64
	tests   []string
}

// testsOf lists the tests of the archive's results, again only when
// their count changed.
func (s *Server) testsOf(ctx context.Context, results int64) ([]string, error) {
	s.mu.Lock()
	k := s.known
	s.mu.Unlock()
	if k.tests != nil && k.results == results {
		return k.tests, nil
	}
	v, err := s.shared(ctx, "tests", func(ctx context.Context) (any, error) {
		rows, err := s.o.Archive.Results(ctx, filterAll)
		if err != nil {
			return nil, err
		}
		tests := []string{}
		for _, r := range rows {
			if !slices.Contains(tests, r.Test) {
				tests = append(tests, r.Test)
			}
		}
		slices.Sort(tests)
		s.mu.Lock()
		s.known = knownTests{results: results, tests: tests}
		s.mu.Unlock()
		return tests, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]string), nil
}

// thin keeps at most n points of s for a chart: in each of n/2 equal
// spans of time the smallest and the largest value, and every point a
// change point or an environment change is at (their indexes renumbered),
// the first and the last; a series of n points or fewer is s.
func thin(s history.Series, n int) history.Series {
	if len(s.Points) <= n || n < 4 {
		return s
	}
	keep := make([]bool, len(s.Points))
	keep[0], keep[len(keep)-1] = true, true
	for _, c := range s.Changes {
		keep[c.Index] = true
	}
	for _, st := range s.Steps {
		keep[st.Index] = true
	}
	cols := n / 2
	t0, t1 := s.Points[0].Time, s.Points[len(s.Points)-1].Time
	span := t1.Sub(t0)
	lo, hi := -1, -1
	col := -1
	flush := func() {
		if lo >= 0 {
			keep[lo], keep[hi] = true, true
		}
	}
	for i, p := range s.Points {
		c := 0
		if span > 0 {
			c = min(cols-1, int(float64(p.Time.Sub(t0))/float64(span)*float64(cols)))
		}
		if c != col {
			flush()
			col, lo, hi = c, i, i
		}
		if p.Value < s.Points[lo].Value {
			lo = i
		}
		if p.Value > s.Points[hi].Value {
			hi = i
		}
	}
	flush()
	out := s
	out.Points = nil
	newIndex := make([]int, len(s.Points))
	for i, p := range s.Points {
		newIndex[i] = len(out.Points)
		if keep[i] {
			out.Points = append(out.Points, p)
		}
	}
	out.Changes = slices.Clone(s.Changes)
	for i := range out.Changes {
		out.Changes[i].Index = newIndex[out.Changes[i].Index]
	}
	out.Steps = slices.Clone(s.Steps)
	for i := range out.Steps {
		out.Steps[i].Index = newIndex[out.Steps[i].Index]
	}
	return out
}

// isBad says whether err is the request's fault.
func isBad(err error) bool {
	var b badRequest
	return errors.As(err, &b)
}
