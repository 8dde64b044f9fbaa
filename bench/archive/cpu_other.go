//go:build !unix

package main

import "time"

// cpuTime is 0 where getrusage is missing: the CPU figures are then
// meaningless (infinite rates, zero times).
func cpuTime() time.Duration { return 0 }

const clockTicks = 100
