package server_test

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// junkHold is how long a bad client keeps its connection unless the
// server closes it first: longer than the server may take to drop it, so
// that only the server's deadlines can end it in time.
const junkHold = 12 * time.Second

// junk is one kind of bad client. It gets a fresh connection to the server
// and may keep it for at most a few seconds.
type junk struct {
	name string
	do   func(c *net.TCPConn, r *rand.Rand)
}

func frameOf(typ string, body any) []byte {
	b, _ := json.Marshal(body)
	m, _ := json.Marshal(control.Message{Type: typ, Body: b})
	out := binary.BigEndian.AppendUint32(nil, uint32(len(m)))
	return append(out, m...)
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// dribble writes b one byte at a time, every gap, while the connection
// takes it.
func dribble(c net.Conn, b []byte, gap time.Duration) {
	for i := range b {
		c.SetWriteDeadline(time.Now().Add(time.Second))
		if _, err := c.Write(b[i : i+1]); err != nil {
			return
		}
		time.Sleep(gap)
	}
}

// hold reads until the server closes or after d.
func hold(c net.Conn, d time.Duration) {
	c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

func authOffer() []byte {
	h := control.NewHello("junk", "")
	h.Auth = &control.AuthHello{Scheme: control.AuthScheme, Nonce: control.NewNonce()}
	return append([]byte("WSPD"), frameOf(control.TypeHello, h)...)
}

func junkKinds(tlsAddr bool) []junk {
	kinds := []junk{
		{"random bytes, then close", func(c *net.TCPConn, r *rand.Rand) { c.Write(randBytes(r, 1+r.IntN(2000))) }},
		{"random bytes, then wait", func(c *net.TCPConn, r *rand.Rand) {
			c.Write(randBytes(r, 1+r.IntN(100)))
			hold(c, junkHold)
		}},
		{"silent", func(c *net.TCPConn, r *rand.Rand) { hold(c, junkHold) }},
		{"half-closed at once", func(c *net.TCPConn, r *rand.Rand) {
			c.CloseWrite()
			hold(c, junkHold)
		}},
		{"reset at once", func(c *net.TCPConn, r *rand.Rand) { c.SetLinger(0) }},
		{"reset after half a preamble", func(c *net.TCPConn, r *rand.Rand) {
			c.Write([]byte("WSP"))
			time.Sleep(time.Duration(r.IntN(200)) * time.Millisecond)
			c.SetLinger(0)
		}},
		{"slow preamble", func(c *net.TCPConn, r *rand.Rand) { dribble(c, []byte("WSPD"), 500*time.Millisecond) }},
		{"slow hello", func(c *net.TCPConn, r *rand.Rand) { dribble(c, authOffer(), 50*time.Millisecond) }},
		{"slow random after the preamble", func(c *net.TCPConn, r *rand.Rand) {
			c.Write([]byte("WSPD"))
			dribble(c, randBytes(r, 60), 50*time.Millisecond)
		}},
		{"preamble, then garbage", func(c *net.TCPConn, r *rand.Rand) {
			c.Write(append([]byte("WSPD"), randBytes(r, 1+r.IntN(500))...))
			hold(c, junkHold)
		}},
		{"preamble, huge frame", func(c *net.TCPConn, r *rand.Rand) {
			c.Write([]byte("WSPD\xff\xff\xff\xff{"))
			hold(c, junkHold)
		}},
		{"preamble, frame of junk JSON", func(c *net.TCPConn, r *rand.Rand) {
			body := []byte(`{"type":"hello","body":{"protocol":` + fmt.Sprint(r.Int64()) + `,"auth":{"nonce":[1,2]}}}`)
			c.Write(append(append([]byte("WSPD"), binary.BigEndian.AppendUint32(nil, uint32(len(body)))...), body...))
			hold(c, junkHold)
		}},
		{"hello, then garbage instead of a proof", func(c *net.TCPConn, r *rand.Rand) {
			c.Write(authOffer())
			time.Sleep(100 * time.Millisecond)
			c.Write(randBytes(r, 1+r.IntN(300)))
			hold(c, junkHold)
		}},
		{"hello, then a test instead of a proof", func(c *net.TCPConn, r *rand.Rand) {
			c.Write(authOffer())
			c.Write(frameOf(control.TypeTest, control.TestRequest{Spec: spec.Default()}))
			hold(c, junkHold)
		}},
		{"hello, then silence", func(c *net.TCPConn, r *rand.Rand) {
			c.Write(authOffer())
			hold(c, junkHold)
		}},
		{"data header with a random token", func(c *net.TCPConn, r *rand.Rand) {
			control.WriteDataHeader(c, control.NewToken(), 1+r.IntN(4))
			hold(c, junkHold)
		}},
		{"half a data header", func(c *net.TCPConn, r *rand.Rand) {
			c.Write(append([]byte("WSDT"), randBytes(r, r.IntN(19))...))
			hold(c, junkHold)
		}},
		{"TLS record of garbage", func(c *net.TCPConn, r *rand.Rand) {
			c.Write(append([]byte{0x16, 0x03, 0x01}, randBytes(r, 1+r.IntN(300))...))
			hold(c, junkHold)
		}},
	}
	if tlsAddr {
		kinds = append(kinds,
			junk{"TLS handshake, then garbage", func(c *net.TCPConn, r *rand.Rand) {
				tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true})
				tc.SetDeadline(time.Now().Add(3 * time.Second))
				if tc.Handshake() == nil {
					tc.Write(randBytes(r, 1+r.IntN(300)))
				}
				hold(tc, junkHold)
			}},
			junk{"TLS handshake, then silence", func(c *net.TCPConn, r *rand.Rand) {
				tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true})
				tc.SetDeadline(time.Now().Add(3 * time.Second))
				tc.Handshake()
				hold(tc, junkHold)
			}},
			junk{"TLS, then a plain data header", func(c *net.TCPConn, r *rand.Rand) {
				tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true})
				tc.SetDeadline(time.Now().Add(3 * time.Second))
				if tc.Handshake() == nil {
					control.WriteDataHeader(tc, control.NewToken(), 1)
				}
				hold(tc, junkHold)
			}},
		)
	}
	return kinds
}

