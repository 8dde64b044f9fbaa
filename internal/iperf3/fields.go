package iperf3

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"wirespeed/internal/peertext"
)

// object is a JSON object read strictly: every field is taken by a typed
// accessor that checks its JSON type and its range, and the first problem
// is kept. Unknown fields are ignored (iperf3 adds fields over versions),
// but the whole message is bounded before it is parsed.
type object struct {
	what   string // "parameters" or "results", for errors
	fields map[string]json.RawMessage
	err    error
}

// parseObject parses b as one JSON object and nothing after it.
func parseObject(what string, b []byte) (*object, error) {
	o := &object{what: what}
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&o.fields); err != nil {
		return nil, fmt.Errorf("%w: %s are not a JSON object: %v", ErrProtocol, what, err)
	}
	if o.fields == nil {
		return nil, fmt.Errorf("%w: %s are null, not a JSON object", ErrProtocol, what)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: %s carry data after their JSON object", ErrProtocol, what)
	}
	return o, nil
}

func (o *object) fail(name, format string, args ...any) {
	if o.err == nil {
		o.err = fmt.Errorf("%w: %s field %q %s", ErrProtocol, o.what, name, fmt.Sprintf(format, args...))
	}
}

func (o *object) has(name string) bool {
	_, ok := o.fields[name]
	return ok
}

// require fails for each name that is missing.
func (o *object) require(names ...string) {
	for _, n := range names {
		if !o.has(n) {
			o.fail(n, "is missing")
		}
	}
}

// Int reads an integer field within [lo, hi]; def when absent. JSON
// integers only: no fraction, no exponent, no string. A value from 2^63
// to 2^64-1 is read as the int64 with the same bits: iperf3 3.12 writes
// -1 as 18446744073709551615.
func (o *object) Int(name string, lo, hi, def int64) int64 {
	raw, ok := o.fields[name]
	if !ok {
		return def
	}
	v, err := parseInt(raw)
	if err != nil {
		o.fail(name, "%v", err)
		return def
	}
	if v < lo || v > hi {
		o.fail(name, "is %d, outside %d..%d", v, lo, hi)
		return def
	}
	return v
}

func parseInt(raw json.RawMessage) (int64, error) {
	s := string(bytes.TrimSpace(raw))
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
		return 0, fmt.Errorf("is %s, not an integer", clip(s))
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return int64(u), nil
	}
	return 0, fmt.Errorf("is %s, not a 64-bit integer", clip(s))
}

// Float reads a finite number within [lo, hi]; def when absent.
func (o *object) Float(name string, lo, hi, def float64) float64 {
	raw, ok := o.fields[name]
	if !ok {
		return def
	}
	s := string(bytes.TrimSpace(raw))
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
		o.fail(name, "is %s, not a number", clip(s))
		return def
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		o.fail(name, "is %s, not a finite number", clip(s))
		return def
	}
	if v < lo || v > hi {
		o.fail(name, "is %g, outside %g..%g", v, lo, hi)
		return def
	}
	return v
}

// Bool reads true or false; iperf3 writes some flags as 1 or 0, which are
// accepted too. def when absent.
func (o *object) Bool(name string, def bool) bool {
	raw, ok := o.fields[name]
	if !ok {
		return def
	}
	switch string(bytes.TrimSpace(raw)) {
	case "true", "1":
		return true
	case "false", "0":
		return false
	}
	o.fail(name, "is %s, not true or false", clip(string(raw)))
	return def
}

// String reads a string of at most max bytes; def when absent.
func (o *object) String(name string, max int, def string) string {
	raw, ok := o.fields[name]
	if !ok {
		return def
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		o.fail(name, "is %s, not a string", clip(string(raw)))
		return def
	}
	if len(s) > max {
		o.fail(name, "is %d bytes long, more than %d", len(s), max)
		return def
	}
	return peertext.Escape(s) // it may be printed
}

// Array reads an array of at most max objects.
func (o *object) Array(name string, max int) []*object {
	raw, ok := o.fields[name]
	if !ok {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		o.fail(name, "is not an array")
		return nil
	}
	if len(items) > max {
		o.fail(name, "has %d entries, more than %d", len(items), max)
		return nil
	}
	out := make([]*object, 0, len(items))
	for i, it := range items {
		sub, err := parseObject(fmt.Sprintf("%s %s[%d]", o.what, name, i), it)
		if err != nil {
			if o.err == nil {
				o.err = err
			}
			return nil
		}
		out = append(out, sub)
	}
	return out
}

// clip shortens a value quoted in an error.
func clip(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return peertext.Escape(s)
}
