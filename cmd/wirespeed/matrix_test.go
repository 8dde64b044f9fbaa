package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"wirespeed/internal/lab"
	"wirespeed/internal/nstest"
	"wirespeed/internal/result"
	"wirespeed/internal/sysinfo"
)

// devState is a device's MTU and every kernel feature's state, active
// and requested, in a namespace: what a matrix must leave as it found.
func devState(t *testing.T, nsName, dev string) string {
	t.Helper()
	mtu, fs := nstest.DeviceState(t, nsName, dev)
	var b strings.Builder
	fmt.Fprintf(&b, "mtu %d", mtu)
	for _, f := range fs {
		fmt.Fprintf(&b, "; %s active=%v requested=%v", f.Name, f.Active, f.Requested)
	}
	return b.String()
}

// labState is both ends' devState.
func labState(t *testing.T, l *lab.Lab) [2]string {
	return [2]string{devState(t, l.A.Netns, l.A.Dev), devState(t, l.B.Netns, l.B.Dev)}
}

func checkRestored(t *testing.T, l *lab.Lab, before [2]string) {
	t.Helper()
	after := labState(t, l)
	for i, dev := range []string{l.A.Dev, l.B.Dev} {
		if after[i] != before[i] {
			t.Errorf("%s not restored:\nbefore %s\nafter  %s", dev, before[i], after[i])
		}
	}
}

// startMatrix starts `wirespeed matrix` in side b of l against addr,
// changing both veth ends (a's through its namespace), and returns the
// command and its output.
func startMatrix(t *testing.T, l *lab.Lab, addr string, args ...string) (wait func() (int, string, string), signal func(os.Signal)) {
	t.Helper()
	return startMatrixArgs(t, l, append([]string{"matrix", addr, "--dev", l.B.Dev, "--remote-dev", l.A.Dev, "--remote-netns", l.A.Netns}, args...)...)
}

// startMatrixArgs starts wirespeed with args (a matrix) in side b of l.
func startMatrixArgs(t *testing.T, l *lab.Lab, args ...string) (wait func() (int, string, string), signal func(os.Signal)) {
	t.Helper()
	full := append(args, "--settle", "0", "-i", "0", "--cc", "cubic")
	cmd := wirespeed(full...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := l.Start(lab.B, cmd); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var code int
	go func() {
		defer close(done)
		cmd.Wait()
		code = cmd.ProcessState.ExitCode()
	}()
	wait = func() (int, string, string) {
		select {
		case <-done:
		case <-time.After(90 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("wirespeed %v did not end within 90s\n%s\n%s", full, stdout.String(), stderr.String())
		}
		return code, stdout.String(), stderr.String()
	}
	return wait, func(s os.Signal) { cmd.Process.Signal(s) }
}

// TestMatrixOverOffloads runs a matrix over tso and tx-checksumming on
// both ends of a lab's veth pair: four rows, the one the kernel cannot
// hold (TSO on without tx checksumming) skipped and said so, and every
// setting of both devices as before afterwards.
func TestMatrixOverOffloads(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	addr := labServer(t, l, 7575)
	before := labState(t, l)
	out := filepath.Join(t.TempDir(), "m.json")
	wait, _ := startMatrix(t, l, addr, "--set", "tso=on,off", "--set", "tx-checksumming=on,off", "-l", "0.5", "-o", out)
	code, stdout, stderr := wait()
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	checkRestored(t, l, before)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc result.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Command != "matrix" || doc.Matrix == nil || len(doc.Matrix.Rows) != 4 {
		t.Fatalf("document: command %q, matrix %+v", doc.Command, doc.Matrix)
	}
	for _, r := range doc.Matrix.Rows {
		impossible := r.Label == "tso=on tx-checksumming=off"
		switch {
		case impossible && (r.Skipped == "" || !strings.Contains(r.Skipped, "tso is not on")):
			t.Errorf("row %s: skipped %q, want skipped because the kernel keeps tso off", r.Label, r.Skipped)
		case !impossible && (r.Skipped != "" || len(r.Points) != 1 || r.Points[0].Summary.BitsPerSecond <= 0):
			t.Errorf("row %s: skipped %q, %d points", r.Label, r.Skipped, len(r.Points))
		case !impossible:
			// Each measured row's records show its settings on both ends.
			res := r.Points[0].Result
			for _, e := range []*sysinfo.Env{res.Local.Env, res.Remote.Env} {
				if e == nil || e.Interface == nil {
					t.Fatalf("row %s: no environment record", r.Label)
				}
				for _, s := range r.Settings {
					long := map[string]string{"tso": "tcp-segmentation-offload", "tx-checksumming": "tx-checksumming"}[s.Name]
					if f, ok := e.Interface.Feature(long); !ok || (f.On != (s.Value == "on")) {
						t.Errorf("row %s: %s of %s is %+v in the record", r.Label, long, e.Interface.Name, f)
					}
				}
			}
		}
	}
	if !strings.Contains(stdout, "restored wst-b and wst-a") {
		t.Errorf("output does not say the devices were restored:\n%s", stdout)
	}
}

// TestMatrixRestoresOnSignal stops a matrix with SIGINT, and one with
// SIGTERM, in the middle of its second row: the table so far is shown,
// the exit status is 1, and every setting of both devices is as before.
func TestMatrixRestoresOnSignal(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	addr := labServer(t, l, 7575)
	before := labState(t, l)
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			wait, signal := startMatrix(t, l, addr, "--set", "tso=off,on", "--set", "tx-checksumming=off,on", "--set", "mtu=9000,1500", "-l", "1")
			waitSecondRow(t, l, before)
			time.Sleep(300 * time.Millisecond) // into the measurement
			signal(sig)
			code, stdout, stderr := wait()
			if code != 1 {
				t.Errorf("exit %d after %v, want 1\n%s\n%s", code, sig, stdout, stderr)
			}
			if !strings.Contains(stderr, "interrupted") || !strings.Contains(stdout, "restored wst-b and wst-a") {
				t.Errorf("after %v:\nstdout %s\nstderr %s", sig, stdout, stderr)
			}
			checkRestored(t, l, before)
		})
	}
}

