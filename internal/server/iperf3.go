package server

import (
	"context"
	"net"
	"sync"

	"wirespeed/internal/control"
	"wirespeed/internal/iperf3"
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
			Logger:           s.log,
			HandshakeTimeout: s.cfg.HandshakeTimeout,
			StreamsTimeout:   s.cfg.StreamsTimeout,
			// An iperf3 test takes a test slot like a wirespeed session.
			Admit: func() (func(), bool) {
				if n := s.active.Add(1); int(n) > s.cfg.MaxTests {
					s.active.Add(-1)
					return nil, false
				}
				return func() { s.active.Add(-1) }, true
			},
		})
	})
	return s.ip3.srv
}

// sniff takes the connections the preamble switch does not serve: iperf3
// clients (unless the server speaks only wirespeed), and wirespeed's when
// it speaks only iperf3. It reports whether it took c.
func (s *Server) sniff(ctx context.Context, c net.Conn, magic [4]byte) bool {
	seq := s.ip3.seqOf(c)
	switch {
	case s.cfg.Speaks != WirespeedOnly && iperf3.LooksLikeCookie(magic[:]):
		s.ip3Server().Handle(ctx, c, magic[:], seq)
		return true
	case s.cfg.Speaks == Iperf3Only && (magic == control.ControlMagic || magic == control.DataMagic):
		s.log.Info("wirespeed client refused: this server speaks only iperf3 (--iperf3-only)", "peer", c.RemoteAddr().String())
		c.Close()
		return true
	}
	return false
}
