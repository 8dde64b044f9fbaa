package testkit

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// HostCPU is the host's aggregate CPU time from /proc/stat's "cpu" line,
// in ticks: for a rate test that has no CPU figures of its own (a test of
// the engine's loops alone) to tell whether the host was starved over
// its window (HostCPU.Starved). It is read here, not with package
// measure, because testkit imports no wirespeed package.
type HostCPU struct {
	busy, idle, steal uint64
	ok                bool
}

// ReadHostCPU reads /proc/stat; a zero HostCPU (Starved says nothing)
// where it cannot.
func ReadHostCPU() HostCPU {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return HostCPU{}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 9 || fields[0] != "cpu" {
			continue
		}
		var v [8]uint64
		for i := range v {
			v[i], _ = strconv.ParseUint(fields[i+1], 10, 64)
		}
		// user nice system idle iowait irq softirq steal
		return HostCPU{busy: v[0] + v[1] + v[2] + v[5] + v[6], idle: v[3] + v[4], steal: v[7], ok: true}
	}
	return HostCPU{}
}

// Starved is CPUStarved over the window from h to end: the host's
// utilization and the hypervisor's steal (no per-CPU or per-process
// figures); "" when the window shows nothing or could not be read.
func (h HostCPU) Starved(end HostCPU) string {
	if !h.ok || !end.ok {
		return ""
	}
	busy, idle, steal := float64(end.busy-h.busy), float64(end.idle-h.idle), float64(end.steal-h.steal)
	all := busy + idle + steal
	if all <= 0 {
		return ""
	}
	return CPUStarved(100*(busy+steal)/all, 0, 100*steal/all, 0)
}
