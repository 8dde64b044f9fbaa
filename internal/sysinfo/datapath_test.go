package sysinfo

import "testing"

func TestKernelAtLeast(t *testing.T) {
	for _, tt := range []struct {
		release string
		want    bool
	}{{"4.20.0", true}, {"4.19.300", false}, {"5.0.1-generic", true}, {"6.18.44-fc-v669", true}, {"3.10", false}, {"", false}, {"x", false}} {
		if got := KernelAtLeast(tt.release, 4, 20); got != tt.want {
			t.Errorf("KernelAtLeast(%q, 4, 20) = %v", tt.release, got)
		}
	}
}
