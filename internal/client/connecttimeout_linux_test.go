package client

import (
	"context"
	"strings"
	"testing"
	"time"
	"wirespeed/internal/testkit"
)

// TestConnectTimeout: against a listener that never answers, Dial gives
// up after the connect timeout, not the 5 s handshake default, and says
// what to do.
func TestConnectTimeout(t *testing.T) {
	addr := testkit.SilentListener(t)
	start := time.Now()
	_, err := Dial(context.Background(), Config{Addr: addr, ConnectTimeout: 300 * time.Millisecond})
	took := time.Since(start)
	if err == nil {
		t.Fatal("Dial succeeded against a listener that never answers")
	}
	if took < 300*time.Millisecond || took > 2*time.Second {
		t.Errorf("Dial gave up after %v; want about 300ms", took)
	}
	for _, want := range []string{addr, "no answer within 300ms", "--connect-timeout"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
