// Package httplimit holds the limits every HTTP server of wirespeed has
// (the dashboard, the exporter, serve's metrics endpoint), stated once
// with their defaults (docs/security.md, "Every HTTP server"): the time
// a request's headers, the whole request, the answer and an idle
// keep-alive connection may take; the size of a request's headers; how
// many connections may be open at once (Listener); how many costly
// requests may be answered at once (Concurrent).
package httplimit

import (
	"context"
	"crypto/tls"
	"fmt"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The defaults of Limits.
const (
	DefaultMaxConns          = 128
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 10 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 30 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultMaxRequests       = 8
)

// Limits of one HTTP server; a zero field takes its default.
type Limits struct {
	// MaxConns is how many connections may be open at once (Listener).
	MaxConns int
	// ReadHeaderTimeout is the time a request's line and headers may
	// take, ReadTimeout the whole request's, WriteTimeout the answer's
	// (from the end of the headers), IdleTimeout a keep-alive
	// connection's between requests.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's line and headers.
	MaxHeaderBytes int
	// MaxRequests is how many costly requests may be answered at once
	// (Concurrent).
	MaxRequests int
}

// WithDefaults is l with each zero field set to its default.
func (l Limits) WithDefaults() Limits {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&l.ReadTimeout, DefaultReadTimeout)
	def(&l.WriteTimeout, DefaultWriteTimeout)
	def(&l.IdleTimeout, DefaultIdleTimeout)
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxRequests <= 0 {
		l.MaxRequests = DefaultMaxRequests
	}
	return l
}

// Server is the http.Server of h with l's timeouts and header bound.
// Serve it on Listener's listener, which bounds its connections (the
// server tells the listener which of them are idle, ConnState).
// errorLog may be nil (the log package's).
func Server(h http.Handler, l Limits, errorLog *log.Logger) *http.Server {
	l = l.WithDefaults()
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ErrorLog:          errorLog,
		ConnState:         connState,
	}
}

// Listener wraps ln so that at most max of its connections are open at
// once. A connection past them is taken from the kernel's backlog only
// when one closes, or when one is idle (a keep-alive connection
// between requests, as its Server says): then the one idle longest is
// closed to make room, so that idle connections (a client holding
// thousands open) never keep a request out. A connection in a request,
// or still sending its first, is never closed for another; the
// server's timeouts bound how long it holds its place. open, when not
// nil, counts the connections open.
func Listener(ln net.Listener, max int, open *atomic.Int64) net.Listener {
	if max <= 0 {
		max = DefaultMaxConns
	}
	if open == nil {
		open = new(atomic.Int64)
	}
	return &listener{Listener: ln, sem: make(chan struct{}, max), done: make(chan struct{}),
		wake: make(chan struct{}, 1), open: open, idle: map[*conn]time.Time{}}
}

type listener struct {
	net.Listener
	sem   chan struct{} // a token for each connection open
	done  chan struct{} // closed by Close
	wake  chan struct{} // a connection became idle
	close sync.Once
	open  *atomic.Int64

	mu   sync.Mutex
	idle map[*conn]time.Time // idle connections, since when
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		select {
		case l.sem <- struct{}{}:
			l.open.Add(1)
			return &conn{Conn: c, l: l}, nil
		default:
		}
		if l.closeIdle() {
			continue
		}
		select {
		case l.sem <- struct{}{}:
			l.open.Add(1)
			return &conn{Conn: c, l: l}, nil
		case <-l.wake:
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

// closeIdle closes the connection idle longest, if one is; its Close
// gives back its place.
func (l *listener) closeIdle() bool {
	l.mu.Lock()
	var oldest *conn
	var since time.Time
	for c, t := range l.idle {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	delete(l.idle, oldest)
	l.mu.Unlock()
	if oldest == nil {
		return false
	}
	oldest.Close()
	return true
}

func (l *listener) Close() error {
	err := l.Listener.Close()
	l.close.Do(func() { close(l.done) })
	return err
}

type conn struct {
	net.Conn
	l       *listener
	release sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.release.Do(func() {
		c.l.mu.Lock()
		delete(c.l.idle, c)
		c.l.mu.Unlock()
		c.l.open.Add(-1)
		<-c.l.sem
	})
	return err
}

// connState is every Server's ConnState: it tells a Listener's
// connection when it is idle between requests and when it is not.
func connState(nc net.Conn, st http.ConnState) {
	if t, ok := nc.(*tls.Conn); ok {
		nc = t.NetConn()
	}
	c, ok := nc.(*conn)
	if !ok {
		return
	}
	l := c.l
	l.mu.Lock()
	if st == http.StateIdle {
		l.idle[c] = time.Now()
	} else {
		delete(l.idle, c)
	}
	l.mu.Unlock()
	if st == http.StateIdle {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// Concurrent answers at most n requests of h at once (n <= 0: the
// default); one more is answered 503 at once, with Retry-After: 1 and
// words saying to retry, so that costly pages cannot pile up.
func Concurrent(h http.Handler, n int) http.Handler {
	if n <= 0 {
		n = DefaultMaxRequests
	}
	sem := make(chan struct{}, n)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case sem <- struct{}{}:
			defer func() { <-sem }()
			h.ServeHTTP(w, r)
		default:
			w.Header().Set("Retry-After", strconv.Itoa(1))
			http.Error(w, fmt.Sprintf("busy: %d requests are being answered, the most at once; retry in a second", n), http.StatusServiceUnavailable)
		}
	})
}

// Serve serves hs on ln until ctx ends, then shuts it down, waiting up
// to grace for requests under way before closing what is left. It
// returns nil after a shutdown, and Serve's error when serving failed by
// itself.
func Serve(ctx context.Context, hs *http.Server, ln net.Listener, grace time.Duration) error {
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(done)
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		if hs.Shutdown(sctx) != nil {
			hs.Close()
		}
	})
	err := hs.Serve(ln)
	if stop() {
		// Serve failed by itself.
		hs.Close()
		return err
	}
	<-done
	return nil
}
