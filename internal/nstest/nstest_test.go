package nstest

import (
	"os"
	"testing"

	"wirespeed/internal/lab"
)

func TestTestPID(t *testing.T) {
	tests := []struct {
		name string
		pid  int
		ok   bool
	}{
		{"t1234-1", 1234, true},
		{"t99-12", 99, true},
		{"lab", 0, false},
		{"t1234", 0, false},
		{"tx-1", 0, false},
		{"t12-x", 0, false},
		{"t0-1", 0, false},
	}
	for _, tt := range tests {
		pid, ok := testPID(tt.name)
		if pid != tt.pid || ok != tt.ok {
			t.Errorf("testPID(%q) = %d, %v; want %d, %v", tt.name, pid, ok, tt.pid, tt.ok)
		}
	}
}

func TestNewNamespacePairCleansUp(t *testing.T) {
	var name string
	t.Run("inner", func(t *testing.T) {
		l := NewNamespacePair(t)
		name = l.Name
		if _, err := os.Stat("/run/netns/" + lab.Namespace(name, lab.A)); err != nil {
			t.Fatalf("namespace a missing while the test runs: %v", err)
		}
	})
	if name == "" {
		t.Skip("inner test skipped")
	}
	for _, s := range []lab.HostName{lab.A, lab.B} {
		if _, err := os.Stat("/run/netns/" + lab.Namespace(name, s)); !os.IsNotExist(err) {
			t.Errorf("namespace %s still there after the test: %v", lab.Namespace(name, s), err)
		}
	}
}
