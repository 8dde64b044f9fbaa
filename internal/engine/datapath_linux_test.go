//go:build !wirespeed_portable

package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// checkStream reads c to its end and checks that every byte is the
// payload's: the k-th byte of the stream is the ring's (k mod ring)-th,
// whatever the message size and however the kernel split the writes.
func checkStream(c net.Conn, p *Payload) (int64, error) {
	buf := make([]byte, 64<<10)
	var k int64
	for {
		n, err := c.Read(buf)
		for i := 0; i < n; i++ {
			if want := p.buf[(k+int64(i))%int64(p.ring)]; buf[i] != want {
				return k + int64(i), fmt.Errorf("byte %d is %#x, want %#x", k+int64(i), buf[i], want)
			}
		}
		k += int64(n)
		if errors.Is(err, io.EOF) {
			return k, nil
		}
		if err != nil {
			return k, err
		}
	}
}

// runSender runs snd for d, stops it and sends its end of stream.
func runSender(t *testing.T, snd *TCPSender, d time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- snd.Run() }()
	time.Sleep(d)
	snd.Stop()
	if err := <-done; err != nil {
		t.Fatalf("send: %v", err)
	}
	if err := snd.Finish(); err != nil {
		t.Fatalf("finish: %v", err)
	}
}

// TestZeroCopySenders: sendfile and MSG_ZEROCOPY move the same bytes as
// write(2), in the same order, and the receiver counts what the sender
// counted.
func TestZeroCopySenders(t *testing.T) {
	for _, mode := range []string{spec.ZeroCopyOff, spec.ZeroCopySendfile, spec.ZeroCopyMsg} {
		for _, size := range []int{1000, 128 << 10} {
			t.Run(fmt.Sprintf("%s/%d", mode, size), func(t *testing.T) {
				a, b := pair(t)
				p, _ := NewPayload(spec.PayloadRandom, nil, size)
				snd, err := NewTCPSender(a, p, size)
				if err != nil {
					t.Fatal(err)
				}
				switch mode {
				case spec.ZeroCopySendfile:
					err = snd.UseSendfile()
				case spec.ZeroCopyMsg:
					err = snd.UseMsgZeroCopy()
				}
				if err != nil {
					t.Fatal(err)
				}
				type got struct {
					n   int64
					err error
				}
				rc := make(chan got, 1)
				go func() { n, err := checkStream(b, p); rc <- got{n, err} }()
				runSender(t, snd, 200*time.Millisecond)
				r := <-rc
				if r.err != nil {
					t.Fatalf("receiver: %v", r.err)
				}
				c := snd.Counters()
				if c.Bytes == 0 || c.Bytes != r.n {
					t.Errorf("sent %d bytes, received %d", c.Bytes, r.n)
				}
				if mode != spec.ZeroCopyMsg {
					if c.ZeroCopyCompleted != 0 {
						t.Errorf("%d zero-copy completions without MSG_ZEROCOPY", c.ZeroCopyCompleted)
					}
					return
				}
				// Every send is completed by the time Finish returns; on
				// loopback the kernel copies on delivery and says so.
				if c.ZeroCopyCompleted != c.Calls {
					t.Errorf("%d completions for %d sends", c.ZeroCopyCompleted, c.Calls)
				}
				if c.ZeroCopyCopied != c.ZeroCopyCompleted {
					t.Errorf("loopback: %d of %d completions say copied, want all", c.ZeroCopyCopied, c.ZeroCopyCompleted)
				}
				t.Logf("%d sends, %d completions, %d copied", c.Calls, c.ZeroCopyCompleted, c.ZeroCopyCopied)
			})
		}
	}
}

