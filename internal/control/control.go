// Package control owns the control protocol between a wirespeed client and
// server: the preambles that tell wirespeed connections apart, the framing
// of messages (a 4-byte big-endian length, then that many bytes of JSON),
// the message types, versions and error codes, and the header a data
// connection identifies itself with. It knows nothing about engines.
//
// Every read has a size bound (MaxFrame) and a deadline. See
// docs/protocol.md for the sequence of a test.
package control

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"syscall"
	"time"

	"wirespeed/internal/peertext"
	"wirespeed/internal/spec"
)

// Protocol versions this build speaks. A peer whose range does not overlap
// [MinVersion, Version] is refused with CodeVersion.
const (
	Version    = 1
	MinVersion = 1
)

// ProtocolName is sent in every hello.
const ProtocolName = "wirespeed"

// Preambles: the first four bytes of every wirespeed connection. A control
// connection starts with ControlMagic from each side; a data connection
// starts with DataMagic, then the token and the stream id.
var (
	ControlMagic = [4]byte{'W', 'S', 'P', 'D'}
	DataMagic    = [4]byte{'W', 'S', 'D', 'T'}
	// DataAckMagic starts the server's answer to a UDP data header.
	DataAckMagic = [4]byte{'W', 'S', 'D', 'A'}
)

// Defaults for a Conn.
const (
	DefaultMaxFrame    = 2 << 20
	DefaultReadTimeout = 10 * time.Second
	writeTimeout       = 10 * time.Second
)

// Message types.
const (
	TypeHello    = "hello"
	TypeTest     = "test"
	TypeAccepted = "accepted"
	TypeReady    = "ready"
	TypeStart    = "start"
	TypeInterval = "interval"
	TypeAbort    = "abort"
	TypeResult   = "result"
	TypeError    = "error"
	TypeBye      = "bye"
)

// Error codes carried by an error message.
const (
	CodeBusy     = "busy"
	CodeVersion  = "version"
	CodeInvalid  = "invalid_spec"
	CodeProtocol = "protocol"
	CodeInternal = "internal"
	CodeAborted  = "aborted"
)

// Sentinels for the error codes, so callers can use errors.Is on a
// *RemoteError.
var (
	ErrBusy         = errors.New("server busy")
	ErrVersion      = errors.New("incompatible protocol version")
	ErrInvalid      = errors.New("invalid test")
	ErrProtocol     = errors.New("protocol error")
	ErrAborted      = errors.New("test aborted")
	ErrNotWirespeed = errors.New("not a wirespeed server")
	// ErrIperf3Server is a kind of ErrNotWirespeed: the peer answered
	// as an iperf3 server does.
	ErrIperf3Server = errors.New("an iperf3 server")
	ErrFrameTooBig  = errors.New("frame too large")
)

// RemoteError is an error message received from the peer.
type RemoteError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error returns the peer's message with its control characters escaped
// (Decode did already; a RemoteError built otherwise is escaped here).
func (e *RemoteError) Error() string { return peertext.Escape(e.Message) }

// Is maps the code to its sentinel.
func (e *RemoteError) Is(target error) bool {
	switch e.Code {
	case CodeBusy:
		return target == ErrBusy
	case CodeVersion:
		return target == ErrVersion
	case CodeInvalid:
		return target == ErrInvalid
	case CodeProtocol:
		return target == ErrProtocol
	case CodeAborted:
		return target == ErrAborted
	case CodeAuth:
		return target == ErrAuth
	case CodeLimit:
		return target == ErrLimit
	case CodeRelayRefused:
		return target == ErrRelayRefused
	case CodeRelayFailed:
		return target == ErrRelayFailed
	}
	return false
}

