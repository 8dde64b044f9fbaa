package control

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"wirespeed/internal/spec"
)

func frame(body string) []byte {
	b := make([]byte, 4+len(body))
	binary.BigEndian.PutUint32(b, uint32(len(body)))
	copy(b[4:], body)
	return b
}

func TestReadFrame(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		max     int
		want    string // message type
		wantErr error
	}{
		{name: "ok", in: frame(`{"type":"hello","body":{"protocol":"wirespeed"}}`), max: 1024, want: "hello"},
		{name: "oversize", in: frame(strings.Repeat("x", 100)), max: 99, wantErr: ErrFrameTooBig},
		{name: "huge length", in: []byte{0xff, 0xff, 0xff, 0xff, '{'}, max: 1 << 20, wantErr: ErrFrameTooBig},
		{name: "empty", in: frame(""), max: 1024, wantErr: ErrProtocol},
		{name: "truncated body", in: frame(`{"type":"hello"}`)[:10], max: 1024, wantErr: ErrProtocol},
		{name: "truncated length", in: []byte{0, 0}, max: 1024, wantErr: ErrProtocol},
		{name: "garbage", in: frame("\x00\x01not json"), max: 1024, wantErr: ErrProtocol},
		{name: "no type", in: frame(`{"body":{}}`), max: 1024, wantErr: ErrProtocol},
		{name: "json but not object", in: frame(`[1,2]`), max: 1024, wantErr: ErrProtocol},
		{name: "nothing", in: nil, max: 1024, wantErr: io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ReadFrame(bytes.NewReader(tt.in), tt.max)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Type != tt.want {
				t.Errorf("type = %q, want %q", m.Type, tt.want)
			}
		})
	}
}

// TestReadFrameGrowsAsBytesArrive: a frame that announces 1 MiB and
// sends 16 bytes of it makes ReadFrame allocate a few hundred bytes, not
// the announced size; a whole frame still reads, across many small reads.
func TestReadFrameGrowsAsBytesArrive(t *testing.T) {
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], 1<<20)
	in := append(hdr[:], `{"type":"hello",`...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadFrame(bytes.NewReader(in), 2<<20)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrProtocol) {
		t.Fatalf("truncated frame: err = %v, want ErrProtocol", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<10 {
		t.Errorf("reading 16 bytes of a frame announced as 1 MiB allocated %d bytes; want at most 16 KiB", got)
	}

	body := `{"type":"test","body":"` + strings.Repeat("x", 300<<10) + `"}`
	m, err := ReadFrame(iotest.OneByteReader(bytes.NewReader(frame(body))), 2<<20)
	if err != nil || m.Type != "test" || len(m.Body) != 300<<10+2 {
		t.Fatalf("a 300 KiB frame read byte by byte: type %q, body %d bytes, err %v", m.Type, len(m.Body), err)
	}
}

// pipe returns two Conns joined by an in-memory connection.
func pipe(t *testing.T, max int) (*Conn, *Conn) {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return NewConn(a, max), NewConn(b, max)
}

func TestSendRecv(t *testing.T) {
	a, b := pipe(t, 0)
	sp := spec.Default()
	sp.Parallel = 3
	go a.Send(TypeTest, TestRequest{Spec: sp, Payload: []byte("abc")})
	var got TestRequest
	if err := b.Expect(TypeTest, &got, time.Second); err != nil {
		t.Fatal(err)
	}
	if got.Spec != sp || string(got.Payload) != "abc" {
		t.Errorf("got %+v, want %+v", got, sp)
	}

	go a.SendError(CodeBusy, "server is busy")
	err := b.Expect(TypeAccepted, nil, time.Second)
	var re *RemoteError
	if !errors.As(err, &re) || !errors.Is(err, ErrBusy) || re.Message != "server is busy" {
		t.Errorf("got %v, want a busy RemoteError", err)
	}

	go a.Send(TypeReady, struct{}{})
	if err := b.Expect(TypeStart, nil, time.Second); !errors.Is(err, ErrProtocol) {
		t.Errorf("wrong type: got %v, want protocol error", err)
	}
}

func TestSendTooBig(t *testing.T) {
	a, _ := pipe(t, 64)
	err := a.Send(TypeTest, TestRequest{Payload: make([]byte, 100)})
	if !errors.Is(err, ErrFrameTooBig) {
		t.Errorf("got %v, want ErrFrameTooBig", err)
	}
}

func TestRecvDeadline(t *testing.T) {
	_, b := pipe(t, 0)
	start := time.Now()
	_, err := b.Recv(50 * time.Millisecond)
	if err == nil || !isTimeout(err) {
		t.Fatalf("got %v, want a timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Recv took %v past a 50ms deadline", d)
	}
}

func TestReadMagic(t *testing.T) {
	tests := []struct {
		name string
		peer []byte
		want string
	}{
		{name: "wirespeed", peer: ControlMagic[:], want: ""},
		{name: "iperf3", peer: []byte{9}, want: "iperf3"},
		{name: "iperf3 busy", peer: []byte{0xff}, want: "iperf3"},
		{name: "http", peer: []byte("HTTP/1.1 400"), want: "HTTP"},
		{name: "ssh", peer: []byte("SSH-2.0-OpenSSH"), want: "SSH"},
		{name: "closed", peer: nil, want: "closed the connection"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := net.Pipe()
			defer b.Close()
			go func() {
				a.Write(tt.peer)
				a.Close()
			}()
			err := NewConn(b, 0).ReadMagic(time.Second)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrNotWirespeed) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want ErrNotWirespeed mentioning %q", err, tt.want)
			}
		})
	}
}

