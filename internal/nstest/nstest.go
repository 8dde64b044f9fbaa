// Package nstest holds test helpers for code that needs root and network
// namespaces: RequireRoot skips a test that cannot run without root, and
// NewLab makes a fresh lab (two namespaces joined by a veth pair) that is
// removed when the test ends, pass or fail; DeviceState reads a device's
// MTU and features in a namespace, for tests that check a change was
// restored. CI runs as root, so these tests run there; on a developer's
// machine they skip with the reason.
//
// Lab names are "t<pid>-<n>", so their namespaces ("wst-t<pid>-<n>-a")
// are recognisable; labs left by a test process that was killed before
// its cleanup ran are removed by the next test process that makes one.
package nstest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wirespeed/internal/lab"
	"wirespeed/internal/measure"
)

// RequireRoot skips t unless the process runs as root on Linux.
func RequireRoot(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("needs root (CI runs as root): network namespaces exist only on Linux, not %s", runtime.GOOS)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root (CI runs as root): it makes network namespaces and veth pairs; run go test as root to include it")
	}
}

// UpTimeout bounds how long making or removing a lab may take.
const UpTimeout = 30 * time.Second

var (
	seq       atomic.Int64
	staleOnce sync.Once
)

// NewLab makes a fresh lab from cfg, with a unique name unless cfg.Name is
// set, and removes it when the test and its subtests end. It skips t when
// not root and fails it when the lab cannot be made.
func NewLab(t testing.TB, cfg lab.Config) *lab.Lab {
	t.Helper()
	RequireRoot(t)
	staleOnce.Do(func() { removeStale(t) })
	if cfg.Name == "" {
		cfg.Name = fmt.Sprintf("t%d-%d", os.Getpid(), seq.Add(1))
	}
	ctx, cancel := context.WithTimeout(context.Background(), UpTimeout)
	defer cancel()
	l, err := lab.Up(ctx, cfg)
	if err != nil {
		t.Fatalf("make lab: %v", err)
	}
	t.Cleanup(func() {
		if err := l.Down(); err != nil {
			t.Errorf("remove lab %s: %v", l.Name, err)
		}
		for _, s := range []lab.HostName{lab.A, lab.B} {
			if _, err := os.Stat("/run/netns/" + lab.Namespace(l.Name, s)); err == nil {
				t.Errorf("namespace %s is still there after removing the lab", lab.Namespace(l.Name, s))
			}
		}
	})
	return l
}

// NewNamespacePair makes a fresh lab with the default settings: namespaces
// a and b joined by a veth pair with 10.77.0.1/24 and fd00:77::1/64 in a
// and .2 and ::2 in b, MTU 1500, no rate limit.
func NewNamespacePair(t testing.TB) *lab.Lab {
	t.Helper()
	return NewLab(t, lab.Config{})
}

// removeStale removes labs named by test processes that no longer run.
func removeStale(t testing.TB) {
	names, err := lab.List()
	if err != nil {
		return
	}
	for _, name := range names {
		pid, ok := testPID(name)
		if !ok || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat(filepath.Join(measure.DefaultProcRoot, strconv.Itoa(pid))); err == nil {
			continue // still running
		}
		if err := lab.Remove(name); err != nil {
			t.Logf("remove stale test lab %s: %v", name, err)
		}
	}
}

// testPID returns the pid in a test lab's name "t<pid>-<n>".
func testPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "t")
	if !ok {
		return 0, false
	}
	p, n, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	if _, err2 := strconv.Atoi(n); err != nil || err2 != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// NewRouted makes a fresh routed lab (a -> router -> b) from cfg, with a
// unique name unless cfg.Name is set, and removes it, router included,
// when the test ends. It skips t when not root.
func NewRouted(t testing.TB, cfg lab.RoutedConfig) *lab.Routed {
	t.Helper()
	RequireRoot(t)
	staleOnce.Do(func() { removeStale(t) })
	if cfg.Name == "" {
		cfg.Name = fmt.Sprintf("t%d-%d", os.Getpid(), seq.Add(1))
	}
	ctx, cancel := context.WithTimeout(context.Background(), UpTimeout)
	defer cancel()
	r, err := lab.UpRouted(ctx, cfg)
	if err != nil {
		t.Fatalf("make routed lab: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Down(); err != nil {
			t.Errorf("remove routed lab %s: %v", r.Name, err)
		}
		for _, s := range []lab.HostName{lab.A, lab.Router, lab.B} {
			if _, err := os.Stat("/run/netns/" + lab.Namespace(r.Name, s)); err == nil {
				t.Errorf("namespace %s is still there after removing the lab", lab.Namespace(r.Name, s))
			}
		}
	})
	return r
}
