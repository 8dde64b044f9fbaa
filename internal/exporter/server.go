package exporter

import (
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the HTTP server's limits (Options). The exporter's clients
// are Prometheus and a person with curl: requests are a line and a few
// headers, and a connection idles between scrapes.
const (
	DefaultMaxConns          = 128
	DefaultIdleTimeout       = 30 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 10 * time.Second
	// maxHeaderBytes bounds a request's line and headers: a probe's
	// query is a module and a target (ParseTarget takes 260 characters).
	maxHeaderBytes = 64 << 10
	// writeSlack is what the answer's write may take beyond the longest
	// probe (MaxTimeout), from the end of the request's headers.
	writeSlack = 10 * time.Second
)

// Server returns the HTTP server of Handler with the exporter's limits:
// the request's headers in ReadHeaderTimeout and the whole request in
// ReadTimeout, the answer written within MaxTimeout and 10 s more (a
// probe answers by its deadline, MaxTimeout at the longest), a
// keep-alive connection closed after IdleTimeout without a request, 64
// KiB of request headers. Serve it on Listener(ln), which bounds the
// connections. errorLog may be nil (the log package's).
func (x *Exporter) Server(errorLog *log.Logger) *http.Server {
	return &http.Server{
		Handler:           x.Handler(),
		ReadHeaderTimeout: x.opts.ReadHeaderTimeout,
		ReadTimeout:       x.opts.ReadTimeout,
		WriteTimeout:      x.opts.MaxTimeout + writeSlack,
		IdleTimeout:       x.opts.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          errorLog,
	}
}

// Listener wraps ln so that at most MaxConns of its connections are open
// at once: Accept waits for one to close before it takes the next, which
// waits in the kernel's backlog meanwhile (golang.org/x/net/netutil's
// LimitListener, without the dependency). The connections open count in
// wirespeed_exporter_http_connections.
func (x *Exporter) Listener(ln net.Listener) net.Listener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, x.opts.MaxConns), done: make(chan struct{}), open: &x.conns}
}

type limitListener struct {
	net.Listener
	sem   chan struct{} // a token for each connection open
	done  chan struct{} // closed by Close
	close sync.Once
	open  *atomic.Int64
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	l.open.Add(1)
	return &limitConn{Conn: c, l: l}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.close.Do(func() { close(l.done) })
	return err
}

type limitConn struct {
	net.Conn
	l       *limitListener
	release sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.release.Do(func() {
		c.l.open.Add(-1)
		<-c.l.sem
	})
	return err
}
