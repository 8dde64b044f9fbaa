// Package peertext owns making text a peer sent safe to print: a server's
// error messages, its version and host name, the environment record and
// warnings it sends, an iperf3 peer's strings. Printed raw, such text can
// drive the terminal that shows it: clear the screen, move the cursor to
// fake a prompt, set the window title, write the clipboard (OSC 52).
// Escape writes every control character (C0, DEL, C1), every Unicode
// character that reorders text (bidi overrides and isolates) and every
// byte that is not UTF-8 as a Go escape (\x1b, \n, \u202e), and keeps all
// other text, UTF-8 included, as it is. Backslashes are kept, so Escape
// is idempotent: escaping escaped text changes nothing.
package peertext

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every character that could act on a terminal
// written as an escape sequence in Go's notation.
func Escape(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafe(r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !unsafe(r, n):
			b.WriteString(s[i : i+n])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// unsafe reports whether the rune r, n bytes long in its string, must be
// escaped.
func unsafe(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return true // not UTF-8
	case unicode.IsControl(r): // C0, DEL, C1
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true // bidi embeddings, overrides, isolates and marks
	}
	return false
}

// Scrub escapes, in place, every string reachable from v, which must be
// a pointer: fields of structs (exported ones), elements of slices and
// arrays, map keys and values, what pointers and interfaces hold. Call it
// on what was decoded from a peer, before anything else reads it.
func Scrub(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return
	}
	scrub(rv.Elem(), 0)
}

// maxDepth bounds the walk: decoded JSON is a tree, but a cyclic value
// handed in by mistake must not loop.
const maxDepth = 64

func scrub(v reflect.Value, depth int) {
	if depth > maxDepth || !mayHoldString(v.Type()) {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); v.CanSet() {
			if e := Escape(s); e != s {
				v.SetString(e)
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			scrub(v.Elem(), depth+1)
		}
	case reflect.Interface:
		if v.IsNil() || !v.CanSet() {
			return
		}
		c := reflect.New(v.Elem().Type()).Elem()
		c.Set(v.Elem())
		scrub(c, depth+1)
		v.Set(c)
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if t.Field(i).IsExported() {
				scrub(v.Field(i), depth+1)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			scrub(v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		it := v.MapRange()
		type kv struct{ k, v reflect.Value }
		var redo []kv
		for it.Next() {
			k := it.Key()
			nk := reflect.New(k.Type()).Elem()
			nk.Set(k)
			scrub(nk, depth+1)
			nv := reflect.New(it.Value().Type()).Elem()
			nv.Set(it.Value())
			scrub(nv, depth+1)
			redo = append(redo, kv{nk, nv})
			if !nk.Equal(k) {
				v.SetMapIndex(k, reflect.Value{})
			}
		}
		for _, e := range redo {
			v.SetMapIndex(e.k, e.v)
		}
	}
}

// stringTypes caches mayHoldString: reflect.Type -> bool.
var stringTypes sync.Map

// mayHoldString says whether a value of type t can hold a string
// somewhere, so that Scrub skips, say, a long slice of numeric intervals
// without looking at each.
func mayHoldString(t reflect.Type) bool {
	if v, ok := stringTypes.Load(t); ok {
		return v.(bool)
	}
	// A recursive type is taken to hold strings while its answer is
	// being worked out.
	stringTypes.Store(t, true)
	var r bool
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		r = true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		r = mayHoldString(t.Elem())
	case reflect.Map:
		r = mayHoldString(t.Key()) || mayHoldString(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && mayHoldString(f.Type) {
				r = true
				break
			}
		}
	}
	stringTypes.Store(t, r)
	return r
}
