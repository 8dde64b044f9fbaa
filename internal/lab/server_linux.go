package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"wirespeed/internal/measure"

	"golang.org/x/sys/unix"
)

func (l *Lab) startServer(ctx context.Context, cmd *exec.Cmd, addr, key string) (*Server, error) {
	return startServerAs(ctx, l, l.Name, cmd, addr, key)
}

// startServerAs starts the server in l.A, recorded under the state name
// state (a lab's name, or a mesh host's meshState), and waits until l.B
// reaches it. l.A.Name and l.B.Name name the namespaces, so a Lab that
// views two hosts of a mesh works as well as a two-host lab.
func startServerAs(ctx context.Context, l *Lab, state string, cmd *exec.Cmd, addr, key string) (*Server, error) {
	sa, sb := l.A.Name, l.B.Name
	if sa == "" {
		sa = A
	}
	if sb == "" {
		sb = B
	}
	netnsA := Namespace(l.Name, sa)
	if s, err := loadServer(state); err != nil {
		return nil, err
	} else if s != nil && s.running(state) {
		return nil, fmt.Errorf("lab %s already runs a server in %s (pid %d on %s); stop it with wirespeed lab down", l.Name, netnsA, s.PID, s.Addr)
	}
	if err := os.MkdirAll(StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("lab %s: %w", l.Name, err)
	}
	logPath := LogPath(state)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lab %s: server log: %w", l.Name, err)
	}
	defer logf.Close() // the child has its own copy
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = logf, logf
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// A session of its own: the terminal's Ctrl-C and hangup do not reach
	// it; lab down stops it.
	cmd.SysProcAttr.Setsid = true
	if err := l.Start(sa, cmd); err != nil {
		return nil, fmt.Errorf("start the server in %s: %w", netnsA, err)
	}
	exited := make(chan struct{})
	go func() {
		// Reap it if it ends while this process lives (a test, or a
		// server that fails at once); after this process exits, init does.
		cmd.Wait()
		close(exited)
	}()
	s := &Server{PID: cmd.Process.Pid, Addr: addr, Key: key, Log: logPath, Started: time.Now(), Args: cmd.Args}
	if sa != A {
		s.Netns = netnsA
	}
	s.StartTicks, _ = startTicks(procRoot, s.PID)
	if err := saveServer(state, s); err != nil {
		cmd.Process.Kill()
		return nil, err
	}
	fail := func(why string) (*Server, error) {
		cmd.Process.Kill()
		<-exited
		forgetServer(state)
		return nil, fmt.Errorf("the server in %s %s; its log %s ends:\n%s", netnsA, why, logPath, tail(logPath, 10))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := l.Do(sb, func() error {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
			}
			return err
		})
		if err == nil {
			return s, nil
		}
		select {
		case <-exited:
			return fail(fmt.Sprintf("ended before it accepted a connection (%v)", cmd.ProcessState))
		case <-ctx.Done():
			return fail("was not ready when the command was stopped")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fail(fmt.Sprintf("did not accept connections on %s from %s within 10s (%v)", addr, Namespace(l.Name, sb), err))
		}
	}
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// procRoot is where procfs is mounted. The lab's records name live
// processes of this host, so it is always the host's; the functions that
// read it take it as an argument for their tests.
const procRoot = measure.DefaultProcRoot

// startTicks reads a process's start time from root/PID/stat.
func startTicks(root string, pid int) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces;
	// the fields after its closing one are plain.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); field 22 (starttime) is f[19].
	if len(f) < 20 {
		return 0, errors.New("malformed stat")
	}
	if f[0] == "Z" || f[0] == "X" {
		return 0, errors.New("the process has ended")
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// running reports whether the recorded server is still the process that
// was started, alive, in side a of the lab.
func (s *Server) running(name string) bool {
	if s == nil || s.PID <= 0 {
		return false
	}
	ticks, err := startTicks(procRoot, s.PID)
	if err != nil || ticks != s.StartTicks {
		return false
	}
	var want, got unix.Stat_t
	ns := s.Netns
	if ns == "" {
		ns = Namespace(name, A)
	}
	if unix.Stat(filepath.Join(netnsDir, ns), &want) != nil {
		// The namespace's name is gone (removed by hand): the start time
		// alone identifies the process.
		return true
	}
	if unix.Stat(filepath.Join(procRoot, strconv.Itoa(s.PID), "ns/net"), &got) != nil {
		return false
	}
	return want.Ino == got.Ino && want.Dev == got.Dev
}

func stopServer(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	return stopServerAs(name)
}

// stopServerAs stops the server recorded under the state name state.
func stopServerAs(name string) error {
	s, err := loadServer(name)
	if err != nil || s == nil {
		return err
	}
	if s.running(name) {
		syscall.Kill(s.PID, syscall.SIGTERM)
		deadline := time.Now().Add(5 * time.Second)
		for s.running(name) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if s.running(name) {
			syscall.Kill(s.PID, syscall.SIGKILL)
			for i := 0; i < 100 && s.running(name); i++ {
				time.Sleep(10 * time.Millisecond)
			}
		}
		if s.running(name) {
			return fmt.Errorf("lab %s: the server (pid %d) did not stop", name, s.PID)
		}
	}
	return forgetServer(name)
}
