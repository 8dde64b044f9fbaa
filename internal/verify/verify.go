// Package verify sets wirespeed's figures beside ground truths on the
// user's own kernel: it builds labs of network namespaces whose truth is
// known (a tbf of a known rate and queue, a router whose qdisc drops, an
// MTU, offloads off), runs wirespeed's own tests in them as a user
// would (the binary, as subprocesses in the labs' namespaces), and reads
// each truth from something wirespeed did not compute: the rate the lab
// set, the router qdisc's drop counter, a device's packet counter,
// /proc/stat, irtt's round trips.
//
// No other tool does this, so the design is the project's own; the
// truths and their tolerances are listed in docs/verify.md.
package verify

import (
	"io"

	"wirespeed/internal/result"
)

// The record of a run: result's VerifyReport of VerifyChecks, each with
// its VerifyTolerance; report.VerifyText writes it.
type (
	Report    = result.VerifyReport
	Check     = result.VerifyCheck
	Tolerance = result.VerifyTolerance
)

// Config is how to run wirespeed inside the labs.
type Config struct {
	// Exe is the wirespeed binary the labs run (os.Executable()).
	Exe string
	// Name prefixes the labs' names ("wsv": wst-wsv-t-a and so on); at
	// most 20 characters of a lab name.
	Name string
	// Progress gets a line as each lab and run starts; nil for none.
	Progress io.Writer
}

// Header sizes the truths are worked out with.
const (
	ipv4Header = 20
	tcpHeader  = 20 + 12 // with the timestamp option Linux sends
	udpHeader  = 8
	ethHeader  = 14 // what a qdisc and a device's byte counters count beyond IP
)

// mss is TCP's payload per segment at an MTU, with timestamps.
func mss(mtu int) int { return mtu - ipv4Header - tcpHeader }
