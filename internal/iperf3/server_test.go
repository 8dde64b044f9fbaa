package iperf3

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"wirespeed/internal/testkit"
)

// testServer serves iperf3 on a loopback port with short timeouts.
type testServer struct {
	addr string
	done chan Summary
	stop func()
}

func startTestServer(t *testing.T, busy bool) *testServer {
	t.Helper()
	ln := testkit.Listen(t)
	ts := &testServer{addr: ln.Addr().String(), done: make(chan Summary, 16)}
	cfg := ServerConfig{
		Logger:           slog.New(slog.NewTextHandler(io.Discard, nil)),
		HandshakeTimeout: 300 * time.Millisecond,
		ReadTimeout:      300 * time.Millisecond,
		StreamsTimeout:   300 * time.Millisecond,
		OnDone:           func(s Summary) { ts.done <- s },
	}
	if busy {
		cfg.Admit = func() (func(), bool) { return nil, false }
	}
	srv := NewServer(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var seq uint64
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			seq++
			wg.Add(1)
			go func(seq uint64) {
				defer wg.Done()
				srv.Handle(ctx, c, nil, seq)
			}(seq)
		}
	}()
	ts.stop = func() {
		cancel()
		ln.Close()
		wg.Wait()
	}
	return ts
}

// fakeClient speaks iperf3's client side by hand.
type fakeClient struct {
	t      *testing.T
	c      net.Conn
	cookie Cookie
}

func dialFake(t *testing.T, addr string) *fakeClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &fakeClient{t: t, c: c, cookie: NewCookie()}
}

func (f *fakeClient) write(b []byte) {
	f.t.Helper()
	if _, err := f.c.Write(b); err != nil {
		f.t.Fatalf("write: %v", err)
	}
}

func (f *fakeClient) writeJSON(s string) {
	var l [4]byte
	binary.BigEndian.PutUint32(l[:], uint32(len(s)))
	f.write(append(l[:], s...))
}

// expect reads the server's next state.
func (f *fakeClient) expect(want State) {
	f.t.Helper()
	f.c.SetReadDeadline(time.Now().Add(3 * time.Second))
	var b [1]byte
	if _, err := io.ReadFull(f.c, b[:]); err != nil {
		f.t.Fatalf("read state, want %v: %v", want, err)
	}
	if got := State(int8(b[0])); got != want {
		f.t.Fatalf("server sent %v, want %v", got, want)
	}
}

// expectError reads SERVER_ERROR with iperf3 error code, then the close.
func (f *fakeClient) expectError(code int32) {
	f.t.Helper()
	f.expect(ServerError)
	var b [8]byte
	if _, err := io.ReadFull(f.c, b[:]); err != nil {
		f.t.Fatalf("read SERVER_ERROR codes: %v", err)
	}
	if got := int32(binary.BigEndian.Uint32(b[:4])); got != code {
		f.t.Errorf("SERVER_ERROR code %d, want %d", got, code)
	}
	f.expectClosed()
}

func (f *fakeClient) expectClosed() {
	f.t.Helper()
	f.c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if n, err := f.c.Read(make([]byte, 16)); err != io.EOF {
		f.t.Errorf("server did not close the connection: read %d bytes, %v", n, err)
	}
}

// start takes the fake client to TEST_RUNNING of a one-stream TCP test.
func (f *fakeClient) start(addr string) net.Conn {
	f.t.Helper()
	f.write(f.cookie[:])
	f.expect(ParamExchange)
	f.writeJSON(`{"tcp":true,"omit":0,"time":1,"num":0,"blockcount":0,"parallel":1,"len":1024}`)
	f.expect(CreateStreams)
	d, err := net.Dial("tcp", addr)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { d.Close() })
	if _, err := d.Write(f.cookie[:]); err != nil {
		f.t.Fatal(err)
	}
	f.expect(TestStart)
	f.expect(TestRunning)
	return d
}

