package record

import (
	"testing"
	"time"

	"wirespeed/internal/spec"
)

// TestSettingsOf: what does not change what a series measures (the
// window, the interval lines, CPU sampling, the client's port) leaves
// the settings, and so the series key, as they were; what does is
// named.
func TestSettingsOf(t *testing.T) {
	base := spec.Default()
	same := base
	same.Duration, same.Interval, same.CPU, same.ClientPort = 30*time.Second, 0, true, 5000
	if got, want := settingsOf(same, ""), settingsOf(base, ""); got != want {
		t.Errorf("settings %q with another length, interval, CPU sampling and client port; want %q", got, want)
	}
	other := base
	other.Parallel = 4
	if got := settingsOf(other, "mtu=9000"); got != "mtu=9000 parallel=4" {
		t.Errorf("settings %q, want \"mtu=9000 parallel=4\"", got)
	}
}
