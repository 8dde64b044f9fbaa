// Command hostile measures what a hostile or careless client costs a
// wirespeed server: it starts `wirespeed serve` from the binary
// it is given, on loopback, plays one client and reports the server's
// peak resident size, the host's shared memory (memfds), the CPU seconds
// the server used and how long its test slot stayed busy. Run it against
// a server built from an older commit to get the "before" figure of a fix
// (docs/security.md, "What a test may cost").
//
//	go build -o /tmp/ws ./cmd/wirespeed
//	go run ./bench/hostile -server /tmp/ws -case spin
//
// Cases:
//
//	spin       UDP_STREAM -R -P 2 at rate_bps 1e-300, 10 s (item 3)
//	noread     TCP_BIDIR -P 32 -i 0.01, 10 s, the control connection never read (item 2)
//	intervals  TCP_BIDIR -P 32 -i 0.01 -m 1 -M 1 for -l seconds (item 1)
//	longrun    TCP_STREAM -P 8 -i 0.01 -l 30 with default limits: does it work (item 1)
//	gro        UDP_STREAM -m 16 --gro --recv-batch 64 -P 32 (item 4)
//	sendfile   TCP_MAERTS -P 32 -m 32M --zerocopy sendfile (item 5)
//
// It only talks to 127.0.0.1.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/spec"
)

func main() {
	bin := flag.String("server", "", "the wirespeed binary to serve with")
	kase := flag.String("case", "", "spin, noread, intervals, longrun, gro or sendfile")
	length := flag.Duration("l", 10*time.Second, "test length")
	extra := flag.String("serve-args", "", "more serve flags, space-separated")
	flag.Parse()
	if *bin == "" || *kase == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*bin, *kase, *length, strings.Fields(*extra)); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
}

type server struct {
	cmd  *exec.Cmd
	addr string
	pid  int
	log  *lockedBuf
}

type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startServer(bin string, args []string) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, append([]string{"serve", "--listen", addr}, args...)...)
	lb := &lockedBuf{}
	cmd.Stdout, cmd.Stderr = lb, lb
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return &server{cmd: cmd, addr: addr, pid: cmd.Process.Pid, log: lb}, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill()
	return nil, fmt.Errorf("server did not listen on %s: %s", addr, lb.String())
}

func (s *server) stop() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// procStatus reads a kB field of /proc/PID/status.
func procStatus(pid int, field string) int64 {
	return kbField(fmt.Sprintf("/proc/%d/status", pid), field)
}

func kbField(path, field string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return n << 10
		}
	}
	return 0
}

// cpuSeconds is the process's user+system time.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (u + st) / 100
}

// watch samples the server every 20 ms until stop: its peak RSS and the
// host's peak Shmem above their first values.
type watch struct {
	rss0, shm0       int64
	peakRSS, peakShm atomic.Int64
	cpu0             float64
	stop             chan struct{}
	done             chan struct{}
}

func watchServer(pid int) *watch {
	w := &watch{rss0: procStatus(pid, "VmRSS"), shm0: kbField("/proc/meminfo", "Shmem"), cpu0: cpuSeconds(pid), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		for {
			if r := procStatus(pid, "VmRSS") - w.rss0; r > w.peakRSS.Load() {
				w.peakRSS.Store(r)
			}
			if s := kbField("/proc/meminfo", "Shmem") - w.shm0; s > w.peakShm.Load() {
				w.peakShm.Store(s)
			}
			select {
			case <-w.stop:
				return
			case <-tk.C:
			}
		}
	}()
	return w
}

func (w *watch) report(pid int) {
	close(w.stop)
	<-w.done
	fmt.Printf("server peak RSS +%.1f MB, host peak Shmem +%.1f MB, server CPU %.1f s\n",
		float64(w.peakRSS.Load())/1e6, float64(w.peakShm.Load())/1e6, cpuSeconds(pid)-w.cpu0)
}

func run(bin, kase string, length time.Duration, extra []string) error {
	var args []string
	switch kase {
	case "intervals":
		args = []string{"--max-test-memory", "1M", "--max-memory", "4M"}
	case "gro":
		args = []string{"--max-test-memory", "1M", "--max-memory", "2M"}
	}
	srv, err := startServer(bin, append(args, extra...))
	if err != nil {
		return err
	}
	defer srv.stop()
	w := watchServer(srv.pid)
	start := time.Now()
	switch kase {
	case "spin":
		err = spin(srv.addr, length)
	case "noread":
		err = noread(srv, length)
	case "intervals":
		sp := spec.Default()
		sp.Kind, sp.Parallel, sp.Interval, sp.SendSize, sp.RecvSize, sp.Duration = spec.TCPBidir, 32, 10*time.Millisecond, 1, 1, length
		err = runClient(srv.addr, sp)
	case "longrun":
		sp := spec.Default()
		sp.Kind, sp.Parallel, sp.Interval, sp.Duration = spec.TCPStream, 8, 10*time.Millisecond, length
		err = runClient(srv.addr, sp)
	case "gro":
		sp := spec.Default()
		sp.Kind, sp.Parallel, sp.SendSize, sp.GRO, sp.RecvBatch, sp.Duration = spec.UDPStream, 32, 16, true, 64, length
		sp.RecvSize = sp.SendSize
		err = runClient(srv.addr, sp)
	case "sendfile":
		sp := spec.Default()
		sp.Kind, sp.Parallel, sp.SendSize, sp.ZeroCopy, sp.Duration = spec.TCPMaerts, 32, 32<<20, spec.ZeroCopySendfile, length
		err = runClient(srv.addr, sp)
	default:
		return fmt.Errorf("unknown case %q", kase)
	}
	fmt.Printf("case %s: %v after %v\n", kase, errText(err), time.Since(start).Round(time.Millisecond))
	w.report(srv.pid)
	for _, l := range strings.Split(srv.log.String(), "\n") {
		if strings.Contains(l, "test ") {
			fmt.Println("server log:", l)
		}
	}
	return nil
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return "error: " + err.Error()
}

