package sysinfo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// DefaultSysRoot is where sysfs is mounted.
const DefaultSysRoot = "/sys"

// CPUFreq is the kernel's CPU frequency scaling (cpufreq) on a host: which
// governor picks each CPU's frequency. A CPU held at its lowest clock
// ("powersave" on acpi-cpufreq) or left to ramp up ("schedutil",
// "ondemand") moves small-message rates and latencies by tens of percent
// against "performance".
type CPUFreq struct {
	// Available is false when the kernel offers no cpufreq for any CPU
	// (no devices/system/cpu/cpuN/cpufreq in sysfs): common in virtual
	// machines, whose frequency the hypervisor sets, and on hosts without
	// a scaling driver. There are no governors then.
	Available bool `json:"available"`
	// Driver is the scaling driver: intel_pstate, amd-pstate-epp,
	// acpi-cpufreq, cppc_cpufreq, ...
	Driver string `json:"driver,omitempty"`
	// Governors is each CPU's scaling governor, by CPU number.
	Governors map[int]string `json:"governors,omitempty"`
}

// Governor is the governors as one item for people and for comparing
// records: "performance" when every CPU has it, else each governor with
// its CPUs, "powersave (cpu 0-1), performance (cpu 2-3)"; "(no
// cpufreq)" where the kernel offers none.
func (f *CPUFreq) Governor() string {
	if f == nil {
		return ""
	}
	if !f.Available || len(f.Governors) == 0 {
		return "(no cpufreq)"
	}
	cpus := make([]int, 0, len(f.Governors))
	for c := range f.Governors {
		cpus = append(cpus, c)
	}
	sort.Ints(cpus)
	byGov := map[string][]int{}
	var order []string
	for _, c := range cpus {
		g := f.Governors[c]
		if _, ok := byGov[g]; !ok {
			order = append(order, g)
		}
		byGov[g] = append(byGov[g], c)
	}
	if len(order) == 1 {
		return order[0]
	}
	parts := make([]string, len(order))
	for i, g := range order {
		parts[i] = fmt.Sprintf("%s (cpu %s)", g, cpuRanges(byGov[g]))
	}
	return strings.Join(parts, ", ")
}

// cpuRanges writes sorted CPU numbers as the kernel's cpu lists do:
// "0-3,6".
func cpuRanges(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		} else {
			parts = append(parts, strconv.Itoa(cpus[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// readCPUFreq reads every CPU's scaling governor under sysfs mounted at
// root. A CPU directory without cpufreq has no governor (that is
// recorded, not warned about); what cannot be read is warned about, and
// when sysfs itself is missing the record has no CPUFreq at all.
func (c *collector) readCPUFreq(root string) *CPUFreq {
	dir := filepath.Join(root, "devices", "system", "cpu")
	entries, err := os.ReadDir(dir)
	if err != nil {
		c.warn("cpu governor: %v: is sysfs mounted at %s?", readErr(err), root)
		return nil
	}
	f := &CPUFreq{Governors: map[int]string{}}
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), "cpu")
		cpu, err := strconv.Atoi(n)
		if !ok || err != nil || cpu < 0 {
			continue // cpufreq, cpuidle, online, ...
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "cpufreq", "scaling_governor"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			c.warn("cpu governor of cpu%d: %v", cpu, err)
			continue
		}
		f.Governors[cpu] = strings.TrimSpace(string(b))
		if f.Driver == "" {
			if b, err := os.ReadFile(filepath.Join(dir, e.Name(), "cpufreq", "scaling_driver")); err == nil {
				f.Driver = strings.TrimSpace(string(b))
			}
		}
	}
	f.Available = len(f.Governors) > 0
	if !f.Available {
		f.Governors = nil
	}
	return f
}
