package dashboard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHeadersAuthReadOnly checks the rules that make the dashboard safe
// to leave running: the security headers on every answer, only GET and
// HEAD, and the token or user and password when set.
func TestHeadersAuthReadOnly(t *testing.T) {
	a := openArchive(t)
	seed(t, a)
	s, err := New(Options{Archive: a, Token: "s3cret-token-0123456789", User: "noc", Password: "wall", Poll: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	get := func(method, path string, auth func(*http.Request)) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, nil)
		if auth != nil {
			auth(r)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w
	}
	bearer := func(tok string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
	}
	basic := func(u, p string) func(*http.Request) { return func(r *http.Request) { r.SetBasicAuth(u, p) } }
	for _, c := range []struct {
		method, path string
		auth         func(*http.Request)
		code         int
	}{
		{"GET", "/", nil, 401},
		{"GET", "/", bearer("wrong"), 401},
		{"GET", "/", basic("noc", "wrong"), 401},
		{"GET", "/result.json?id=1", basic("other", "wall"), 401},
		{"GET", "/", bearer("s3cret-token-0123456789"), 200},
		{"GET", "/", basic("anyone", "s3cret-token-0123456789"), 200},
		{"GET", "/", basic("noc", "wall"), 200},
		{"POST", "/", basic("noc", "wall"), 405},
		{"DELETE", "/result.json?id=1", basic("noc", "wall"), 405},
		{"GET", "/result.json?id=1", basic("noc", "wall"), 200},
		{"GET", "/result.json?id=999999", basic("noc", "wall"), 404},
		{"GET", "/result.json?id=x", basic("noc", "wall"), 400},
		{"GET", "/pair?src=a", basic("noc", "wall"), 400},
		{"GET", "/chart.svg?src=a&dst=b&test=TCP_STREAM&series=0", basic("noc", "wall"), 200},
		{"GET", "/chart.svg?src=a&dst=b&test=TCP_STREAM&series=7", basic("noc", "wall"), 404},
	} {
		w := get(c.method, c.path, c.auth)
		if w.Code != c.code {
			t.Errorf("%s %s: %d, want %d: %s", c.method, c.path, w.Code, c.code, w.Body)
		}
		h := w.Header()
		csp := h.Get("Content-Security-Policy")
		wants := []string{"script-src 'self'", "frame-ancestors 'none'", "default-src 'none'"}
		if strings.HasPrefix(c.path, "/chart.svg") && c.code == 200 {
			// A chart runs no script at all (default-src 'none', no
			// script-src); only its inline styles and data: fonts may load.
			wants = []string{"default-src 'none'", "frame-ancestors 'none'", "style-src 'unsafe-inline'"}
			if strings.Contains(csp, "script-src") {
				t.Errorf("%s %s: chart CSP %q allows script", c.method, c.path, csp)
			}
		} else if strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s %s: CSP %q allows inline code", c.method, c.path, csp)
		}
		for _, want := range wants {
			if !strings.Contains(csp, want) {
				t.Errorf("%s %s: CSP %q lacks %q", c.method, c.path, csp, want)
			}
		}
		if h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s %s: nosniff %q", c.method, c.path, h.Get("X-Content-Type-Options"))
		}
	}
	// The pages carry no inline script for the CSP to forbid.
	body := get("GET", "/", bearer("s3cret-token-0123456789")).Body.String()
	if strings.Contains(body, "<script>") || strings.Contains(body, " on") && strings.Contains(body, "onclick") {
		t.Errorf("the grid page has inline script")
	}
}
