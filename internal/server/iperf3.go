package server

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"time"

	"wirespeed/internal/control"
	"wirespeed/internal/iperf3"
	"wirespeed/internal/spec"
)

// Protocols chooses what the server speaks on its port.
type Protocols int

// The choices: both by default, told apart by the first bytes a client
// sends (wirespeed's "WSPD"/"WSDT", iperf3's cookie of [a-z2-7]).
const (
	Both Protocols = iota
	WirespeedOnly
	Iperf3Only
)

// iperf3Hook is the server's iperf3 side: the iperf3 server, made on
// first use, and the accept order of recent connections (an iperf3
// test's streams are told apart by the order the client opened them,
// which the connections' own goroutines could reorder).
type iperf3Hook struct {
	once sync.Once
	srv  *iperf3.Server

	mu   sync.Mutex
	next uint64
	ring [256]acceptRec
}

type acceptRec struct {
	c   net.Conn
	seq uint64
}

// accepted notes c's place in the accept order.
func (h *iperf3Hook) accepted(c net.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	h.ring[h.next%uint64(len(h.ring))] = acceptRec{c, h.next}
}

// seqOf returns c's place in the accept order and forgets it; 0 when it
// was forgotten already (more than the ring's size accepted since).
func (h *iperf3Hook) seqOf(c net.Conn) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.ring {
		if h.ring[i].c == c {
			seq := h.ring[i].seq
			h.ring[i] = acceptRec{}
			return seq
		}
	}
	return 0
}

func (s *Server) ip3Server() *iperf3.Server {
	s.ip3.once.Do(func() {
		s.ip3.srv = iperf3.NewServer(iperf3.ServerConfig{
			Logger: s.log,
			Refused: func(log *slog.Logger, reason, msg string, args ...any) {
				s.refused(log, slog.LevelInfo, reason, msg, args...)
			},
			HandshakeTimeout: s.cfg.HandshakeTimeout,
			StreamsTimeout:   s.cfg.StreamsTimeout,
			// A byte or block count test ends at the longest test the
			// server allows (--max-duration).
			MaxTestLength: s.admission().MaxDuration,
			// An iperf3 test takes a test slot like a wirespeed session.
			Limit: s.iperf3Limit,
			// And the server's memory, with wirespeed's tests.
			Reserve: func(p iperf3.Params) (func(), string) {
				release, msg := s.reserveMemory(iperf3Memory(p))
				if msg != "" {
					s.countRefused(refusedMemory)
				}
				return release, msg
			},
			// serve -1 counts an iperf3 client's test as its one.
			// /metrics counts an iperf3 client's test and its bytes
			// with wirespeed's: they are the server's load alike.
			OnDone: func(sum iperf3.Summary) {
				m := s.metrics()
				m.moved("received", sum.Received)
				m.moved("sent", sum.Sent)
				if sum.Err != nil {
					m.testFailed("stream")
				} else {
					m.testServed("ok")
				}
				s.served()
			},
			Admit: func() (func(), bool) {
				if n := s.active.Add(1); int(n) > s.cfg.MaxTests {
					s.active.Add(-1)
					return nil, false
				}
				s.metrics().testStarted()
				return func() { s.metrics().testEnded(); s.active.Add(-1) }, true
			},
		})
	})
	return s.ip3.srv
}

// sniff takes the connections the preamble switch does not serve: iperf3
// clients (unless the server speaks only wirespeed), and wirespeed's when
// it speaks only iperf3. It reports whether it took c.
func (s *Server) sniff(ctx context.Context, c net.Conn, magic [4]byte, deadline time.Time) bool {
	seq := s.ip3.seqOf(c)
	switch {
	case iperf3.LooksLikeCookie(magic[:]) && (s.cfg.Auth.PSK != nil || s.cfg.Auth.TLS != nil):
		// iperf3 cannot prove a pre-shared key nor speak TLS: a server
		// that requires either serves no iperf3 client.
		s.refused(s.log, slog.LevelInfo, "iperf3_unauthenticated", "iperf3 client refused: this server requires authentication (--psk-file, --tls-cert), which iperf3 cannot provide", "peer", c.RemoteAddr().String())
		c.SetWriteDeadline(time.Now().Add(time.Second))
		c.Write([]byte{0xff}) // iperf3's ACCESS_DENIED state, -1
		c.Close()
		if m := s.metrics(); m != nil {
			m.authFailure("iperf3")
		}
		return true
	case s.cfg.Speaks != WirespeedOnly && iperf3.LooksLikeCookie(magic[:]):
		s.ip3Server().HandleUntil(ctx, c, magic[:], seq, deadline)
		return true
	case s.cfg.Speaks == Iperf3Only && (magic == control.ControlMagic || magic == control.DataMagic):
		s.refused(s.log, slog.LevelInfo, "iperf3_only", "wirespeed client refused: this server speaks only iperf3 (--iperf3-only)", "peer", c.RemoteAddr().String())
		c.Close()
		return true
	}
	return false
}

// iperf3Limit applies the server's test limits to an iperf3 client's
// parameters: the same duration, parallelism and UDP rate limits as for a
// wirespeed client.
func (s *Server) iperf3Limit(p iperf3.Params) string {
	t := spec.Default()
	t.Kind = spec.TCPStream
	if p.UDP {
		t.Kind = spec.UDPStream
		t.RateBitsPerSecond = float64(p.Bandwidth)
	}
	t.Reverse = p.Reverse || p.Bidirectional
	t.Parallel = max(p.Parallel, 1)
	t.Duration = time.Duration(p.Time) * time.Second
	t.Omit = time.Duration(p.Omit) * time.Second
	t.TOS = p.TOS
	// The iperf3 server keeps no wirespeed interval records.
	if _, msg := s.testLimit(t, testCost{buffers: iperf3Memory(p)}, true); msg != "" {
		return msg
	}
	return ""
}
