package sysinfo

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// MPTCP is the kernel's Multipath TCP settings in the record's network
// namespace (net.mptcp.*), what --mptcp runs under.
type MPTCP struct {
	Enabled bool `json:"enabled"` // net.mptcp.enabled
	// PathManager is net.mptcp.path_manager ("kernel", "userspace"),
	// Linux 6.15 and later; PMType is the older net.mptcp.pm_type (0 the
	// kernel's, 1 userspace), -1 when absent.
	PathManager string `json:"path_manager,omitempty"`
	PMType      int    `json:"pm_type"`
	Scheduler   string `json:"scheduler,omitempty"` // net.mptcp.scheduler, Linux 6.6 and later
}

// readMPTCP reads net.mptcp.* under the proc root root; nil, without a
// warning, on a kernel without MPTCP (no net/mptcp directory).
func readMPTCP(root string) *MPTCP {
	dir := filepath.Join(root, "sys/net/mptcp")
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	en := read("enabled")
	if en == "" {
		return nil
	}
	m := &MPTCP{Enabled: en == "1", PathManager: read("path_manager"), Scheduler: read("scheduler"), PMType: -1}
	if n, err := strconv.Atoi(read("pm_type")); err == nil {
		m.PMType = n
	}
	return m
}