// TestReceiveModes: splice and MSG_TRUNC receivers count exactly what the
// sender sent and see its end of stream.
func TestReceiveModes(t *testing.T) {
	for _, mode := range []string{spec.RxSplice, spec.RxDiscard} {
		for _, size := range []int{1000, 128 << 10} {
			t.Run(fmt.Sprintf("%s/%d", mode, size), func(t *testing.T) {
				a, b := pair(t)
				p, _ := NewPayload(spec.PayloadRandom, nil, 64<<10)
				snd, _ := NewTCPSender(a, p, 64<<10)
				rcv, err := NewTCPReceiver(b, size)
				if err != nil {
					t.Fatal(err)
				}
				if mode == spec.RxSplice {
					err = rcv.UseSplice()
				} else {
					err = rcv.UseDiscard()
				}
				if err != nil {
					t.Fatal(err)
				}
				rerr := make(chan error, 1)
				go func() { rerr <- rcv.Run() }()
				runSender(t, snd, 200*time.Millisecond)
				select {
				case err := <-rerr:
					if err != nil {
						t.Fatalf("receive: %v", err)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("receiver did not reach the end of stream")
				}
				if !rcv.Ended() {
					t.Error("receiver did not see the end of stream")
				}
				s, r := snd.Counters(), rcv.Counters()
				if s.Bytes == 0 || s.Bytes != r.Bytes {
					t.Errorf("sent %d bytes, received %d", s.Bytes, r.Bytes)
				}
				if r.Calls < r.Bytes/int64(size) {
					t.Errorf("%d receive calls for %d bytes, at most %d each", r.Calls, r.Bytes, size)
				}
			})
		}
	}
}

// TestReceiveModeStop: a splice or discard receiver whose sender goes
// quiet parks in the poller, and Stop ends it.
func TestReceiveModeStop(t *testing.T) {
	for _, mode := range []string{spec.RxSplice, spec.RxDiscard} {
		a, b := pair(t)
		defer a.Close()
		rcv, _ := NewTCPReceiver(b, 4096)
		if mode == spec.RxSplice {
			rcv.UseSplice()
		} else {
			rcv.UseDiscard()
		}
		done := make(chan error, 1)
		go func() { done <- rcv.Run() }()
		time.Sleep(50 * time.Millisecond)
		rcv.Stop()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: stopped receiver returned %v", mode, err)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("%s: receiver did not stop", mode)
		}
	}
}

// TestDataPathNoAllocation: the zero-copy and receive-mode loops allocate
// a bounded amount however many messages they move, like the copy loops.
func TestDataPathNoAllocation(t *testing.T) {
	// MSG_ZEROCOPY sends of a few hundred bytes to a receiver that does
	// not copy stall on loopback: each tiny zero-copy fragment costs the
	// receiver a page when the kernel copies it on delivery, its window
	// closes, and the sender waits for the persist timer. Larger messages
	// keep that case moving.
	for _, tc := range []struct {
		send, rx string
		size     int
	}{
		{spec.ZeroCopySendfile, spec.RxSplice, 256},
		{spec.ZeroCopyMsg, spec.RxDiscard, 8 << 10},
	} {
		t.Run(tc.send+"/"+tc.rx, func(t *testing.T) {
			a, b := pair(t)
			p, _ := NewPayload(spec.PayloadRandom, nil, tc.size)
			snd, _ := NewTCPSender(a, p, tc.size)
			rcv, _ := NewTCPReceiver(b, tc.size)
			if tc.send == spec.ZeroCopySendfile {
				snd.UseSendfile()
			} else if err := snd.UseMsgZeroCopy(); err != nil {
				t.Fatal(err)
			}
			if tc.rx == spec.RxSplice {
				rcv.UseSplice()
			} else {
				rcv.UseDiscard()
			}
			checkPairAllocs(t, snd, rcv)
		})
	}
}

func TestParseZeroCopy(t *testing.T) {
	// Two notifications in one buffer: sends 0-9 copied, 10-10 not.
	msg := func(lo, hi uint32, code uint8) []byte {
		b := make([]byte, unix.CmsgSpace(16+16))
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		h.Level, h.Type = unix.SOL_IP, unix.IP_RECVERR
		h.SetLen(unix.CmsgLen(16 + 16))
		ee := (*unix.SockExtendedErr)(unsafe.Pointer(&b[unix.SizeofCmsghdr]))
		ee.Origin, ee.Code, ee.Info, ee.Data = unix.SO_EE_ORIGIN_ZEROCOPY, code, lo, hi
		return b
	}
	b := append(msg(0, 9, unix.SO_EE_CODE_ZEROCOPY_COPIED), msg(10, 10, 0)...)
	if done, copied := parseZeroCopy(b); done != 11 || copied != 10 {
		t.Errorf("done %d copied %d, want 11 and 10", done, copied)
	}
	// The 32-bit send numbers wrap.
	if done, _ := parseZeroCopy(msg(1<<32-2, 1, 0)); done != 4 {
		t.Errorf("wrapped range: done %d, want 4", done)
	}
	if done, _ := parseZeroCopy(b[:10]); done != 0 {
		t.Errorf("truncated buffer: done %d", done)
	}
}

// threadCPU reads the CPU thread tid of this process last ran on: field 39
// of /proc/self/task/<tid>/stat.
func threadCPU(tid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", tid))
	if err != nil {
		return -1, err
	}
	// The command name (field 2) may hold spaces; count from its ")".
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 37 {
		return -1, fmt.Errorf("short stat %q", s)
	}
	return strconv.Atoi(f[36]) // field 39; f[0] is field 3
}

// lastCPU is the highest CPU this process may run on.
func lastCPU(t *testing.T) int {
	var s unix.CPUSet
	if err := unix.SchedGetaffinity(0, &s); err != nil {
		t.Fatal(err)
	}
	for c := len(s)*64 - 1; c >= 0; c-- {
		if s.IsSet(c) {
			return c
		}
	}
	t.Fatal("no CPU")
	return 0
}

