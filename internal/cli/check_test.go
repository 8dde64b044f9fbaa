package cli

import (
	"context"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestCheck runs `wirespeed check` against real servers: the one with the
// key, the same with another key, one without a key, and a port where a
// listener accepts but never speaks (a TCP connect succeeds there; the
// check must not).
func TestCheck(t *testing.T) {
	key := writeFile(t, "key", []byte("0123456789abcdef0123456789abcdef\n"))
	other := writeFile(t, "other", []byte("fedcba9876543210fedcba9876543210\n"))
	keyed, _, _ := startServe(t, "--psk-file", key)
	open, _, _ := startServe(t)
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()

	cases := []struct {
		name    string
		args    []string
		want    int
		wantOut string
	}{
		{"the key", []string{keyed, "--psk-file", key}, ExitOK, "both sides proved the pre-shared key"},
		{"another key", []string{keyed, "--psk-file", other}, ExitRuntime, "does not match"},
		{"no key for a keyed server", []string{keyed}, ExitRuntime, "requires a pre-shared key"},
		{"a key for a server without one", []string{open, "--psk-file", key}, ExitRuntime, "does not authenticate"},
		{"no key, no key asked", []string{open}, ExitOK, "no key asked"},
		{"a listener that does not speak", []string{mute.Addr().String(), "--timeout", "500ms"}, ExitRuntime, mute.Addr().String()},
		{"no server", []string{}, ExitUsage, "takes one server"},
		{"zero timeout", []string{open, "--timeout", "0s"}, ExitUsage, "--timeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			code, out, errOut := execute(t, context.Background(), append([]string{"check"}, c.args...)...)
			if code != c.want || !strings.Contains(out+errOut, c.wantOut) {
				t.Errorf("exit %d (want %d), stdout %q, stderr %q, want %q in them", code, c.want, out, errOut, c.wantOut)
			}
			if d := time.Since(start); d > 4*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestCheckTakesNoTestSlot checks while a test holds the server's one
// slot: a readiness probe that took a slot would be refused as busy (and
// mark the server unready) whenever the mesh measures it.
func TestCheckTakesNoTestSlot(t *testing.T) {
	key := writeFile(t, "key", []byte("0123456789abcdef0123456789abcdef\n"))
	addr, logs, _ := startServe(t, "--psk-file", key, "--log-level", "debug")
	done := make(chan int, 1)
	go func() {
		code, _, _ := execute(t, context.Background(), "run", addr, "--psk-file", key, "-l", "2", "-i", "0")
		done <- code
	}()
	waitLogAttr(t, logs, "test started", "test")
	code, out, errOut := execute(t, context.Background(), "check", addr, "--psk-file", key)
	if code != ExitOK {
		t.Errorf("check during a test: exit %d, %s%s", code, out, errOut)
	}
	if code := <-done; code != ExitOK {
		t.Errorf("the test beside the check: exit %d", code)
	}
	if strings.Contains(logs.String(), "refused: busy") {
		t.Errorf("the server refused something as busy:\n%s", logs.String())
	}
}

// TestCheckWait: --wait retries while nothing answers (a server that
// starts later is found), and gives up at once on a server that answered
// and refused the key.
func TestCheckWait(t *testing.T) {
	key := writeFile(t, "key", []byte("0123456789abcdef0123456789abcdef\n"))
	other := writeFile(t, "other", []byte("fedcba9876543210fedcba9876543210\n"))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	// Nothing listens: every attempt is refused until --wait runs out.
	start := time.Now()
	code, _, errOut := execute(t, context.Background(), "check", addr, "--wait", "700ms")
	if d := time.Since(start); code != ExitRuntime || !strings.Contains(errOut, "attempts in") || d < 500*time.Millisecond || d > 3*time.Second {
		t.Errorf("nothing listening, --wait 700ms: exit %d after %v, %q", code, d, errOut)
	}

	// The server starts 600 ms into the check.
	type outcome struct {
		code      int
		out, errs string
	}
	done := make(chan outcome, 1)
	go func() {
		code, out, errOut := execute(t, context.Background(), "check", addr, "--psk-file", key, "--wait", "10s")
		done <- outcome{code, out, errOut}
	}()
	time.Sleep(600 * time.Millisecond)
	startServe(t, "--psk-file", key, "--listen", addr)
	o := <-done
	if o.code != ExitOK || !regexp.MustCompile(`both sides proved the pre-shared key, at attempt \d+ after \d+\.\d s`).MatchString(o.out) {
		t.Errorf("a server started late: exit %d, %q %q", o.code, o.out, o.errs)
	}

	// It answers and refuses the key: no point in trying again.
	start = time.Now()
	code, _, errOut = execute(t, context.Background(), "check", addr, "--psk-file", other, "--wait", "10s")
	if d := time.Since(start); code != ExitRuntime || !strings.Contains(errOut, "does not match") || d > 3*time.Second {
		t.Errorf("the wrong key with --wait 10s: exit %d after %v, %q", code, d, errOut)
	}
}
