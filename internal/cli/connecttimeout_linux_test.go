package cli

import (
	"context"
	"strings"
	"testing"
	"time"
	"wirespeed/internal/testkit"
)

// TestRunConnectTimeout: run --connect-timeout gives up on a server that
// never answers after that long, as a runtime error naming the flag.
func TestRunConnectTimeout(t *testing.T) {
	addr := testkit.SilentListener(t)
	start := time.Now()
	code, _, errOut := execute(t, context.Background(), "run", "--connect-timeout", "0.3", addr)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("run gave up after %v; want about 300ms", took)
	}
	if code != ExitRuntime || !strings.Contains(errOut, "no answer within 300ms") || !strings.Contains(errOut, "--connect-timeout") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}
