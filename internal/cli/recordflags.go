package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"wirespeed/internal/result"
)

// recordFlags are what the user says about a run, recorded with its
// result: --title (iperf3's -T, whose short name is --pin here) and
// --label KEY=VALUE, repeatable. compare and plot tell documents apart by
// them as by any setting.
type recordFlags struct {
	title  string
	labels labelsValue
}

// maxLabelText bounds a title, a label's key and its value: they are
// notes, not payloads.
const maxLabelText = 256

func (r *recordFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&r.title, "title", "", "a title recorded with the result and shown above it (iperf3's -T), e.g. \"before the patch\"")
	fl.Var(&r.labels, "label", "KEY=VALUE recorded with the result, repeatable (kernel=6.18); compare and plot use them")
}

// check refuses a title too long or holding control characters.
func (r *recordFlags) check() error {
	if len(r.title) > maxLabelText {
		return usagef("--title is %d bytes long; keep it to %d", len(r.title), maxLabelText)
	}
	if strings.ContainsFunc(r.title, func(c rune) bool { return c < ' ' || c == 0x7f }) {
		return usagef("--title %q: control characters are not allowed", r.title)
	}
	return nil
}

// apply records the title and labels in d. Flags not given leave d's own
// (a resumed sweep keeps what it was started with).
func (r *recordFlags) apply(d *result.Document) {
	if r.title != "" {
		d.Title = r.title
	}
	if len(r.labels.m) > 0 {
		d.Labels = maps.Clone(r.labels.m)
	}
}

// labelsValue is --label KEY=VALUE, repeatable; a KEY given twice keeps
// its last value.
type labelsValue struct{ m map[string]string }

func (v *labelsValue) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(v.m)) {
		parts = append(parts, k+"="+v.m[k])
	}
	return strings.Join(parts, ",")
}

func (v *labelsValue) Set(s string) error {
	k, val, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	switch {
	case !ok || k == "":
		return fmt.Errorf("label %q: write KEY=VALUE, such as kernel=6.18 or build=\"stock\"", s)
	case len(k) > maxLabelText || len(val) > maxLabelText:
		return fmt.Errorf("label %q: keep KEY and VALUE to %d bytes each", s, maxLabelText)
	case strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return fmt.Errorf("label %q: control characters are not allowed", s)
	case len(v.m) >= 64:
		return fmt.Errorf("label %q: at most 64 labels", s)
	}
	if v.m == nil {
		v.m = map[string]string{}
	}
	v.m[k] = val
	return nil
}

func (v *labelsValue) Type() string { return "KEY=VALUE" }