func runClient(addr string, sp spec.Test) error {
	ctx := context.Background()
	c, err := client.Dial(ctx, client.Config{Addr: addr, Tool: "hostile"})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Run(ctx, sp)
	return err
}

// hello opens a control connection and exchanges hellos.
func hello(addr string) (*control.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	cc := control.NewConn(c, 0)
	if err := cc.WriteMagic(); err != nil {
		return nil, err
	}
	if err := cc.Send(control.TypeHello, control.NewHello("hostile", "")); err != nil {
		return nil, err
	}
	if err := cc.ReadMagic(5 * time.Second); err != nil {
		return nil, err
	}
	return cc, cc.Expect(control.TypeHello, nil, 5*time.Second)
}

// spin asks for UDP_STREAM -R -P 2 at 1e-300 bits/s, proves its UDP
// sockets and reads what comes for the test's length.
func spin(addr string, length time.Duration) error {
	cc, err := hello(addr)
	if err != nil {
		return err
	}
	defer cc.Close()
	sp := spec.Default()
	sp.Kind, sp.Reverse, sp.Parallel, sp.SendSize, sp.RecvSize, sp.RateBitsPerSecond, sp.Duration, sp.Interval = spec.UDPStream, true, 2, 1472, 1472, 1e-300, length, 0
	if err := cc.Send(control.TypeTest, control.TestRequest{Spec: sp}); err != nil {
		return err
	}
	var acc control.Accepted
	if err := cc.Expect(control.TypeAccepted, &acc, 5*time.Second); err != nil {
		return fmt.Errorf("refused: %w", err)
	}
	var got atomic.Int64
	for i, port := range acc.UDPPorts {
		uc, err := net.Dial("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			return err
		}
		defer uc.Close()
		hdr := control.DataHeader(acc.Token, sp.Streams()[i].ID)
		buf := make([]byte, 65536)
		for j := 0; ; j++ {
			uc.Write(hdr)
			uc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			n, err := uc.Read(buf)
			if err == nil && control.IsDataAck(buf[:n], acc.Token, sp.Streams()[i].ID) {
				break
			}
			if j > 50 {
				return errors.New("no UDP ack")
			}
		}
		uc.SetReadDeadline(time.Time{})
		go func() {
			for {
				if _, err := uc.Read(buf); err != nil {
					return
				}
				got.Add(1)
			}
		}()
	}
	if err := cc.Expect(control.TypeReady, nil, 5*time.Second); err != nil {
		return err
	}
	cc.Send(control.TypeStart, struct{}{})
	err = cc.Expect(control.TypeResult, nil, length+30*time.Second)
	fmt.Printf("datagrams received: %d\n", got.Load())
	return err
}

// noread asks for TCP_BIDIR -P 32 -i 0.01, keeps its data connections
// going and never reads its control connection; a legitimate client
// probes the server every second until its test runs.
func noread(srv *server, length time.Duration) error {
	cc, err := hello(srv.addr)
	if err != nil {
		return err
	}
	defer cc.Close()
	sp := spec.Default()
	sp.Kind, sp.Parallel, sp.Interval, sp.Duration = spec.TCPBidir, 32, 10*time.Millisecond, length
	// It says it takes the intervals as they come (a server that keeps
	// them for its result refuses 66,000 records), then does not.
	if err := cc.Send(control.TypeTest, control.TestRequest{Spec: sp, StreamedIntervals: true}); err != nil {
		return err
	}
	var acc control.Accepted
	if err := cc.Expect(control.TypeAccepted, &acc, 5*time.Second); err != nil {
		return err
	}
	for _, st := range sp.Streams() {
		c, err := net.Dial("tcp", srv.addr)
		if err != nil {
			return err
		}
		defer c.Close()
		control.WriteDataHeader(c, acc.Token, st.ID)
		go io.Copy(io.Discard, c)
		if st.Dir == spec.ClientToServer {
			go func() {
				b := make([]byte, 64<<10)
				for {
					if _, err := c.Write(b); err != nil {
						return
					}
				}
			}()
		}
	}
	if err := cc.Expect(control.TypeReady, nil, 5*time.Second); err != nil {
		return err
	}
	requested := time.Now()
	cc.Send(control.TypeStart, struct{}{})
	// From here on the control connection is never read.
	refused := 0
	short := spec.Default()
	short.Duration = 200 * time.Millisecond
	for time.Since(requested) < 5*time.Minute {
		time.Sleep(time.Second)
		if err := runClient(srv.addr, short); err == nil {
			fmt.Printf("slot busy for %v after start (test length %v); %d probes refused before\n", time.Since(requested).Round(100*time.Millisecond), length, refused)
			return nil
		}
		refused++
	}
	return fmt.Errorf("slot still busy after 5 min; %d probes refused", refused)
}
