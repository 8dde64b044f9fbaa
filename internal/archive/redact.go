package archive

import (
	"net/url"
	"regexp"
	"strings"
)

// hidden stands for a password wherever a target is shown.
const hidden = "xxxxx"

// secretKeys are the connection parameters that hold a password, in a
// URL's query or a libpq key/value string: the login's, and the one of
// the client certificate's key.
var secretKeys = map[string]bool{"password": true, "sslpassword": true}

// kvSecret is a password parameter of a libpq key/value string: the key,
// then a value quoted ('...' with backslash escapes, to its closing quote
// or the end) or bare (to the next space).
var kvSecret = regexp.MustCompile(`(?i)((?:^|\s)(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)`)

// Redact is the one way a target is shown: it hides every password an
// archive target can hold, wherever it is. In a URL (postgres://...):
// the userinfo's (USER:PASSWORD@) and the query's password= and
// sslpassword= (keys matched as the driver reads them: unescaped, in any
// case); in a libpq key/value string (host=... password=... dbname=...):
// the password= and sslpassword= values, quoted or not. A URL that does
// not parse loses its userinfo's password and, when its query names a
// password, its whole query. Anything else (a file path) is returned as
// it is. Every printer, log line, spool file and error that shows a
// target shows Redact's, or Target.String's, which is Redact's.
func Redact(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return kvSecret.ReplaceAllString(s, "${1}"+hidden)
	}
	if u, err := url.Parse(s); err == nil {
		return redactURL(u)
	}
	// Not a URL: hide what may be a password, erring on the side of
	// hiding more.
	head, rest := s[:i+3], s[i+3:]
	query := ""
	if q := strings.Index(rest, "?"); q >= 0 {
		rest, query = rest[:q], rest[q:]
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if c := strings.Index(rest[:at], ":"); c >= 0 {
			rest = rest[:c] + ":" + hidden + rest[at:]
		}
	}
	if uq, err := url.QueryUnescape(query); err != nil || strings.Contains(strings.ToLower(uq), "password") || strings.Contains(strings.ToLower(query), "password") {
		if query != "" {
			query = "?" + hidden
		}
	}
	return head + rest + query
}

// redactURL is u as text without its passwords.
func redactURL(u *url.URL) string {
	r := *u
	if _, has := r.User.Password(); has {
		r.User = url.UserPassword(r.User.Username(), hidden)
	}
	r.RawQuery = redactQuery(r.RawQuery)
	return r.String()
}

// redactQuery hides the values of a URL query's password parameters,
// leaving the rest of it as it was written.
func redactQuery(q string) string {
	if q == "" {
		return q
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, _, _ := strings.Cut(p, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			key = k
		}
		if secretKeys[strings.ToLower(strings.TrimSpace(key))] {
			parts[i] = k + "=" + hidden
		}
	}
	return strings.Join(parts, "&")
}

// secrets are the passwords target holds, for hide.
func (t Target) secrets() []string {
	var out []string
	add := func(s string) {
		if s != "" {
			out = append(out, s)
		}
	}
	if t.URL != nil {
		pw, _ := t.URL.User.Password()
		add(pw)
		for k, vs := range t.URL.Query() {
			if secretKeys[strings.ToLower(k)] {
				for _, v := range vs {
					add(v)
				}
			}
		}
	}
	for _, m := range kvSecret.FindAllStringSubmatch(t.DSN, -1) {
		v := m[2]
		if strings.HasPrefix(v, "'") {
			v = strings.TrimSuffix(strings.TrimPrefix(v, "'"), "'")
			v = strings.NewReplacer(`\'`, `'`, `\\`, `\`).Replace(v)
		}
		add(v)
	}
	return out
}

// minSecretAnywhere is the shortest password hide replaces wherever it
// is in an error's words; a shorter one would garble them.
const minSecretAnywhere = 4

// hide is err with every password of the target replaced, in case a
// driver's error quotes the connection string: the second line of
// defence behind the errors' naming the target by String. errors.Is and
// As still see err.
func (t Target) hide(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	hid := kvSecret.ReplaceAllString(msg, "${1}"+hidden)
	for _, s := range t.secrets() {
		if len(s) >= minSecretAnywhere {
			hid = strings.ReplaceAll(hid, s, hidden)
			continue
		}
		// A short password is hidden where a connection string holds
		// it, not in every word that contains it.
		hid = strings.ReplaceAll(hid, ":"+s+"@", ":"+hidden+"@")
		hid = strings.ReplaceAll(hid, "="+s, "="+hidden)
	}
	if hid == msg {
		return err
	}
	return &hiddenError{msg: hid, err: err}
}

type hiddenError struct {
	msg string
	err error
}

func (e *hiddenError) Error() string { return e.msg }
func (e *hiddenError) Unwrap() error { return e.err }
