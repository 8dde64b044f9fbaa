package exporter

import (
	"log"
	"net"
	"net/http"
	"time"

	"wirespeed/internal/httplimit"
)

// Defaults of the HTTP server's limits (Options). The exporter's clients
// are Prometheus and a person with curl: requests are a line and a few
// headers, and a connection idles between scrapes.
const (
	DefaultMaxConns          = httplimit.DefaultMaxConns
	DefaultIdleTimeout       = httplimit.DefaultIdleTimeout
	DefaultReadHeaderTimeout = httplimit.DefaultReadHeaderTimeout
	DefaultReadTimeout       = httplimit.DefaultReadTimeout
	// maxHeaderBytes bounds a request's line and headers: a probe's
	// query is a module and a target (ParseTarget takes 260 characters).
	maxHeaderBytes = httplimit.DefaultMaxHeaderBytes
	// writeSlack is what the answer's write may take beyond the longest
	// probe (MaxTimeout), from the end of the request's headers.
	writeSlack = 10 * time.Second
)

// Server returns the HTTP server of Handler with the limits every HTTP
// server of wirespeed has (httplimit.Server), set from the exporter's
// options: the request's headers in ReadHeaderTimeout and the whole
// request in ReadTimeout, the answer written within MaxTimeout and 10 s
// more (a probe answers by its deadline, MaxTimeout at the longest), a
// keep-alive connection closed after IdleTimeout without a request, 64
// KiB of request headers. Serve it on Listener(ln), which bounds the
// connections. errorLog may be nil (the log package's).
func (x *Exporter) Server(errorLog *log.Logger) *http.Server {
	return httplimit.Server(x.Handler(), httplimit.Limits{
		ReadHeaderTimeout: x.opts.ReadHeaderTimeout,
		ReadTimeout:       x.opts.ReadTimeout,
		WriteTimeout:      x.opts.MaxTimeout + writeSlack,
		IdleTimeout:       x.opts.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}, errorLog)
}

// Listener wraps ln so that at most MaxConns of its connections are open
// at once (httplimit.Listener): the next waits in the kernel's backlog
// until one closes or one is idle between requests, which is then
// closed for it. The connections open count in
// wirespeed_exporter_http_connections.
func (x *Exporter) Listener(ln net.Listener) net.Listener {
	return httplimit.Listener(ln, x.opts.MaxConns, &x.conns)
}
