package lab

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStartTicks reads the start time from a stat file whose command
// name holds spaces and a parenthesis, and refuses a zombie's and a
// short file.
func TestStartTicks(t *testing.T) {
	root := t.TempDir()
	write := func(pid, stat string) {
		t.Helper()
		dir := filepath.Join(root, pid)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Fields 3 to 22: state, then 18 others, then starttime (987654).
	const rest = "S 1 42 42 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 0 987654 1000 50"
	write("42", "42 (wire speed) (x) "+rest+"\n")
	write("43", "43 (z) Z"+rest[1:]+"\n")
	write("44", "44 (short) S 1 2 3\n")

	got, err := startTicks(root, 42)
	if err != nil || got != 987654 {
		t.Errorf("startTicks(42) = %d, %v; want 987654", got, err)
	}
	if _, err := startTicks(root, 43); err == nil {
		t.Error("startTicks of a zombie: no error")
	}
	if _, err := startTicks(root, 44); err == nil {
		t.Error("startTicks of a short stat: no error")
	}
	if _, err := startTicks(root, 45); err == nil {
		t.Error("startTicks of a missing process: no error")
	}
	// The live host: this process has a start time.
	if _, err := startTicks(procRoot, os.Getpid()); err != nil {
		t.Errorf("startTicks of this process: %v", err)
	}
}
