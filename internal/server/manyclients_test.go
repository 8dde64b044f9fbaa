package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

// The many-clients bench (bench/manyclients) holds the targets: 64
// clients at once within 2% of their rate, the server's CPU per byte
// against iperf2's, 1,000 idle sessions under 64 MB. These tests hold the
// mechanisms in sizes a CI machine runs in seconds.

// clientAddr is the i-th client address on loopback: a client of its
// own, as 64 clients on 64 hosts are, each within the per-address limits'
// defaults.
func clientAddr(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{127, 0, byte(1 + i/250), byte(2 + i%250)})
}

// TestManyTestsAtOnce: a server started with --max-tests 16 runs 16
// clients' tests at once, each from an address of its own, with the
// other limits at their defaults; the kernel's table of TCP sockets shows
// 32 connections established to it meanwhile (16 control, 16 data), and
// a 17th client is told the server is busy, with the flag to raise.
func TestManyTestsAtOnce(t *testing.T) {
	const n = 16
	ts := startServer(t, server.Config{MaxTests: n})
	_, portS, _ := net.SplitHostPort(ts.addr)
	port, _ := strconv.Atoi(portS)

	clients := make([]*client.Client, n+1)
	for i := range clients {
		clients[i] = mustDial(t, client.Config{Addr: ts.addr, BindAddr: clientAddr(i)})
	}
	sp := spec.Default()
	sp.Duration, sp.Interval = 1500*time.Millisecond, 0
	sp.RateBitsPerSecond = 2e6 // paced: the test is about admission, not the CPU
	var wg sync.WaitGroup
	errs := make([]error, n)
	results := make([]int64, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := sp
			t.BindAddr = clientAddr(i).String() // the data connections from the control's address
			res, err := clients[i].Run(context.Background(), t)
			errs[i], results[i] = err, res.Summary.Bytes
		}()
	}
	// While they run: the kernel's count, and a client too many.
	var established int
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if established = establishedTo(t, port); established >= 2*n {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if established < 2*n {
		t.Errorf("%d connections established to the server while its %d tests ran, want %d (a control and a data connection each)", established, n, 2*n)
	}
	extra := sp
	extra.BindAddr = clientAddr(n).String()
	_, err := clients[n].Run(context.Background(), extra)
	if !errors.Is(err, control.ErrBusy) || !strings.Contains(err.Error(), fmt.Sprintf("--max-tests %d", n+1)) {
		t.Errorf("client %d while %d tests run: %v, want busy naming --max-tests %d", n+1, n, err, n+1)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil || results[i] <= 0 {
			t.Errorf("client %d (%s): %d bytes, %v", i+1, clientAddr(i), results[i], err)
		}
	}
}

// establishedTo counts the TCP sockets of this host whose local port is
// port and whose state is established, from the kernel's /proc/net/tcp:
// the server's ends of its connections.
func establishedTo(t *testing.T, port int) int {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Skipf("no /proc/net/tcp: %v", err)
	}
	want := fmt.Sprintf(":%04X", port)
	n := 0
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		// sl local_address rem_address st ...; st 01 is ESTABLISHED.
		if len(f) > 3 && strings.HasSuffix(f[1], want) && f[3] == "01" {
			n++
		}
	}
	return n
}

// sessionServerEnv makes the test binary a server instead (idleServer):
// the memory of a server process, read by the kernel, is the figure.
const sessionServerEnv = "WIRESPEED_TEST_SESSION_SERVER"

func init() {
	if os.Getenv(sessionServerEnv) == "1" {
		os.Exit(idleServer())
	}
}

// idleServer serves on 127.0.0.1:0 with a pre-shared key, prints its
// address, and stops when its standard input ends.
func idleServer() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(ln.Addr())
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	srv := server.New(server.Config{Auth: server.Auth{PSK: testKey}, Logger: slog.New(slog.DiscardHandler)})
	if err := srv.Serve(ctx, ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestIdleSessionMemory: idle authenticated control sessions cost a
// server process at most 40 KB of resident memory each, as the kernel
// counts it (VmRSS): 1,000 of them, on a server of some 23 MB, stay
// under the 64 MB the many-clients bench holds. Each session comes from
// one of the loopback addresses at the default of 8 per address.
func TestIdleSessionMemory(t *testing.T) {
	const sessions, perSession = 500, 40 << 10
	if raceEnabled {
		t.Skip("the race detector's shadow memory is in the server's VmRSS: run without -race")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run", "^$")
	cmd.Env = append(os.Environ(), sessionServerEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the server process said nothing: %v", err)
	}
	addr := strings.TrimSpace(line)
	pid := cmd.Process.Pid

	// The server's own memory once it has served one session and settled.
	warm := mustDial(t, client.Config{Addr: addr, Security: client.Security{PSK: testKey}, BindAddr: clientAddr(0)})
	time.Sleep(300 * time.Millisecond)
	before := vmRSS(t, pid)

	clients := make([]*client.Client, sessions)
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	sem := make(chan struct{}, 16)
	for i := range clients {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := client.Dial(context.Background(), client.Config{Addr: addr, Tool: "test",
				Security: client.Security{PSK: testKey}, BindAddr: clientAddr(1 + i/8)})
			if err != nil {
				errs <- err
				return
			}
			clients[i] = c
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("session: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	after := vmRSS(t, pid)
	for _, c := range clients {
		c.Close()
	}
	warm.Close()
	per := (after - before) / sessions
	t.Logf("server VmRSS %d KB idle, %d KB with %d sessions: %d bytes each", before>>10, after>>10, sessions, per)
	if per > perSession {
		t.Errorf("an idle authenticated session costs the server %d bytes of resident memory, over %d", per, perSession)
	}
}

// vmRSS is process pid's resident memory in bytes, from the kernel.
func vmRSS(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc/%d/status: %v", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
