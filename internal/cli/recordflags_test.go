package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"wirespeed/internal/plot"
	"wirespeed/internal/result"
)

// TestLabelsCompareAndPlot: two runs of the same settings told apart
// only by --label and --title are one compare, whose "what differs" names
// the label and the title, and plot's legend names them too.
func TestLabelsCompareAndPlot(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "stock.json"), filepath.Join(dir, "patched.json")
	for _, r := range []struct {
		file, title, label string
	}{{a, "before the patch", "kernel=6.18 stock"}, {b, "after the patch", "kernel=6.18 patched"}} {
		code, out, errOut := execute(t, context.Background(), "run", "-l", "0.2", "-i", "0", "--cpu=false",
			"--title", r.title, "--label", r.label, "--label", "host=lab", "-o", r.file)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if !strings.Contains(out, "title: "+r.title+"\n") || !strings.Contains(out, "labels: host=lab, "+r.label+"\n") {
			t.Errorf("text output lacks the title and labels:\n%s", out)
		}
	}
	doc, err := result.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "after the patch" || doc.Labels["kernel"] != "6.18 patched" || doc.Labels["host"] != "lab" || len(doc.Labels) != 2 {
		t.Errorf("document records title %q labels %v", doc.Title, doc.Labels)
	}
	code, out, errOut := execute(t, context.Background(), "compare", a, b)
	if code != ExitOK {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`label title\s+before the patch -> after the patch`),
		regexp.MustCompile(`label kernel\s+6\.18 stock -> 6\.18 patched`),
	} {
		if !want.MatchString(out) {
			t.Errorf("compare's differences lack %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "label host") {
		t.Errorf("compare lists a label both runs share:\n%s", out)
	}
	code, out, errOut = execute(t, context.Background(), "compare", "--json", a, b)
	if code != ExitOK {
		t.Fatalf("compare --json: exit %d: %s", code, errOut)
	}
	var cj struct {
		Differences []struct {
			Side, Name string
			A          string `json:"baseline_value"`
			B          string `json:"value"`
		}
	}
	if err := json.Unmarshal([]byte(out), &cj); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range cj.Differences {
		found = found || (d.Side == "label" && d.Name == "kernel" && d.A == "6.18 stock" && d.B == "6.18 patched")
	}
	if !found {
		t.Errorf("compare --json lacks the kernel label: %+v", cj.Differences)
	}

	docA, err := result.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	got := plot.Labels([]string{a, b}, []result.Document{docA, doc})
	if !strings.Contains(got[0], "kernel=6.18 stock") || !strings.Contains(got[1], "kernel=6.18 patched") ||
		!strings.Contains(got[1], "title=after the patch") || strings.Contains(got[0], "host=") {
		t.Errorf("plot labels %q", got)
	}
}

func TestLabelFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--label", "nokey"},
		{"run", "--label", "=v"},
		{"run", "--title", strings.Repeat("x", 300)},
		{"run", "--label", "k=a\nb"},
	} {
		code, _, errOut := execute(t, context.Background(), args...)
		if code != ExitUsage || !strings.Contains(errOut, strings.TrimPrefix(args[1], "--")) {
			t.Errorf("%q: exit %d, %q; want a usage error", args, code, errOut)
		}
	}
}

// TestSweepRecordsLabels: a sweep's document carries --title and --label
// too, and its text names them above the table.
func TestSweepRecordsLabels(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.json")
	code, out, errOut := execute(t, context.Background(), "sweep", "--sizes", "1K,2K", "-l", "0.1", "-i", "0", "--cpu=false",
		"--title", "sweep title", "--label", "nic=veth", "-o", file)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "title: sweep title\nlabels: nic=veth\n") {
		t.Errorf("sweep text lacks the title and labels:\n%s", out)
	}
	doc, err := result.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "sweep title" || doc.Labels["nic"] != "veth" || len(doc.Points) != 2 {
		t.Errorf("sweep document: title %q, labels %v, %d points", doc.Title, doc.Labels, len(doc.Points))
	}
}
