package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"wirespeed/internal/control"
)

// TLS on the one port. The server reads the first four bytes of every
// connection to tell control (WSPD) from data (WSDT). A TLS ClientHello
// starts with a handshake record header: content type 0x16, then the
// record version's major byte 0x03. Neither preamble starts that way, so
// the same four bytes tell a TLS control connection apart too: the server
// replays them into crypto/tls, and inside TLS the client sends WSPD as
// usual. Data connections stay plain TCP; the token that admits them
// travels only inside the control connection.

// isTLSRecord reports whether the first bytes of a connection are a TLS
// handshake record.
func isTLSRecord(first [4]byte) bool { return first[0] == 0x16 && first[1] == 0x03 }

// handleTLS runs the TLS handshake on a connection whose first bytes were
// already read, then serves the control session inside it. The handshake
// and the preamble must arrive within the handshake deadline handle set.
func (s *Server) handleTLS(ctx context.Context, c net.Conn, first [4]byte, deadline time.Time) {
	peer := c.RemoteAddr().String()
	if s.cfg.Auth.TLS == nil {
		s.metrics().connRefused("tls_not_configured")
		s.refused(s.log, slog.LevelInfo, "tls_not_configured", "TLS connection closed: this server has no certificate (serve --tls-cert, --tls-key)", "peer", peer)
		c.Close()
		return
	}
	cfg := s.cfg.Auth.TLS.Clone()
	if cfg.MinVersion < tls.VersionTLS13 {
		cfg.MinVersion = tls.VersionTLS13
	}
	tc := tls.Server(&prefixConn{Conn: c, prefix: first[:]}, cfg)
	hctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		s.metrics().authFailure("tls_handshake")
		s.refused(s.log, slog.LevelWarn, "tls_handshake", "TLS handshake failed", "peer", peer, "err", err)
		c.Close()
		return
	}
	var magic [4]byte
	if _, err := io.ReadFull(tc, magic[:]); err != nil || magic != control.ControlMagic {
		s.metrics().connRefused("unknown_protocol")
		s.refused(s.log, slog.LevelInfo, "tls_no_preamble", "TLS connection without a control preamble, closed", "peer", peer, "first_bytes", fmt.Sprintf("%q", magic[:]), "err", err)
		tc.Close()
		return
	}
	s.session(ctx, control.NewConn(tc, s.cfg.MaxFrame), deadline)
}

// prefixConn is a connection whose first bytes were read already: Read
// returns them again before reading on.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.prefix) > 0 {
		n := copy(b, p.prefix)
		p.prefix = p.prefix[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// CloseWrite lets tls.Conn.CloseWrite reach the TCP connection.
func (p *prefixConn) CloseWrite() error {
	if cw, ok := p.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