// TestServerRefusesBadPeers sends the server what a broken or hostile
// client might: each ends that test with an error, and the server goes on
// serving the next client.
func TestServerRefusesBadPeers(t *testing.T) {
	defer goleak.VerifyNone(t)
	ts := startTestServer(t, false)
	defer ts.stop()
	tests := []struct {
		name string
		run  func(f *fakeClient)
	}{
		{"oversize parameters length", func(f *fakeClient) {
			f.write(f.cookie[:])
			f.expect(ParamExchange)
			f.write([]byte{0x7f, 0xff, 0xff, 0xff})
			f.expectError(errRecvParams)
		}},
		{"negative parameters length", func(f *fakeClient) {
			f.write(f.cookie[:])
			f.expect(ParamExchange)
			f.write([]byte{0xff, 0xff, 0xff, 0xf0})
			f.expectError(errRecvParams)
		}},
		{"type confusion", func(f *fakeClient) {
			f.write(f.cookie[:])
			f.expect(ParamExchange)
			f.writeJSON(`{"tcp":true,"time":1,"parallel":"x"}`)
			f.expectError(errRecvParams)
		}},
		{"huge numbers", func(f *fakeClient) {
			f.write(f.cookie[:])
			f.expect(ParamExchange)
			f.writeJSON(`{"tcp":true,"time":1,"parallel":1,"len":99999999999999999999}`)
			f.expectError(errRecvParams)
		}},
		{"stall in the parameters", func(f *fakeClient) {
			f.write(f.cookie[:])
			f.expect(ParamExchange)
			f.write([]byte{0, 0, 0, 100, '{'})
			f.expectError(errRecvParams)
		}},
		{"stall after the cookie", func(f *fakeClient) {
			f.write(f.cookie[:])
			f.expect(ParamExchange)
			f.expectError(errRecvParams)
		}},
		{"stall in the cookie", func(f *fakeClient) {
			f.write(f.cookie[:10])
			f.expectClosed()
		}},
		{"bad cookie", func(f *fakeClient) {
			f.write([]byte("abcdefghijklmnopqrstuvwxyz234567ABCD\x00"))
			f.expectClosed()
		}},
		// iperf3 -n 2 -P 4 -R: shares of 1, 1, 0 and 0 bytes, and a
		// share of 0 would be no limit (TestCheckAmount).
		{"fewer bytes than streams from the server", func(f *fakeClient) {
			f.write(f.cookie[:])
			f.expect(ParamExchange)
			f.writeJSON(`{"tcp":true,"time":0,"num":2,"parallel":4,"reverse":true,"len":1024}`)
			f.expectError(errRecvParams)
		}},
		// 3689348814741910324 blocks of 5 bytes: 2^64+4 bytes, which
		// int64 wraps to 4.
		{"block count whose bytes overflow", func(f *fakeClient) {
			f.write(f.cookie[:])
			f.expect(ParamExchange)
			f.writeJSON(`{"tcp":true,"time":0,"blockcount":3689348814741910324,"parallel":1,"reverse":true,"len":5}`)
			f.expectError(errRecvParams)
		}},
		{"missing streams", func(f *fakeClient) {
			f.write(f.cookie[:])
			f.expect(ParamExchange)
			f.writeJSON(`{"tcp":true,"time":1,"parallel":2,"len":1024}`)
			f.expect(CreateStreams)
			f.expectError(errAcceptStream)
		}},
		{"wrong state during the test", func(f *fakeClient) {
			f.start(ts.addr)
			f.write([]byte{byte(ParamExchange)})
			f.expectError(errCtrlMessage)
		}},
		{"unknown state during the test", func(f *fakeClient) {
			f.start(ts.addr)
			f.write([]byte{0x80})
			f.expectError(errCtrlMessage)
		}},
		{"oversize results", func(f *fakeClient) {
			f.start(ts.addr)
			f.write([]byte{byte(TestEnd)})
			f.expect(ExchangeResults)
			f.write([]byte{0x00, 0x40, 0x00, 0x01})
			f.expectError(errRecvResults)
		}},
		{"results type confusion", func(f *fakeClient) {
			f.start(ts.addr)
			f.write([]byte{byte(TestEnd)})
			f.expect(ExchangeResults)
			f.writeJSON(`{"cpu_util_total":"x","cpu_util_user":0,"cpu_util_system":0,"sender_has_retransmits":0,"streams":[]}`)
			f.expectError(errRecvResults)
		}},
		{"stall before the results", func(f *fakeClient) {
			f.start(ts.addr)
			f.write([]byte{byte(TestEnd)})
			f.expect(ExchangeResults)
			f.expectError(errRecvResults)
		}},
		{"client terminates", func(f *fakeClient) {
			f.start(ts.addr)
			f.write([]byte{byte(ClientTerminate)})
			f.expectClosed()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(dialFake(t, ts.addr))
		})
	}
	// A well-behaved client is still served after all that.
	f := dialFake(t, ts.addr)
	d := f.start(ts.addr)
	d.Write(make([]byte, 4096))
	time.Sleep(50 * time.Millisecond)
	f.write([]byte{byte(TestEnd)})
	f.expect(ExchangeResults)
	f.writeJSON(`{"cpu_util_total":1,"cpu_util_user":0.5,"cpu_util_system":0.5,"sender_has_retransmits":0,"streams":[{"id":1,"bytes":4096,"retransmits":0,"jitter":0,"errors":0,"packets":0}]}`)
	f.c.SetReadDeadline(time.Now().Add(3 * time.Second))
	var lb [4]byte
	if _, err := io.ReadFull(f.c, lb[:]); err != nil {
		t.Fatalf("read the server's results: %v", err)
	}
	b := make([]byte, binary.BigEndian.Uint32(lb[:]))
	if _, err := io.ReadFull(f.c, b); err != nil {
		t.Fatal(err)
	}
	r, err := ParseResults(b)
	if err != nil {
		t.Fatalf("server's results: %v\n%s", err, b)
	}
	if len(r.Streams) != 1 || r.Streams[0].ID != 1 || r.Streams[0].Bytes != 4096 {
		t.Errorf("server's results %+v, want stream 1 with the 4096 bytes sent", r)
	}
	f.expect(DisplayResults)
	f.write([]byte{byte(IperfDone)})
	f.c.Close()
	d.Close()
	for {
		select {
		case s := <-ts.done:
			if s.Err != nil {
				continue // one of the refused peers above
			}
			// The summary holds what the client sent and what it said it
			// sent: both planted above.
			if s.Received != 4096 || len(s.Client) != 1 || s.Client[0].ID != 1 || s.Client[0].Bytes != 4096 {
				t.Errorf("summary: received %d, the client's figures %+v; want 4096 bytes received and stream 1 with 4096 bytes", s.Received, s.Client)
			}
			return
		case <-time.After(5 * time.Second):
			t.Fatal("the good test never ended")
		}
	}
}

