// Package iperf3 speaks iperf3's protocol (3.x): as a client, it runs
// wirespeed's stream tests against an unmodified iperf3 server; as a
// server, it serves unmodified iperf3 clients on wirespeed's port. It owns
// the cookie, the control states, the framing of iperf3's JSON messages
// and their strict parsing, and both state machines; the data moves
// through the engine's loops (with iperf3's UDP header).
//
// Everything a peer sends is bounded and validated: a JSON message longer
// than its bound, a state byte out of order, a field of the wrong type or
// out of range, or a peer that stops talking ends that test with an error,
// never the process. Every read has a deadline.
//
// docs/iperf3.md describes the protocol as implemented and where it
// differs from what iperf3's notes say.
package iperf3

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// DefaultPort is iperf3's port.
const DefaultPort = 5201

// CookieLen is the length of the cookie a client sends first on every
// connection: 36 characters of [a-z2-7] and a NUL.
const CookieLen = 37

// cookieChars are the characters of a cookie (base32 in lower case).
const cookieChars = "abcdefghijklmnopqrstuvwxyz234567"

// Cookie identifies one test: its control connection and its streams.
type Cookie [CookieLen]byte

// NewCookie returns a random cookie.
func NewCookie() Cookie {
	var c Cookie
	var r [CookieLen - 1]byte
	rand.Read(r[:]) // never fails (crypto/rand contract since Go 1.24)
	for i, b := range r {
		c[i] = cookieChars[b%32]
	}
	return c
}

func isCookieChar(b byte) bool { return b >= 'a' && b <= 'z' || b >= '2' && b <= '7' }

// LooksLikeCookie reports whether b, the first bytes a client sent (up
// to CookieLen), can start an iperf3 cookie. wirespeed's preambles "WSPD"
// and "WSDT" are upper case and never do.
func LooksLikeCookie(b []byte) bool {
	for i, c := range b {
		if i == CookieLen-1 {
			return c == 0
		}
		if !isCookieChar(c) {
			return false
		}
	}
	return true
}

// ParseCookie checks a whole cookie.
func ParseCookie(b []byte) (Cookie, error) {
	var c Cookie
	if len(b) != CookieLen || !LooksLikeCookie(b) {
		return c, fmt.Errorf("%w: not an iperf3 cookie: %q", ErrProtocol, b)
	}
	copy(c[:], b)
	return c, nil
}

// State is one of iperf3's control states, sent as one signed byte.
type State int8

// The states iperf3 sends on the control connection.
const (
	TestStart       State = 1
	TestRunning     State = 2
	TestEnd         State = 4
	ParamExchange   State = 9
	CreateStreams   State = 10
	ServerTerminate State = 11
	ClientTerminate State = 12
	ExchangeResults State = 13
	DisplayResults  State = 14
	IperfDone       State = 16
	AccessDenied    State = -1
	ServerError     State = -2
)

var stateNames = map[State]string{
	TestStart: "TEST_START", TestRunning: "TEST_RUNNING", TestEnd: "TEST_END",
	ParamExchange: "PARAM_EXCHANGE", CreateStreams: "CREATE_STREAMS",
	ServerTerminate: "SERVER_TERMINATE", ClientTerminate: "CLIENT_TERMINATE",
	ExchangeResults: "EXCHANGE_RESULTS", DisplayResults: "DISPLAY_RESULTS",
	IperfDone: "IPERF_DONE", AccessDenied: "ACCESS_DENIED", ServerError: "SERVER_ERROR",
}

func (s State) String() string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return fmt.Sprintf("unknown state %d", int8(s))
}

// Errors.
var (
	// ErrProtocol is a peer that broke the protocol: a wrong state, a
	// malformed or oversize message.
	ErrProtocol = errors.New("iperf3 protocol error")
	// ErrBusy is an iperf3 server's ACCESS_DENIED: it runs another test.
	ErrBusy = errors.New("the iperf3 server is busy running a test; try again later")
	// ErrUnsupported is a test or an option this implementation does not
	// run with an iperf3 peer. It wraps errors.ErrUnsupported.
	ErrUnsupported = fmt.Errorf("%w with an iperf3 peer", errors.ErrUnsupported)
)

// Message bounds. iperf3 bounds the parameters at 8 KiB itself; results
// grow with the streams (about 200 bytes each) and, when asked, the
// server's output, which wirespeed never asks for.
const (
	MaxParamsLen  = 8 << 10
	MaxResultsLen = 256 << 10
)

// Timeouts of the control connection.
const (
	// ReadTimeout bounds every wait for a peer's message outside the
	// test itself.
	ReadTimeout = 10 * time.Second
	// StreamsTimeout bounds the arrival of all data streams.
	StreamsTimeout = 10 * time.Second
	// TestGrace is how long past the test's planned length a server waits
	// for TEST_END before it gives up on the client.
	TestGrace = 10 * time.Second
)

// iperf3's error codes (the first int32 after SERVER_ERROR) that
// wirespeed sends; the client prints its own text for each.
const (
	errRecvParams   = 114 // "unable to receive parameters from client"
	errRecvResults  = 117 // "unable to receive results"
	errCtrlMessage  = 110 // "received an unknown control message"
	errAcceptStream = 204 // "unable to accept stream connection"
	errInitTest     = 101 // "test initialization failed"
)