// TestLabMatrixAndCompare is the end to end: in a lab pair, a
// matrix over tso and the MTU gives four rows with confidence and CPU
// and leaves both ends as they were; compare of two such results says,
// for every point and figure, whether the difference is real.
func TestLabMatrixAndCompare(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	addr := labServer(t, l, 7575)
	before := labState(t, l)
	dir := t.TempDir()
	for _, name := range []string{"a.json", "b.json"} {
		wait, _ := startMatrix(t, l, addr, "--set", "tso=on,off", "--set", "mtu=1500,9000", "-l", "0.5", "--iterations", "3,3", "-o", filepath.Join(dir, name))
		code, stdout, stderr := wait()
		if code != 0 {
			t.Fatalf("matrix: exit %d\n%s\n%s", code, stdout, stderr)
		}
		checkRestored(t, l, before)
		rows := 0
		for _, line := range strings.Split(stdout, "\n") {
			f := strings.Fields(line)
			// tso mtu elapsed throughput conf iter lutil rutil lsd rsd limit
			// (the socket sizes are -v's columns); conf ends in "!"
			// where the interval was not reached.
			if len(f) >= 10 && (f[0] == "on" || f[0] == "off") && (f[1] == "1500" || f[1] == "9000") && f[5] == "3" {
				rows++
			}
		}
		if rows != 4 {
			t.Errorf("%d table rows with throughput, confidence, 3 iterations and CPU, want 4:\n%s", rows, stdout)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := wirespeed("compare", filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := context.AfterFunc(ctx, func() { cmd.Process.Kill() })
	defer stop()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("compare: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"Mann-Whitney U test", "throughput (10^6bits/sec)", "local CPU util", "remote service demand",
		"tso=on mtu=1500 TCP_STREAM", "tso=off mtu=9000 TCP_STREAM", "cannot reach significance"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}
	t.Logf("compare:\n%s", out)
}

// waitSecondRow waits until the second row of a matrix over
// tso=off,on x tx-checksumming=off,on x mtu=9000,1500 is set on side a:
// MTU 1500 with TSO off, which neither the original state nor the first
// row has.
func waitSecondRow(t *testing.T, l *lab.Lab, before [2]string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		now := labState(t, l)
		if now != before && strings.Contains(now[0], "mtu 1500") && !strings.Contains(now[0], "tx-tcp-segmentation active=true") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the matrix never reached its second row")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMatrixRemoteByServer changes side a's veth through the server in
// it (serve --allow-netconf --psk-file), as on two real hosts: a matrix
// stopped with SIGINT restores both ends (the server its own, at the
// client's request); a client killed with SIGKILL restores nothing, and
// the server still restores its end when the session ends.
func TestMatrixRemoteByServer(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	key := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(key, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := labServer(t, l, 7575, "--psk-file", key, "--allow-netconf")
	before := labState(t, l)
	args := []string{"matrix", addr, "--psk-file", key, "--dev", l.B.Dev, "--remote-dev", l.A.Dev,
		"--set", "tso=off,on", "--set", "tx-checksumming=off,on", "--set", "mtu=9000,1500", "-l", "1"}

	t.Run("interrupt", func(t *testing.T) {
		wait, signal := startMatrixArgs(t, l, args...)
		waitSecondRow(t, l, before)
		time.Sleep(300 * time.Millisecond)
		signal(syscall.SIGINT)
		code, stdout, stderr := wait()
		// The heading may continue on a second line (the text fits 100
		// columns): compare with the words, not the lines.
		words := strings.Join(strings.Fields(stdout), " ")
		if code != 1 || !strings.Contains(words, "wst-a (remote, by the server)") || !strings.Contains(words, "restored wst-b and wst-a") {
			t.Errorf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
		}
		checkRestored(t, l, before)
	})
	t.Run("kill", func(t *testing.T) {
		wait, signal := startMatrixArgs(t, l, args...)
		waitSecondRow(t, l, before)
		signal(syscall.SIGKILL)
		wait()
		// The server notices the lost connection and restores its end;
		// the client's end stays as the kill left it (only the lab's
		// removal undoes it).
		deadline := time.Now().Add(10 * time.Second)
		for {
			now := devState(t, l.A.Netns, l.A.Dev)
			if now == before[0] {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the server did not restore %s after its client was killed:\nbefore %s\nnow    %s", l.A.Dev, before[0], now)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}