// TestJunkConnections opens hundreds of bad connections at once (random
// bytes, half-open, silent, slow writers, resets, valid preambles followed
// by garbage), runs a real test while they are still open, and checks
// that the server drops them all: its goroutines and descriptors come back
// to where they were before.
func TestJunkConnections(t *testing.T) {
	pki := newPKI(t)
	for _, withTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", withTLS), func(t *testing.T) {
			auth := server.Auth{PSK: testKey}
			ccfg := client.Config{Addr: "", Security: client.Security{PSK: testKey}}
			if withTLS {
				auth.TLS = &tls.Config{Certificates: []tls.Certificate{pki.cert}}
				ccfg.TLS, _ = client.TLSConfigCA(pki.caPEM)
			}
			srv := startServer(t, server.Config{HandshakeTimeout: time.Second, StreamsTimeout: 2 * time.Second, Auth: auth, Admission: server.Admission{MaxConnsPerAddr: 4}})
			ccfg.Addr = srv.addr
			// The baseline: a served test, then nothing running.
			warm := mustDial(t, ccfg)
			if _, err := warm.Run(context.Background(), shortSpec(spec.TCPStream, 1)); err != nil {
				t.Fatal(err)
			}
			warm.Close()
			time.Sleep(200 * time.Millisecond)
			base := goleak.IgnoreCurrent()
			fds := openFDs(t)

			kinds := junkKinds(withTLS)
			const n = 400
			started := time.Now()
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(i), 7))
					// Junk comes from many loopback addresses, as from many
					// hosts; the real client below uses 127.0.0.1.
					d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, byte(1+i/250), byte(2+i%250))}}
					c, err := d.Dial("tcp", srv.addr)
					if err != nil {
						return
					}
					defer c.Close()
					kinds[i%len(kinds)].do(c.(*net.TCPConn), r)
				}()
			}

			// While the junk is still there, a real test runs.
			time.Sleep(300 * time.Millisecond)
			c := mustDial(t, ccfg)
			res, err := c.Run(context.Background(), shortSpec(spec.TCPBidir, 2))
			if err != nil {
				t.Fatalf("real test among junk connections: %v", err)
			}
			if res.Interrupted || res.Summary.Bytes == 0 {
				t.Errorf("real test: interrupted %v, %d bytes", res.Interrupted, res.Summary.Bytes)
			}
			c.Close()

			// The server drops every bad connection by its deadlines, well
			// before the bad clients would give up (junkHold): everything
			// the junk started, on both ends, has ended.
			testkit.CheckNoLeaks(t, time.Until(started.Add(junkHold-2*time.Second)), base)
			waitFDs(t, fds)
			wg.Wait()
		})
	}
}

// TestRefusedConnectionsSampled: 200 connections of an unknown protocol
// write 3 log lines of their own (the sampling's burst per reason and
// minute) and one summary line counting the other 197, not 200 lines.
func TestRefusedConnectionsSampled(t *testing.T) {
	srv := startServer(t, server.Config{})
	const n = 200
	for i := range n {
		c, err := net.Dial("tcp", srv.addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		c.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
		if closed, _ := closedByServer(c, 5*time.Second); !closed {
			t.Fatalf("connection %d not closed", i)
		}
		c.Close()
	}
	srv.stop() // the summary of the interval so far is written on the way out
	logs := srv.logs.String()
	if got := strings.Count(logs, "unknown protocol, connection closed"); got != 3 {
		t.Errorf("%d lines for %d connections of an unknown protocol, want 3:\n%s", got, n, logs)
	}
	srv.logs.waitLog(t, "refused connections not logged one by one", "count=197", "by_reason.unknown_protocol=197")
}