// TestReadMagicIperf3NoWait: an iperf3 server sends one state byte and
// then waits for our parameters with the connection open; ReadMagic must
// say so at once rather than wait out its timeout for three more bytes.
func TestReadMagicIperf3NoWait(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go a.Write([]byte{9}) // PARAM_EXCHANGE, and nothing more
	start := time.Now()
	err := NewConn(b, 0).ReadMagic(5 * time.Second)
	if d := time.Since(start); d > time.Second {
		t.Errorf("ReadMagic took %v to recognise an iperf3 server", d)
	}
	if !errors.Is(err, ErrIperf3Server) || !errors.Is(err, ErrNotWirespeed) {
		t.Errorf("got %v, want ErrIperf3Server and ErrNotWirespeed", err)
	}
}

func TestNegotiate(t *testing.T) {
	mine := NewHello("v1", "a")
	tests := []struct {
		name    string
		theirs  Hello
		want    int
		wantErr bool
	}{
		{name: "same", theirs: NewHello("v1", "b"), want: Version},
		{name: "newer peer that still speaks ours", theirs: Hello{Protocol: ProtocolName, Version: Version + 3, MinVersion: Version}, want: Version},
		{name: "newer peer only", theirs: Hello{Protocol: ProtocolName, Version: Version + 3, MinVersion: Version + 1}, wantErr: true},
		{name: "older peer", theirs: Hello{Protocol: ProtocolName, Version: MinVersion - 1, MinVersion: MinVersion - 1}, wantErr: true},
		{name: "other protocol", theirs: Hello{Protocol: "iperf", Version: 1, MinVersion: 1}, wantErr: true},
		{name: "inverted range", theirs: Hello{Protocol: ProtocolName, Version: 1, MinVersion: 5}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Negotiate(mine, tt.theirs)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && v != tt.want {
				t.Errorf("version %d, want %d", v, tt.want)
			}
		})
	}
}

func TestDataHeader(t *testing.T) {
	tok := NewToken()
	var buf bytes.Buffer
	if err := WriteDataHeader(&buf, tok, 42); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != DataHeaderLen {
		t.Fatalf("header is %d bytes, want %d", buf.Len(), DataHeaderLen)
	}
	if !bytes.Equal(buf.Bytes()[:4], DataMagic[:]) {
		t.Fatalf("header starts %q", buf.Bytes()[:4])
	}
	buf.Next(4)
	got, id, err := ReadDataHeader(&buf)
	if err != nil || got != tok || id != 42 {
		t.Errorf("got %v %d %v, want %v 42", got, id, err, tok)
	}
	if _, _, err := ReadDataHeader(bytes.NewReader(make([]byte, 20))); !errors.Is(err, ErrProtocol) {
		t.Errorf("stream id 0: got %v, want protocol error", err)
	}
	if _, _, err := ReadDataHeader(bytes.NewReader(make([]byte, 5))); err == nil {
		t.Errorf("short header accepted")
	}
}

func TestTokenJSON(t *testing.T) {
	tok := NewToken()
	b, err := json.Marshal(Accepted{Token: tok, DataPort: 7575})
	if err != nil {
		t.Fatal(err)
	}
	var got Accepted
	if err := json.Unmarshal(b, &got); err != nil || got.Token != tok {
		t.Errorf("round trip of %s: %v %v", b, got, err)
	}
	if err := json.Unmarshal([]byte(`{"token":"abc"}`), &got); err == nil {
		t.Errorf("short token accepted")
	}
	if a, b := NewToken(), NewToken(); a == b {
		t.Errorf("two tokens are equal")
	}
}

func TestUDPDataHeader(t *testing.T) {
	tok := NewToken()
	b := DataHeader(tok, 3)
	got, id, err := ParseDataHeader(b)
	if err != nil || got != tok || id != 3 {
		t.Fatalf("got %v %d %v", got, id, err)
	}
	ack := DataAck(tok, 3)
	if len(ack) > len(b) {
		t.Errorf("ack of %d bytes is longer than the %d-byte request: amplification", len(ack), len(b))
	}
	if !IsDataAck(ack, tok, 3) || IsDataAck(ack, tok, 4) || IsDataAck(b, tok, 3) {
		t.Error("ack recognition wrong")
	}
	for _, bad := range [][]byte{nil, b[:10], append(append([]byte{}, b...), 0), ack} {
		if _, _, err := ParseDataHeader(bad); err == nil {
			t.Errorf("ParseDataHeader accepted %q", bad)
		}
	}
}

// TestDecodeEscapesPeerText: what Decode returns, and its errors, hold
// no control character a peer wrote.
func TestDecodeEscapesPeerText(t *testing.T) {
	var re RemoteError
	m := Message{Type: TypeError, Body: json.RawMessage(`{"code":"internal","message":"a\u001b]52;c;eA==\u0007\r\nb"}`)}
	if err := m.Decode(&re); err != nil {
		t.Fatal(err)
	}
	if want := `a\x1b]52;c;eA==\x07\r\nb`; re.Message != want || re.Error() != want {
		t.Errorf("decoded %q (Error %q), want %q", re.Message, re.Error(), want)
	}
	// A RemoteError built by hand is escaped by Error.
	if got := (&RemoteError{Message: "x\x1b[2J"}).Error(); got != `x\x1b[2J` {
		t.Errorf("Error() = %q", got)
	}
	var h Hello
	bad := []Message{
		{Type: "\x1b[2Jhello", Body: json.RawMessage(`{"version":"x"}`)},
		{Type: "\x1b[2Jhello"},
		{Type: TypeHello, Body: json.RawMessage(`{"capabilities":{"\u001b[2J":1}}`)},
	}
	for _, m := range bad {
		err := m.Decode(&h)
		if err == nil || strings.ContainsAny(err.Error(), "\x1b\x07\r\n") {
			t.Errorf("Decode of %q: %q; want an error without control characters", m.Body, err)
		}
	}
}