// Hello is the first message each side sends.
type Hello struct {
	Protocol     string   `json:"protocol"`
	Version      int      `json:"version"`
	MinVersion   int      `json:"min_version"`
	Tool         string   `json:"tool"` // tool version, for the results document
	Hostname     string   `json:"hostname,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
	// Auth is present when the side authenticates with a pre-shared key
	// (see auth.go).
	Auth *AuthHello `json:"auth,omitempty"`
}

// NewHello returns this build's hello.
func NewHello(tool, hostname string) Hello {
	return Hello{Protocol: ProtocolName, Version: Version, MinVersion: MinVersion, Tool: tool, Hostname: hostname,
		Capabilities: capabilities}
}

// Negotiate returns the version both hellos speak, or an error naming both
// ranges.
func Negotiate(mine, theirs Hello) (int, error) {
	if theirs.Protocol != ProtocolName {
		return 0, fmt.Errorf("peer speaks %q, not %s", theirs.Protocol, ProtocolName)
	}
	v := min(mine.Version, theirs.Version)
	if v < mine.MinVersion || v < theirs.MinVersion || theirs.MinVersion > theirs.Version {
		return 0, fmt.Errorf("%w: this side speaks versions %d-%d (wirespeed %s), the peer %d-%d (wirespeed %s); run the same wirespeed release on both ends",
			ErrVersion, mine.MinVersion, mine.Version, mine.Tool, theirs.MinVersion, theirs.Version, peertext.Escape(theirs.Tool))
	}
	return v, nil
}

// TestRequest is the body of a test message.
type TestRequest struct {
	Spec spec.Test `json:"spec"`
	// Payload is the content of a "file" payload, sent when the server
	// sends data.
	Payload []byte `json:"payload,omitempty"`
	// StreamedIntervals says the client keeps the server's interval
	// reports as they arrive, so the server's result leaves its intervals
	// out and the server keeps none: a long run at a short interval then
	// neither grows the server nor outgrows the frame limit.
	StreamedIntervals bool `json:"streamed_intervals,omitempty"`
}

// Accepted answers a test request.
type Accepted struct {
	Token    Token `json:"token"`
	DataPort int   `json:"data_port"` // TCP data connections
	// UDPPorts are the server's UDP data sockets, one per stream in the
	// order of spec.Test.Streams, for UDP tests.
	UDPPorts []int `json:"udp_ports,omitempty"`
	// CRRPort is the listener a TCP_CRR test connects to for every
	// transaction.
	CRRPort int `json:"crr_port,omitempty"`
}

// Abort asks the peer to end the running test now and send what it has.
type Abort struct {
	Reason string `json:"reason"`
}

// Token identifies one test's data connections.
type Token [16]byte

// NewToken returns a random token.
func NewToken() Token {
	var t Token
	rand.Read(t[:]) // never fails (crypto/rand contract since Go 1.24)
	return t
}

func (t Token) String() string { return hex.EncodeToString(t[:]) }

// MarshalText writes the token in hex.
func (t Token) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads a hex token.
func (t *Token) UnmarshalText(b []byte) error {
	if hex.DecodedLen(len(b)) != len(t) {
		return fmt.Errorf("token must be %d hex digits", 2*len(t))
	}
	_, err := hex.Decode(t[:], b)
	return err
}

// DataHeaderLen is the length of a data connection's header, magic included.
const DataHeaderLen = 4 + 16 + 4

// WriteDataHeader writes the header a data connection starts with.
func WriteDataHeader(w io.Writer, tok Token, streamID int) error {
	var b [DataHeaderLen]byte
	copy(b[:4], DataMagic[:])
	copy(b[4:20], tok[:])
	binary.BigEndian.PutUint32(b[20:], uint32(streamID))
	_, err := w.Write(b[:])
	return err
}

// DataHeader returns a data header: what a UDP stream's socket sends,
// in one datagram, until the server acknowledges it.
func DataHeader(tok Token, streamID int) []byte {
	var b bytes.Buffer
	WriteDataHeader(&b, tok, streamID)
	return b.Bytes()
}

// ParseDataHeader parses a datagram holding a data header.
func ParseDataHeader(b []byte) (Token, int, error) {
	if len(b) != DataHeaderLen || [4]byte(b[:4]) != DataMagic {
		return Token{}, 0, fmt.Errorf("%w: not a data header (%d bytes)", ErrProtocol, len(b))
	}
	return ReadDataHeader(bytes.NewReader(b[4:]))
}

// DataAck is the server's answer to a UDP data header, no longer than it,
// so the exchange cannot amplify a spoofed request.
func DataAck(tok Token, streamID int) []byte {
	b := DataHeader(tok, streamID)
	copy(b[:4], DataAckMagic[:])
	return b
}

// IsDataAck reports whether b acknowledges stream streamID of tok.
func IsDataAck(b []byte, tok Token, streamID int) bool {
	want := DataAck(tok, streamID)
	return bytes.Equal(b, want)
}

// ReadDataHeader reads the rest of a data header after its magic.
func ReadDataHeader(r io.Reader) (Token, int, error) {
	var b [DataHeaderLen - 4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return Token{}, 0, fmt.Errorf("read data header: %w", err)
	}
	var t Token
	copy(t[:], b[:16])
	id := binary.BigEndian.Uint32(b[16:])
	if id == 0 || id > 1<<16 {
		return Token{}, 0, fmt.Errorf("%w: stream id %d out of range", ErrProtocol, id)
	}
	return t, int(id), nil
}

// Message is a received frame whose body has not been decoded yet.
type Message struct {
	Type string          `json:"type"`
	Body json.RawMessage `json:"body,omitempty"`
}

// Decode unmarshals the body into v, then escapes the control
// characters of every string in it (peertext.Scrub): whatever the peer
// wrote, nothing decoded from it can drive a terminal it is printed on.
func (m Message) Decode(v any) error {
	if err := m.decodeRaw(v); err != nil {
		return err
	}
	peertext.Scrub(v)
	return nil
}

// decodeRaw unmarshals the body as the peer wrote it, for a decoder that
// refuses control characters itself; it must Scrub what it accepts.
func (m Message) decodeRaw(v any) error {
	// The type and the decoder's words (a field path holds the peer's
	// map keys, a spec error its values) are the peer's text.
	if len(m.Body) == 0 {
		return fmt.Errorf("%w: %s message has no body", ErrProtocol, peertext.Escape(m.Type))
	}
	if err := json.Unmarshal(m.Body, v); err != nil {
		return fmt.Errorf("%w: bad %s message: %s", ErrProtocol, peertext.Escape(m.Type), peertext.Escape(err.Error()))
	}
	return nil
}

// Conn is a control connection. Send may be called from several goroutines;
// Recv from one at a time.
type Conn struct {
	c        net.Conn
	r        *bufio.Reader
	wmu      sync.Mutex
	maxFrame int
}

// NewConn wraps c. maxFrame bounds every frame read; 0 means
// DefaultMaxFrame.
func NewConn(c net.Conn, maxFrame int) *Conn {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrame
	}
	return &Conn{c: c, r: bufio.NewReaderSize(c, 4096), maxFrame: maxFrame}
}

// NetConn returns the underlying connection.
func (c *Conn) NetConn() net.Conn { return c.c }

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// WriteMagic writes the control preamble.
func (c *Conn) WriteMagic() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.c.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err := c.c.Write(ControlMagic[:])
	return err
}

// ReadMagic reads the peer's preamble and checks it is a wirespeed control
// connection; when it is not, the error says what the peer seems to be.
func (c *Conn) ReadMagic(timeout time.Duration) error {
	c.c.SetReadDeadline(time.Now().Add(timeout))
	var b [4]byte
	// The first byte alone tells most other servers apart: an iperf3
	// server answers our hello with one state byte and then waits, so
	// waiting for four would only wait out the timeout.
	n, err := io.ReadFull(c.r, b[:1])
	if err == nil && looksIperf3(b[:1]) {
		return notWirespeed(b[:1])
	}
	if err == nil {
		var m int
		m, err = io.ReadFull(c.r, b[1:])
		n += m
	}
	if err != nil {
		switch {
		case n > 0:
			return notWirespeed(b[:n])
		case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
			// A reset: it closed before our hello arrived, so our hello
			// reset the connection; the same answer as a plain close.
			return fmt.Errorf("%w: it closed the connection without a reply", ErrNotWirespeed)
		case isTimeout(err):
			return fmt.Errorf("%w: no reply within %v", ErrNotWirespeed, timeout)
		}
		return err
	}
	if b != ControlMagic {
		return notWirespeed(b[:])
	}
	return nil
}

// notWirespeed is ErrNotWirespeed with what the first bytes b suggest the
// peer is; for an iperf3 server it is also ErrIperf3Server.
func notWirespeed(b []byte) error {
	return &notWirespeedError{desc: describe(b), iperf3: looksIperf3(b)}
}

type notWirespeedError struct {
	desc   string
	iperf3 bool
}

func (e *notWirespeedError) Error() string { return ErrNotWirespeed.Error() + ": " + e.desc }

func (e *notWirespeedError) Is(target error) bool {
	return target == ErrNotWirespeed || (e.iperf3 && target == ErrIperf3Server)
}

// looksIperf3 reports whether b starts with a state byte an iperf3 server
// sends a new client (PARAM_EXCHANGE, ACCESS_DENIED, SERVER_ERROR).
func looksIperf3(b []byte) bool {
	return len(b) > 0 && (b[0] == 9 || b[0] == 0xff || b[0] == 0xfe)
}

// describe guesses what kind of server sent b as its first bytes.
func describe(b []byte) string {
	switch {
	case looksIperf3(b):
		return fmt.Sprintf("its first byte %#x is an iperf3 state; it looks like an iperf3 server", b[0])
	case len(b) >= 4 && string(b[:4]) == "HTTP":
		return "it answered in HTTP"
	case len(b) >= 3 && string(b[:3]) == "SSH":
		return "it is an SSH server"
	}
	return fmt.Sprintf("it answered %q", b)
}

// Send writes one message, waiting at most writeTimeout (10 s).
func (c *Conn) Send(typ string, body any) error {
	return c.SendBy(time.Time{}, typ, body)
}

// SendBy writes one message, waiting at most writeTimeout and never past
// deadline (zero: no deadline but writeTimeout's).
func (c *Conn) SendBy(deadline time.Time, typ string, body any) error {
	var raw json.RawMessage
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode %s: %w", typ, err)
		}
		raw = b
	}
	frame, err := json.Marshal(Message{Type: typ, Body: raw})
	if err != nil {
		return fmt.Errorf("encode %s: %w", typ, err)
	}
	if len(frame) > c.maxFrame {
		return fmt.Errorf("%w: %s message of %d bytes exceeds %d", ErrFrameTooBig, typ, len(frame), c.maxFrame)
	}
	buf := make([]byte, 4+len(frame))
	binary.BigEndian.PutUint32(buf, uint32(len(frame)))
	copy(buf[4:], frame)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	d := time.Now().Add(writeTimeout)
	if !deadline.IsZero() && deadline.Before(d) {
		d = deadline
	}
	c.c.SetWriteDeadline(d)
	if _, err := c.c.Write(buf); err != nil {
		return fmt.Errorf("send %s: %w", typ, err)
	}
	return nil
}

// SendError writes an error message.
func (c *Conn) SendError(code, msg string) error {
	return c.Send(TypeError, RemoteError{Code: code, Message: msg})
}

// Recv reads one message, waiting at most timeout. An error message from
// the peer is returned as a *RemoteError.
func (c *Conn) Recv(timeout time.Duration) (Message, error) {
	c.c.SetReadDeadline(time.Now().Add(timeout))
	m, err := ReadFrame(c.r, c.maxFrame)
	if err != nil {
		return Message{}, err
	}
	if m.Type == TypeError {
		var re RemoteError
		if err := m.Decode(&re); err != nil {
			return Message{}, err
		}
		return Message{}, &re
	}
	return m, nil
}

// Expect reads one message of type typ into v (v may be nil).
func (c *Conn) Expect(typ string, v any, timeout time.Duration) error {
	m, err := c.Recv(timeout)
	if err != nil {
		return err
	}
	if m.Type != typ {
		return fmt.Errorf("%w: expected %s message, got %q", ErrProtocol, typ, m.Type)
	}
	if v == nil {
		return nil
	}
	return m.Decode(v)
}

// ReadFrame reads one frame of at most maxFrame bytes from r. Its buffer
// grows as the frame's bytes arrive, not to the size the header
// announces: a peer that announces a large frame and sends little of it
// costs little memory.
func ReadFrame(r io.Reader, maxFrame int) (Message, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return Message{}, frameErr(err)
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 {
		return Message{}, fmt.Errorf("%w: empty frame", ErrProtocol)
	}
	if uint64(n) > uint64(maxFrame) {
		return Message{}, fmt.Errorf("%w: %d bytes announced, limit %d", ErrFrameTooBig, n, maxFrame)
	}
	buf, err := readGrowing(r, int(n))
	if err != nil {
		return Message{}, frameErr(err)
	}
	var m Message
	if err := json.Unmarshal(buf, &m); err != nil {
		return Message{}, fmt.Errorf("%w: frame is not a JSON message: %s", ErrProtocol, peertext.Escape(err.Error()))
	}
	if m.Type == "" {
		return Message{}, fmt.Errorf("%w: frame has no type", ErrProtocol)
	}
	return m, nil
}

// firstChunk is the buffer a frame's body starts with; it doubles as the
// bytes arrive.
const firstChunk = 512

// readGrowing reads exactly n bytes from r into a buffer that starts at
// firstChunk bytes and doubles only when the bytes read so far fill it, so
// the memory held is at most twice what the peer actually sent.
func readGrowing(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, 0, min(n, firstChunk))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(n-len(buf), cap(buf)))
		}
		m, err := r.Read(buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+m]
		if err != nil {
			if len(buf) == n {
				break
			}
			if errors.Is(err, io.EOF) && len(buf) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return buf, nil
}

func frameErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: truncated frame", ErrProtocol)
	}
	return err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
