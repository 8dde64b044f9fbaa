package measure

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"wirespeed/internal/testkit"
)

func TestTCPInfo(t *testing.T) {
	c, _ := testkit.TCPPair(t)
	rc, _ := c.SyscallConn()
	ti, err := ReadTCPInfo(rc)
	if runtime.GOOS != "linux" {
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("got %v, want ErrUnsupported", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if ti.SndMSS <= 0 || ti.CwndSegments <= 0 || ti.CwndBytes != int64(ti.CwndSegments)*int64(ti.SndMSS) {
		t.Errorf("implausible TCP_INFO on a fresh loopback connection: %+v", ti)
	}
}

// TestErrUnsupported checks that a caller can test what the package
// returns for errors.ErrUnsupported as well as for ErrUnsupported.
func TestErrUnsupported(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", ErrUnsupported)
	if !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, ErrUnsupported) {
		t.Errorf("%v: want it to match errors.ErrUnsupported and ErrUnsupported", err)
	}
}
