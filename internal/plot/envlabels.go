package plot

import (
	"maps"
	"slices"

	"wirespeed/internal/result"
	"wirespeed/internal/sysinfo"
)

// envLabels are the items of d's environment records that Labels tells
// documents apart by: "local mtu", "remote tso", "local kernel", ... A
// side's items count only when every document has that side's record;
// otherwise a document measured before records existed would differ in
// all of them. The host name is left out: Labels has the client and the
// server already.
func envLabels(docs []result.Document, d result.Document) map[string]string {
	out := map[string]string{}
	for _, side := range []result.Side{result.Local, result.Remote} {
		of := func(d result.Document) *sysinfo.Env {
			if side == result.Local {
				return d.Local.Env
			}
			return d.Remote.Env
		}
		all := true
		for _, o := range docs {
			all = all && of(o) != nil
		}
		if !all {
			continue
		}
		for _, f := range of(d).Fields() {
			if f.Name != "host" {
				out[string(side)+" "+f.Name] = f.Value
			}
		}
	}
	return out
}

// userLabels adds d's --title and --label KEY=VALUE items to m, Labels'
// fields of d: a label reads as the user wrote it (kernel=6.18 patched)
// unless its key is a field m has already, which it would hide; it is
// then "label KEY".
func userLabels(m map[string]string, d result.Document) {
	if d.Title != "" {
		m["title"] = d.Title
	}
	keys := slices.Sorted(maps.Keys(d.Labels))
	for _, k := range keys {
		name := k
		if _, taken := m[k]; taken {
			name = "label " + k
		}
		m[name] = d.Labels[k]
	}
}

// labelAliases are --label keys that name a spec field by its flag's
// name (--cc): such a label saying what the field says is one setting.
var labelAliases = map[string]string{"cc": "congestion_control"}

// foldSettings makes one item of each setting m, a document's fields
// for Labels, names twice. The congestion control a run without --cc
// used is its sides' default, which their environment records hold
// ("local cc", "remote cc"): that is its congestion_control, and the
// defaults are not named apart from it (with --cc they did not apply).
// A --label cc=bbr names the congestion control too: it fills in a
// default the records do not name, goes when it says what the field
// says, and stays beside a field that says otherwise.
func foldSettings(m map[string]string) {
	l, r := m["local cc"], m["remote cc"]
	delete(m, "local cc")
	delete(m, "remote cc")
	if m["congestion_control"] == "" {
		switch {
		case l == r || r == "":
			m["congestion_control"] = l
		case l == "":
			m["congestion_control"] = r
		default:
			m["congestion_control"] = "local:" + l + "/remote:" + r
		}
	}
	for alias, field := range labelAliases {
		v, ok := m[alias]
		if !ok {
			continue
		}
		switch m[field] {
		case "":
			m[field] = v
			delete(m, alias)
		case v:
			delete(m, alias)
		}
	}
}
