//go:build !wirespeed_portable

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/nstest"
	"wirespeed/internal/report"
	"wirespeed/internal/testkit"
	"wirespeed/internal/verify"
)

// TestVerify runs `wirespeed verify --json` as a user would (root) and
// wants every check within its tolerance: each figure wirespeed measured
// beside a truth verify read from the kernel, the labs' shapes or irtt.
// The labs are gone afterwards. On a busy host a failed attempt is tried
// once more, and skipped as starved when the host was busy before it and
// only checks a busy host moves were out (WIRESPEED_SERIAL=strict, CI's
// serial step, fails it instead): a count (bytes per packet, packets,
// drops, the host's CPU beside /proc/stat) fails whatever the load.
func TestVerify(t *testing.T) {
	testkit.Serial(t)
	nstest.RequireRoot(t)
	prefix := fmt.Sprintf("wsvt%d", os.Getpid()%100000)
	want := []string{"tcp-throughput", "wire-frames", "tcp-streams", "bytes-per-packet", "rr-transactions", "cpu-host",
		"udp-throughput", "udp-loss", "rtt-idle", "rrul-loaded"}
	var rep verify.Report
	for attempt := 1; attempt <= 2; attempt++ {
		before := testkit.ReadHostCPU("/proc")
		time.Sleep(time.Second)
		busy := before.Starved(testkit.ReadHostCPU("/proc"))
		cmd := wirespeed("verify", "--json", "--name", prefix)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		rep = verify.Report{}
		if jerr := json.Unmarshal(stdout.Bytes(), &rep); jerr != nil {
			t.Fatalf("verify printed no report (%v, exit %v):\n%s\n%s", jerr, err, stdout.String(), stderr.String())
		}
		var text bytes.Buffer
		report.VerifyText(&text, rep)
		t.Logf("attempt %d, %.0f s:\n%s", attempt, took.Seconds(), text.String())
		if (err == nil) != rep.OK {
			t.Errorf("exit %v but the report says ok %v: the status and the report disagree", err, rep.OK)
		}
		if took > 2*time.Minute {
			t.Errorf("verify took %.0f s, more than the two minutes docs/verify.md promises", took.Seconds())
		}
		if err == nil {
			break
		}
		if attempt == 2 {
			if busy != "" && onlyTiming(rep) {
				testkit.SkipStarved(t, "verify failed twice and the host was busy before it: "+busy)
			}
			t.Fatalf("verify failed: %v\n%s", err, stderr.String())
		}
	}
	var names []string
	for _, c := range rep.Checks {
		names = append(names, c.Name)
		if c.Skipped == "" && (c.Truth == 0 || c.Command == "" || c.TruthIs == "") {
			t.Errorf("check %s: truth %g, command %q, truth_is %q: every figure has a truth, what it is and its command", c.Name, c.Truth, c.Command, c.TruthIs)
		}
	}
	if !slices.Equal(names, want) {
		t.Errorf("checks %v, want %v", names, want)
	}
	left, _ := filepath.Glob("/run/netns/wst-" + prefix + "-*")
	if len(left) > 0 {
		t.Errorf("verify left namespaces behind: %s", strings.Join(left, " "))
	}
}

// timingChecks are the checks a busy host moves: rates and round trips.
var timingChecks = []string{"tcp-throughput", "wire-frames", "tcp-streams", "udp-throughput", "rtt-idle", "rrul-loaded"}

// onlyTiming is true when every check of r that failed is a timing check.
func onlyTiming(r verify.Report) bool {
	for _, c := range r.Failed() {
		if !slices.Contains(timingChecks, c.Name) {
			return false
		}
	}
	return true
}
