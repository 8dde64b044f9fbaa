package measure

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

func readProcessCPU() (ProcessCPU, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return ProcessCPU{}, fmt.Errorf("getrusage: %w", err)
	}
	return ProcessCPU{
		User:   time.Duration(ru.Utime.Nano()),
		System: time.Duration(ru.Stime.Nano()),
	}, nil
}

// statUnavailable maps an error opening /proc/stat to what callers check.
// On Linux a missing file is a real error (procfs not mounted, or a wrong
// proc root), so it is returned as it is.
func statUnavailable(err error) error { return err }
