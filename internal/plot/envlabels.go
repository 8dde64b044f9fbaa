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