// conn is a control connection: states and length-prefixed JSON, every
// read under a deadline.
type conn struct {
	c net.Conn
}

func (c conn) writeState(s State) error {
	c.c.SetWriteDeadline(time.Now().Add(ReadTimeout))
	_, err := c.c.Write([]byte{uint8(s)})
	if err != nil {
		return fmt.Errorf("send %v: %w", s, err)
	}
	return nil
}

// writeServerError sends SERVER_ERROR with iperf3's error code and an
// errno (0 for none).
func (c conn) writeServerError(code, errno int32) error {
	var b [9]byte
	b[0] = 0xfe // SERVER_ERROR, -2
	binary.BigEndian.PutUint32(b[1:5], uint32(code))
	binary.BigEndian.PutUint32(b[5:9], uint32(errno))
	c.c.SetWriteDeadline(time.Now().Add(ReadTimeout))
	_, err := c.c.Write(b[:])
	return err
}

// readState reads one state byte within timeout. SERVER_ERROR is read
// with its two codes and returned as an error.
func (c conn) readState(timeout time.Duration) (State, error) {
	c.c.SetReadDeadline(time.Now().Add(timeout))
	var b [1]byte
	if _, err := io.ReadFull(c.c, b[:]); err != nil {
		return 0, fmt.Errorf("read iperf3 state: %w", err)
	}
	s := State(int8(b[0]))
	if s == ServerError {
		var codes [8]byte
		if _, err := io.ReadFull(c.c, codes[:]); err != nil {
			return s, fmt.Errorf("iperf3 peer sent SERVER_ERROR, then: %w", err)
		}
		code := int32(binary.BigEndian.Uint32(codes[:4]))
		errno := int32(binary.BigEndian.Uint32(codes[4:]))
		return s, &PeerError{Code: code, Errno: errno}
	}
	return s, nil
}

// expectState reads a state and fails unless it is want.
func (c conn) expectState(want State, timeout time.Duration) error {
	s, err := c.readState(timeout)
	if err != nil {
		return err
	}
	switch {
	case s == want:
		return nil
	case s == AccessDenied:
		return ErrBusy
	case s == ServerTerminate || s == ClientTerminate:
		return fmt.Errorf("the iperf3 peer ended the test (%v) while this side expected %v", s, want)
	}
	return fmt.Errorf("%w: got %v where %v was due", ErrProtocol, s, want)
}

// writeJSON sends a length-prefixed JSON message.
func (c conn) writeJSON(b []byte) error {
	msg := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(msg, uint32(len(b)))
	copy(msg[4:], b)
	c.c.SetWriteDeadline(time.Now().Add(ReadTimeout))
	_, err := c.c.Write(msg)
	return err
}

// readJSON reads a length-prefixed JSON message of at most max bytes
// within timeout. The length is checked before anything else is read.
func (c conn) readJSON(max int, timeout time.Duration) ([]byte, error) {
	c.c.SetReadDeadline(time.Now().Add(timeout))
	var lb [4]byte
	if _, err := io.ReadFull(c.c, lb[:]); err != nil {
		return nil, fmt.Errorf("read iperf3 message length: %w", err)
	}
	n := binary.BigEndian.Uint32(lb[:])
	if n == 0 || n > uint32(max) {
		return nil, fmt.Errorf("%w: message of %d bytes, the bound is 1..%d", ErrProtocol, n, max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.c, b); err != nil {
		return nil, fmt.Errorf("read iperf3 message of %d bytes: %w", n, err)
	}
	return b, nil
}

// PeerError is an iperf3 peer's SERVER_ERROR: iperf3's error code and
// an errno.
type PeerError struct {
	Code, Errno int32
}

func (e *PeerError) Error() string {
	msg := peerErrors[e.Code]
	if msg == "" {
		msg = "error code " + fmt.Sprint(e.Code)
	}
	if e.Errno != 0 {
		return fmt.Sprintf("the iperf3 server reported an error: %s (errno %d)", msg, e.Errno)
	}
	return "the iperf3 server reported an error: " + msg
}

// peerErrors are the texts iperf3 3.12's client prints for the codes a
// server is likely to send.
var peerErrors = map[int32]string{
	8:   "socket buffer size too large",
	10:  "TCP MSS too large",
	101: "test initialization failed",
	102: "unable to start listener for connections",
	110: "received an unknown control message",
	114: "unable to receive parameters from client",
	117: "unable to receive results",
	119: "the client has terminated",
	120: "the server has terminated",
	121: "the server is busy running a test",
	200: "unable to create a new stream",
	202: "unable to start stream listener",
	204: "unable to accept stream connection",
}

// UDP stream setup: the client's connected socket sends udpHello to the
// server's port; the server answers udpReply from the socket it connected
// to the client.
var (
	udpHello = []byte("9876")
	udpReply = []byte("6789")
)

// streamID is iperf3's id of the k-th stream created (from 0): 1, 3, 4,
// 5, ... (iperf3 skips 2).
func streamID(k int) int {
	if k == 0 {
		return 1
	}
	return k + 2
}
