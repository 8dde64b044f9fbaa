package iperf3

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"
)

// readConn is a net.Conn whose reads come from r, counted; deadlines
// are accepted and ignored (the reader runs out instead of timing out).
type readConn struct {
	net.Conn
	r *bytes.Reader
	n int
}

func (c *readConn) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
func (c *readConn) SetReadDeadline(time.Time) error  { return nil }
func (c *readConn) SetWriteDeadline(time.Time) error { return nil }

// FuzzReadJSON feeds iperf3's control reader what a peer could send:
// a length-prefixed JSON message (readJSON) and, on the same bytes, a
// state byte with SERVER_ERROR's two codes (readState). The reader must
// read no more than the length it checked against its bound, and return
// exactly the announced bytes.
func FuzzReadJSON(f *testing.F) {
	for _, s := range []string{params312TCP, params312UDP, params312Bidi, results312Server} {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(s)))
		f.Add(append(b, s...))
	}
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, '{'})
	f.Add([]byte{0, 0, 0, 10, '{', '}'})
	f.Add([]byte{0xfe, 0, 0, 0, 101, 0, 0, 0, 0})
	f.Add([]byte{0xfe, 0, 0})
	f.Add([]byte{9})
	const max = 4096
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &readConn{r: bytes.NewReader(data)}
		b, err := conn{c}.readJSON(max, time.Second)
		if c.n > 4+max {
			t.Fatalf("read %d bytes with a bound of %d", c.n, max)
		}
		if len(data) >= 4 {
			n := binary.BigEndian.Uint32(data)
			if (n == 0 || n > max) && c.n > 4 {
				t.Fatalf("read %d bytes of a message of %d bytes, out of bounds", c.n, n)
			}
			if err == nil && (int(n) != len(b) || !bytes.Equal(b, data[4:4+n])) {
				t.Fatalf("announced %d bytes, returned %d other ones", n, len(b))
			}
		}
		if err == nil && len(data) < 4 {
			t.Fatal("accepted a message without its length")
		}

		c = &readConn{r: bytes.NewReader(data)}
		s, err := conn{c}.readState(time.Second)
		if len(data) == 0 {
			if err == nil {
				t.Fatal("read a state from nothing")
			}
			return
		}
		if s != State(int8(data[0])) {
			t.Fatalf("state %v from byte %#x", s, data[0])
		}
		var pe *PeerError
		switch {
		case s != ServerError && (err != nil || c.n != 1):
			t.Fatalf("state %v: read %d bytes, err %v", s, c.n, err)
		case s == ServerError && len(data) >= 9:
			if !errors.As(err, &pe) || pe.Code != int32(binary.BigEndian.Uint32(data[1:])) || pe.Errno != int32(binary.BigEndian.Uint32(data[5:])) {
				t.Fatalf("SERVER_ERROR %x read as %v", data[:9], err)
			}
			_ = pe.Error()
		case s == ServerError && err == nil:
			t.Fatal("a truncated SERVER_ERROR read without error")
		}
	})
}

// FuzzParseCookie checks the cookie parser and the sniffer against the
// cookie's definition written out here: 36 characters of [a-z2-7] then a
// NUL. LooksLikeCookie must accept every prefix of a cookie.
func FuzzParseCookie(f *testing.F) {
	ck := NewCookie()
	f.Add(ck[:])
	f.Add(ck[:4])
	f.Add([]byte("WSPD"))
	f.Add([]byte("WSDT"))
	f.Add(append(bytes.Repeat([]byte{'a'}, 36), 'a'))
	f.Add(append(bytes.Repeat([]byte{'1'}, 36), 0))
	f.Add([]byte{0x16, 3, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		valid := len(b) == CookieLen && b[CookieLen-1] == 0
		prefix := len(b) <= CookieLen
		for i, c := range b {
			ok := (c >= 'a' && c <= 'z') || (c >= '2' && c <= '7')
			if i < CookieLen-1 && !ok {
				valid, prefix = false, false
			}
			if i == CookieLen-1 && c != 0 {
				prefix = false
			}
		}
		ck, err := ParseCookie(b)
		if valid != (err == nil) {
			t.Fatalf("ParseCookie(%q) = %v, want valid %v", b, err, valid)
		}
		if err == nil && !bytes.Equal(ck[:], b) {
			t.Fatalf("cookie %q parsed as %q", b, ck[:])
		}
		if err != nil && !errors.Is(err, ErrProtocol) {
			t.Fatalf("error %v is not ErrProtocol", err)
		}
		// Only the first CookieLen bytes count for the sniffer.
		if prefix != LooksLikeCookie(b) && len(b) <= CookieLen {
			t.Fatalf("LooksLikeCookie(%q) = %v, want %v", b, !prefix, prefix)
		}
	})
}