// TestPin: a pinned thread runs on its CPU only, as the kernel sees it,
// and gets its former affinity back.
func TestPin(t *testing.T) {
	cpu := lastCPU(t)
	type res struct {
		pin          Pinning
		ran          int
		mask, before unix.CPUSet
		err          error
	}
	ch := make(chan res, 1)
	go func() {
		var r res
		unix.SchedGetaffinity(0, &r.before)
		pin, undo, err := Pin(cpu)
		if err != nil {
			r.err = err
			ch <- r
			return
		}
		r.pin = pin
		// Keep the thread busy for a while, then look where it ran.
		for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
		}
		r.ran, r.err = threadCPU(pin.TID)
		unix.SchedGetaffinity(pin.TID, &r.mask)
		undo()
		ch <- r
	}()
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.ran != cpu || r.pin.CPU != cpu {
		t.Errorf("pinned to %d, thread %d ran on %d", r.pin.CPU, r.pin.TID, r.ran)
	}
	if r.mask.Count() != 1 || !r.mask.IsSet(cpu) {
		t.Errorf("thread affinity has %d CPUs, want only %d", r.mask.Count(), cpu)
	}
	if _, _, err := Pin(spec.MaxCPU); err == nil || !strings.Contains(err.Error(), "may run on CPUs") {
		t.Errorf("pin to an absent CPU: %v", err)
	}
}

// TestPacingRate: SO_MAX_PACING_RATE reads back as set and, by TCP's
// internal pacing, caps a loopback stream near the rate (loosely: the
// machine is shared, and the cap counts headers too).
func TestPacingRate(t *testing.T) {
	testkit.Serial(t)
	a, b := pair(t)
	const rate = 10e6 // bytes/s: 80 Mbit/s
	got, err := SetPacingRate(a, rate)
	if err != nil {
		t.Fatal(err)
	}
	if got != rate {
		t.Errorf("pacing rate reads back %d, want %d", got, uint64(rate))
	}
	p, _ := NewPayload(spec.PayloadZeros, nil, 64<<10)
	snd, _ := NewTCPSender(a, p, 64<<10)
	rcv, _ := NewTCPReceiver(b, 64<<10)
	go rcv.Run()
	done := make(chan error, 1)
	go func() { done <- snd.Run() }()
	// Past the initial window's burst, measure half a second.
	time.Sleep(200 * time.Millisecond)
	b0, t0 := rcv.Counters().Bytes, time.Now()
	time.Sleep(500 * time.Millisecond)
	b1, t1 := rcv.Counters().Bytes, time.Now()
	snd.Stop()
	<-done
	snd.Finish()
	achieved := float64(b1-b0) / t1.Sub(t0).Seconds()
	if achieved > 1.3*rate || achieved < 0.5*rate {
		t.Errorf("paced to %.0f bytes/s, achieved %.0f", rate, achieved)
	}
	t.Logf("paced to %.0f bytes/s, achieved %.0f", rate, achieved)
}

// TestBusyPoll: SO_BUSY_POLL reads back on a connection and on the
// connections a TCP_CRR listener accepts.
func TestBusyPoll(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("raising SO_BUSY_POLL above net.core.busy_read needs CAP_NET_ADMIN")
	}
	a, _ := pair(t)
	got, err := SetBusyPoll(a, 50)
	if err != nil || got != 50 {
		t.Fatalf("busy poll %d, %v; want 50", got, err)
	}
	if id, err := NAPIID(a); err != nil || id != 0 {
		t.Errorf("loopback NAPI id %d, %v; want 0", id, err)
	}

	ln, err := ListenCRR("tcp4", "127.0.0.1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sh, err := NewCRRShared(ln, ln.Addr().(*net.TCPAddr).AddrPort().Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	if got, err := sh.SetBusyPoll(30); err != nil || got != 30 {
		t.Fatalf("listener busy poll %d, %v; want 30", got, err)
	}
	c, err := Dial(context.Background(), "tcp4", ln.Addr().String(), Options{BusyPollMicros: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, _ := busyPollOf(c); got != 20 {
		t.Errorf("dialled with busy poll 20, reads %d", got)
	}
	// The server loop sets it on what it accepts: the kernel does not
	// copy it from the listener.
	srv := NewCRRServer(sh, 1, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Run() }()
	c.Write([]byte{1})
	var b [1]byte
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	<-done
	if srv.sh.busyPoll != 30 {
		t.Errorf("server loops set busy poll %d, want 30", srv.sh.busyPoll)
	}
}

func busyPollOf(c Socket) (int, error) {
	var v int
	err := withFD(c, func(fd int) (err error) {
		v, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_BUSY_POLL)
		return err
	})
	return v, err
}

