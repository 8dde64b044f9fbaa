package result

import "wirespeed/internal/sysinfo"

// EnvDiff is one item in which two sides' records differ.
type EnvDiff struct {
	Side Side   // whose record: local or remote
	Name string // the item, as in sysinfo.EnvField
	A, B string // its value in each record; "" where a record lacks it
}

// DiffEnv lists the items in which b differs from a for one side, in the
// order of Fields. A nil record has no items: comparing with it lists
// nothing, since nothing is known.
func DiffEnv(side Side, a, b *sysinfo.Env) []EnvDiff {
	if a == nil || b == nil {
		return nil
	}
	fa, fb := a.Fields(), b.Fields()
	mb := make(map[string]string, len(fb))
	for _, f := range fb {
		mb[f.Name] = f.Value
	}
	var out []EnvDiff
	seen := map[string]bool{}
	for _, f := range fa {
		seen[f.Name] = true
		if v, ok := mb[f.Name]; !ok || v != f.Value {
			out = append(out, EnvDiff{Side: side, Name: f.Name, A: f.Value, B: mb[f.Name]})
		}
	}
	for _, f := range fb {
		if !seen[f.Name] {
			out = append(out, EnvDiff{Side: side, Name: f.Name, B: f.Value})
		}
	}
	return out
}
