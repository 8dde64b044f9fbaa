package report

import (
	"strings"
	"testing"
	"time"
)

// TestTimestampLayout: strftime formats print what strftime prints for
// a fixed time, written out by hand.
func TestTimestampLayout(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 7, 5, 0, time.UTC)
	for _, tt := range []struct{ format, want string }{
		{DefaultTimestamp, "Tue Dec  1 09:07:05 2026 "},
		{"%F %T ", "2026-12-01 09:07:05 "},
		{"[%H:%M:%S] ", "[09:07:05] "},
		{"%Y%m%d-%H%M%S %% ", "20261201-090705 % "},
		{"%I:%M %p %Z", "09:07 AM UTC"},
	} {
		layout, err := TimestampLayout(tt.format)
		if err != nil {
			t.Errorf("%q: %v", tt.format, err)
			continue
		}
		if got := at.Format(layout); got != tt.want {
			t.Errorf("%q prints %q, want %q", tt.format, got, tt.want)
		}
	}
	for _, bad := range []string{"%Q", "%", "run 1 %T", "Jan %d"} {
		if _, err := TimestampLayout(bad); err == nil || !strings.Contains(err.Error(), "timestamp format") {
			t.Errorf("%q: err %v, want a refusal", bad, err)
		}
	}
}