// udpPair returns a connected sender and receiver socket on loopback,
// closed when the test (or the benchmark's run) ends.
func udpPair(t testing.TB) (*net.UDPConn, *net.UDPConn) {
	t.Helper()
	rc, err := ListenUDP("udp4", "127.0.0.1", Options{SockBuf: UDPReceiveBuffer})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := DialUDP(context.Background(), "udp4", rc.LocalAddr().String(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ConnectUDP(rc, sc.LocalAddr().(*net.UDPAddr).AddrPort()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close(); sc.Close() })
	return sc, rc
}

// TestUDPGSOGRO: with UDP_SEGMENT on the sender, UDP_GRO on the receiver,
// or both, every datagram is counted by its own sequence number: at a
// modest rate none is lost and the counts match the sender's.
func TestUDPGSOGRO(t *testing.T) {
	for _, tc := range []struct {
		name      string
		gso, size int
		gro       bool
	}{
		{"gso+gro", 1000, 10000, true},
		{"gso short tail", 1000, 9500, true},
		{"gso only", 1200, 12000, false},
		{"gro only", 0, 1200, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, rc := udpPair(t)
			p, _ := NewPayload(spec.PayloadRandom, nil, tc.size)
			snd, err := NewUDPSender(sc, p, tc.size, 100e6)
			if err != nil {
				t.Fatal(err)
			}
			if tc.gso > 0 {
				if err := snd.SetGSO(tc.gso); err != nil {
					t.Fatal(err)
				}
			}
			rcv, _ := NewUDPReceiver(rc, max(tc.gso, tc.size))
			if tc.gro {
				if err := rcv.EnableGRO(); err != nil {
					t.Fatal(err)
				}
			}
			rcv.MarkWindow()
			rdone := make(chan error, 1)
			go func() { rdone <- rcv.Run() }()
			sdone := make(chan error, 1)
			go func() { sdone <- snd.Run() }()
			time.Sleep(300 * time.Millisecond)
			snd.Stop()
			if err := <-sdone; err != nil {
				t.Fatal(err)
			}
			snd.Finish()
			select {
			case err := <-rdone:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(3 * time.Second):
				rcv.Stop()
				t.Fatal("receiver did not see the end of stream")
			}
			s, r, w := snd.Counters(), rcv.Counters(), rcv.Window()
			per := 1
			if tc.gso > 0 {
				per = (tc.size + tc.gso - 1) / tc.gso
			}
			if s.Packets != int64(per)*(s.Bytes/int64(tc.size)) {
				t.Errorf("sender counted %d datagrams for %d bytes of %d-byte sends", s.Packets, s.Bytes, tc.size)
			}
			if w.SenderTotal != s.Packets || r.Packets != s.Packets || w.Unique != s.Packets || r.Lost != 0 || r.Duplicates != 0 {
				t.Errorf("sender %d datagrams (fin says %d); receiver %d unique, %d in window, %d lost, %d duplicates",
					s.Packets, w.SenderTotal, r.Packets, w.Unique, r.Lost, r.Duplicates)
			}
			if r.Bytes != s.Bytes {
				t.Errorf("sent %d payload bytes, received %d", s.Bytes, r.Bytes)
			}
			if tc.gro && tc.gso > 0 && r.Coalesced == 0 {
				t.Error("GSO sends to a GRO receiver on loopback arrived uncoalesced")
			}
			if !tc.gro && r.Coalesced != 0 {
				t.Errorf("%d coalesced buffers without GRO", r.Coalesced)
			}
			t.Logf("%d datagrams in %d sends, %d receive calls, %d coalesced buffers", s.Packets, s.Calls, r.Calls, r.Coalesced)
		})
	}
}

// TestOptErrorUnsupported checks that a socket option the kernel does not
// know (ENOPROTOOPT, which is not errors.ErrUnsupported by itself) reads
// as unsupported, and one refused to this user does not.
func TestOptErrorUnsupported(t *testing.T) {
	tests := []struct {
		errno unix.Errno
		want  bool
	}{
		{unix.ENOPROTOOPT, true},
		{unix.EOPNOTSUPP, true},
		{unix.EPERM, false},
		{unix.EINVAL, false},
	}
	for _, tt := range tests {
		err := fmt.Errorf("--gro: %w", &optError{"set UDP_GRO", tt.errno})
		if got := errors.Is(err, errors.ErrUnsupported); got != tt.want {
			t.Errorf("%v: errors.Is(errors.ErrUnsupported) = %v, want %v", err, got, tt.want)
		}
		if got := errors.Is(err, ErrUnsupported); got != tt.want {
			t.Errorf("%v: errors.Is(ErrUnsupported) = %v, want %v", err, got, tt.want)
		}
	}
}
