//go:build !wirespeed_portable

package engine

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"wirespeed/internal/testkit"
)

// kcmpFiles is KCMP_FILES of include/uapi/linux/kcmp.h: do two tasks share
// one file descriptor table.
const kcmpFiles = 2

// sameFiles asks the kernel whether threads a and b of this process share
// their file table; ok is false where kcmp(2) is not available.
func sameFiles(a, b int) (same, ok bool) {
	r, _, e := unix.Syscall6(unix.SYS_KCMP, uintptr(a), uintptr(b), kcmpFiles, 0, 0, 0)
	if e != 0 {
		return false, false
	}
	return r == 0, true
}

// dupFD is a duplicate of c's descriptor, as take makes for a loop.
func dupFD(t *testing.T, c *net.TCPConn) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd int
	var derr error
	rc.Control(func(f uintptr) { fd, derr = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0) })
	if derr != nil {
		t.Fatal(derr)
	}
	return fd
}

// expectEOF fails unless c reads its end of stream within d.
func expectEOF(t *testing.T, c net.Conn, d time.Duration, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("%s: read %v, want the end of stream within %v", what, err, d)
	}
}

// TestOwnFiles: the loop runs on a thread whose file table is its own (the
// kernel's kcmp says so, against the thread that called), with the
// caller's CPU affinity; it can use its descriptor; a connection the rest
// of the process closes while the loop runs reaches its peer's end of
// stream at once, not when the loop ends; standard input, output and
// error stay open for what the thread logs; and once the loop has returned
// and the owner closed the descriptor, its peer sees the end of stream
// too.
func TestOwnFiles(t *testing.T) {
	loopConn, loopPeer := testkit.TCPPair(t)
	other, otherPeer := testkit.TCPPair(t)
	fd := dupFD(t, loopConn)
	loopConn.Close()

	caller := make(chan int, 1)
	type seen struct {
		tid   int
		mask  unix.CPUSet
		wrote error
		stdio [3]error // fstat of standard input, output and error
	}
	got := make(chan seen, 1)
	closed := make(chan struct{})
	var want unix.CPUSet
	go func() {
		pin, undo, err := Pin(0)
		if err != nil {
			caller <- -1
			got <- seen{}
			return
		}
		defer undo()
		unix.SchedGetaffinity(0, &want)
		caller <- pin.TID
		err = ownFiles(fd, func() error {
			var s seen
			s.tid = unix.Gettid()
			unix.SchedGetaffinity(0, &s.mask)
			_, s.wrote = unix.Write(fd, []byte("x"))
			for i := range s.stdio {
				var st unix.Stat_t
				s.stdio[i] = unix.Fstat(i, &st)
			}
			got <- s
			<-closed // the rest of the process closes "other" meanwhile
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}()
	callerTID := <-caller
	s := <-got
	if callerTID < 0 {
		t.Skip("cannot pin to CPU 0 here")
	}
	if s.tid == callerTID {
		t.Errorf("the loop ran on the calling thread %d, want a thread of its own", s.tid)
	}
	// Against this test's own thread, not the process's main one: an
	// earlier loop of the package may have ended on the main thread, which
	// the runtime then parks with the loop's table.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	me := unix.Gettid()
	if same, ok := sameFiles(s.tid, me); !ok {
		t.Log("kcmp(2) unavailable: the table's privacy is not checked")
	} else if same {
		t.Errorf("loop thread %d shares the process's file table", s.tid)
	}
	if same, ok := sameFiles(callerTID, me); ok && !same {
		t.Errorf("the calling thread %d lost the process's file table", callerTID)
	}
	if s.mask != want {
		t.Errorf("loop thread's CPUs %v, want the caller's %v", cpuSetString(&s.mask), cpuSetString(&want))
	}
	for i, err := range s.stdio {
		// Under go test they are pipes, which the copy of the table
		// would otherwise lose.
		if err != nil {
			t.Errorf("descriptor %d in the loop's table: %v; want standard input, output and error kept", i, err)
		}
	}
	if s.wrote != nil {
		t.Errorf("write on the loop's descriptor: %v", s.wrote)
	}
	buf := make([]byte, 1)
	loopPeer.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.ReadFull(loopPeer, buf); err != nil || buf[0] != 'x' {
		t.Errorf("peer read %q, %v; want what the loop wrote", buf, err)
	}

	other.Close()
	expectEOF(t, otherPeer, 2*time.Second, "a connection closed while the loop ran")
	close(closed)

	// The loop has returned once ownFiles has; the owner closes its copy.
	testkit.WaitFor(2*time.Second, func() bool { return !threadAlive(s.tid) })
	unix.Close(fd)
	expectEOF(t, loopPeer, 2*time.Second, "the loop's connection once closed by its owner")
}

// threadAlive reports whether thread tid of this process still exists.
func threadAlive(tid int) bool {
	_, err := os.Stat("/proc/self/task/" + strconv.Itoa(tid))
	return err == nil
}

// TestOwnFilesAffinity: the loop's thread takes the CPUs of the thread
// that called, pinned in turn to the first and the last CPU this process
// may use (a new thread otherwise gets those of whichever thread made it).
func TestOwnFilesAffinity(t *testing.T) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Fatal(err)
	}
	var cpus []int
	for c := range len(all) * 64 {
		if all.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) < 2 {
		t.Skipf("one CPU (%s): nothing to tell apart", cpuSetString(&all))
	}
	for _, cpu := range []int{cpus[0], cpus[len(cpus)-1], cpus[0]} {
		got := make(chan unix.CPUSet, 1)
		go func() {
			_, undo, err := Pin(cpu)
			if err != nil {
				t.Error(err)
				got <- unix.CPUSet{}
				return
			}
			defer undo()
			ownFiles(-1, func() error {
				var m unix.CPUSet
				unix.SchedGetaffinity(0, &m)
				got <- m
				return nil
			})
		}()
		m := <-got
		if m.Count() != 1 || !m.IsSet(cpu) {
			t.Errorf("caller pinned to CPU %d, loop thread on CPUs %s", cpu, cpuSetString(&m))
		}
	}
}

// TestAtoiName: descriptor numbers from the directory listing, and what is
// not one.
func TestAtoiName(t *testing.T) {
	for in, want := range map[string]int{"0\x00": 0, "17\x00\x00\x00": 17, "123456": 123456} {
		if got, ok := atoiName([]byte(in)); !ok || got != want {
			t.Errorf("atoiName(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{".\x00", "..\x00", "\x00", "", "12345678901\x00"} {
		if got, ok := atoiName([]byte(in)); ok {
			t.Errorf("atoiName(%q) = %d, want not a number", in, got)
		}
	}
}
