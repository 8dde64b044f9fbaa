package spec

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// FieldDiff is one setting in which two tests differ: its JSON name and
// the two values as JSON text, a string's quotes left off.
type FieldDiff struct {
	Name string
	A, B string
}

// Diff lists the settings in which a and b differ, sorted by JSON name;
// a setting one of them leaves out (omitempty) has the value "".
// Resuming a sweep and comparing results both need to say which settings
// make two measurements different.
func Diff(a, b Test) []FieldDiff {
	fa, fb := fields(a), fields(b)
	names := make([]string, 0, len(fa)+len(fb))
	for n := range fa {
		names = append(names, n)
	}
	for n := range fb {
		if _, ok := fa[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var out []FieldDiff
	for _, n := range names {
		if fa[n] != fb[n] {
			out = append(out, FieldDiff{Name: n, A: fa[n], B: fb[n]})
		}
	}
	return out
}

// fields is t's JSON fields, each value as JSON text. A test that JSON
// cannot hold (a NaN) is one field, its Go text, so that it still differs
// from any other.
func fields(t Test) map[string]string {
	var raw map[string]json.RawMessage
	b, err := json.Marshal(t)
	if err == nil {
		err = json.Unmarshal(b, &raw)
	}
	if err != nil {
		return map[string]string{"spec": fmt.Sprintf("%+v", t)}
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		out[k] = strings.Trim(string(v), `"`)
	}
	return out
}