func TestServerBusy(t *testing.T) {
	ts := startTestServer(t, true)
	defer ts.stop()
	f := dialFake(t, ts.addr)
	f.write(f.cookie[:])
	f.expect(AccessDenied)
	f.expectClosed()
}

// TestCheckAmount: the amounts a client asks the server to send that
// would leave a stream unlimited or wrap around are refused; the shares
// of those that pass are worked by hand.
func TestCheckAmount(t *testing.T) {
	tests := []struct {
		name   string
		p      Params
		shares []int64 // of the server's sending streams; nil when refused
	}{
		// 10 bytes over 4 streams: 2 each and 2 left over, one more for
		// each of the first two.
		{"bytes over streams", Params{TCP: true, Num: 10, Parallel: 4, Reverse: true, Len: 1024}, []int64{3, 3, 2, 2}},
		// 3 blocks of 1000 bytes over 2 streams: 1500 each.
		{"blocks over streams", Params{TCP: true, BlockCount: 3, Parallel: 2, Reverse: true, Len: 1000}, []int64{1500, 1500}},
		// UDP: 2000 bytes over 2 streams, 1000 each, rounded up to whole
		// datagrams of 1472: 1472 each.
		{"udp datagrams", Params{UDP: true, Num: 2000, Parallel: 2, Reverse: true, Len: 1472}, []int64{1472, 1472}},
		// 4 bytes over 4 streams: the least that passes.
		{"a byte each", Params{TCP: true, Num: 4, Parallel: 4, Reverse: true, Len: 1024}, []int64{1, 1, 1, 1}},
		// iperf3 -n 2 -P 4 -R: 1, 1, 0, 0 bytes, and 0 is no limit.
		{"fewer bytes than streams", Params{TCP: true, Num: 2, Parallel: 4, Reverse: true, Len: 1024}, nil},
		// --bidir: the server sends on 4 streams too.
		{"fewer bytes than streams, bidir", Params{TCP: true, Num: 3, Parallel: 4, Bidirectional: true, Len: 1024}, nil},
		// 3689348814741910324 * 5 = 2^64 + 4: int64 wraps to 4 bytes.
		{"block count overflows", Params{TCP: true, BlockCount: 3689348814741910324, Parallel: 1, Reverse: true, Len: 5}, nil},
		// 2^50 bytes is spec.MaxAmount; one more is refused.
		{"amount over the bound", Params{TCP: true, Num: 1<<50 + 1, Parallel: 1, Reverse: true, Len: 1024}, nil},
		// The client sends and counts: the server's check does not apply.
		{"client sends", Params{TCP: true, Num: 2, Parallel: 4, Len: 1024}, []int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkAmount(tt.p)
			if tt.shares == nil {
				if err == nil {
					t.Fatalf("checkAmount(%+v) passed; shares would be %d, %d", tt.p, amountShare(tt.p, 0), amountShare(tt.p, tt.p.Parallel-1))
				}
				t.Logf("refused: %v", err)
				return
			}
			if err != nil {
				t.Fatalf("checkAmount: %v", err)
			}
			for i, want := range tt.shares {
				if got := amountShare(tt.p, i); got != want {
					t.Errorf("stream %d: share %d bytes, want %d", i, got, want)
				}
			}
		})
	}
	// What the check prevents, worked by hand: without it, the shares.
	p := Params{TCP: true, Num: 2, Parallel: 4, Reverse: true, Len: 1024}
	for i, want := range []int64{1, 1, 0, 0} {
		if got := amountShare(p, i); got != want {
			t.Errorf("-n 2 -P 4: stream %d share %d, want %d", i, got, want)
		}
	}
	p = Params{TCP: true, BlockCount: 3689348814741910324, Parallel: 1, Reverse: true, Len: 5}
	if got := amountShare(p, 0); got != 4 {
		t.Errorf("-k 3689348814741910324 -l 5: share %d, want the wrapped 4", got)
	}
}
