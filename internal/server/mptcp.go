package server

import (
	"io"
	"log/slog"
	"net"
	"time"

	"wirespeed/internal/control"
)

// A test with --mptcp (spec.Test.MPTCP) takes its TCP data connections
// on an MPTCP listener of its own (openDataPath, engine.ListenMPTCP),
// whose port the accepted message gives as the data port: the server's
// own port stays plain TCP (cli's listenTCP says why). acceptMPTCP hands
// each connection to the same pairing as the server's port does
// (Server.data). A server that predates --mptcp ignores the field and
// gives its own port: the client's connections fall back to TCP there,
// and the result says so.

// acceptMPTCP accepts data connections on ln until it is closed (the
// test's data path closes it when the test ends). Each connection has
// the handshake timeout to send its data header.
func (s *Server) acceptMPTCP(ln *net.TCPListener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			c.SetDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
			var magic [4]byte
			if _, err := io.ReadFull(c, magic[:]); err != nil || magic != control.DataMagic {
				s.refused(s.log, slog.LevelInfo, "bad_data_header", "not a data connection on a test's MPTCP port, closed", "peer", c.RemoteAddr().String())
				c.Close()
				return
			}
			s.data(c)
		}()
	}
}
