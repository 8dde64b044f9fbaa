package result

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/spec"
)

func TestFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	doc := Document{Schema: Schema, Tool: Tool{Name: "wirespeed", Version: "test"}, Command: "sweep",
		Sizes: []int{1, 64}, Points: []Point{{MsgSize: 64, Result: Result{Spec: spec.Test{Kind: spec.TCPStream, SendSize: 64}}}}}
	if err := WriteFile(path, doc); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(doc.Points[0].MsgSize, got.Points[0].MsgSize); diff != "" || got.Command != "sweep" || len(got.Sizes) != 2 {
		t.Errorf("read back %+v, want %+v", got, doc)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the atomic write left %d files, want 1", len(entries))
	}
}

func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "nope.json"), "no such file"},
		{"not json", write("text.json", "hello"), "not a wirespeed results document"},
		{"other schema", write("old.json", `{"schema":"wirespeed/result/v0"}`), `schema "wirespeed/result/v0", this wirespeed reads "` + Schema + `"`},
		{"mesh document", write("mesh.json", `{"schema":"`+MeshSchema+`"}`), "this wirespeed reads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadFile(tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadFile(%s) = %v, want an error containing %q", tt.path, err, tt.want)
			}
		})
	}
}

func TestDocumentKind(t *testing.T) {
	run := Result{Directions: []DirectionResult{{}}}
	tests := []struct {
		name string
		doc  Document
		want DocumentKind
	}{
		{"empty", Document{}, KindEmpty},
		{"run", Document{Result: run}, KindRun},
		{"tradeoff", Document{Result: run, Runs: []Result{run, run}}, KindTradeoff},
		{"sweep", Document{Result: run, Sizes: []int{1}, Points: []Point{{MsgSize: 1}}}, KindSweep},
		{"matrix of sweeps", Document{Result: run, Points: []Point{{MsgSize: 1}}, Matrix: &Matrix{}}, KindMatrix},
	}
	for _, tt := range tests {
		if got := tt.doc.Kind(); got != tt.want {
			t.Errorf("%s: Kind() = %q, want %q", tt.name, got, tt.want)
		}
	}
}
