package sysinfo

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"wirespeed/internal/engine"
)

// dataPath describes what the kernel offers the data path options: by
// its release, and on the live host (probe) by trying each socket option.
func (c *collector) dataPath(release string, probe bool) *DataPathSupport {
	s := &DataPathSupport{
		MsgZeroCopy:       KernelAtLeast(release, 4, 14),
		UDPGSO:            KernelAtLeast(release, 4, 18),
		UDPGRO:            KernelAtLeast(release, 5, 0),
		TCPInternalPacing: KernelAtLeast(release, 4, 20),
	}
	// Only the host's own network namespace shows the default qdisc; its
	// absence elsewhere is no news.
	if b, err := os.ReadFile(filepath.Join(c.root, "sys/net/core/default_qdisc")); err == nil {
		s.DefaultQdisc = strings.TrimSpace(string(b))
	}
	if probe {
		if err := probeDataPath(s); err != nil {
			c.warn("data path options: %v", err)
		}
	}
	return s
}

// probeDataPath replaces the release's guesses with what engine's own
// sockets are granted. The options are Linux's: elsewhere none exists.
func probeDataPath(s *DataPathSupport) error {
	if runtime.GOOS != "linux" {
		*s = DataPathSupport{}
		return nil
	}
	got, err := engine.ProbeSupport()
	if err != nil {
		return err
	}
	s.MsgZeroCopy, s.UDPGSO, s.UDPGRO = got.MsgZeroCopy, got.UDPGSO, got.UDPGRO
	s.Probed = true
	return nil
}

// KernelAtLeast reports whether a release like "6.18.44-fc" is
// major.minor or later; false when it cannot be read.
func KernelAtLeast(release string, major, minor int) bool {
	f := strings.FieldsFunc(release, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(f[0])
	mi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}
