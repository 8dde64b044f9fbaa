package control

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/sysinfo"
)

// Fuzz targets for everything the server decodes from the network before
// and after authentication. `go test ./...` runs each target's seeds
// (f.Add below and testdata/fuzz/<Target>/); CI fuzzes each for a bounded
// time; see docs/security.md. Each checks that decoding never panics,
// never reads past its bound, and that what it accepts is well formed.

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func FuzzReadFrame(f *testing.F) {
	f.Add(frame(`{"type":"hello","body":{"protocol":"wirespeed","version":1,"min_version":1}}`))
	f.Add(frame(`{"type":"test","body":{"spec":{"test":"TCP_STREAM"}}}`))
	f.Add(frame(`{"type":"error","body":{"code":"busy","message":"x"}}`))
	f.Add(frame(`{"type":""}`))
	f.Add(frame(`[]`))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0, 0, 0, 5, '{', '}'})
	const max = 4096
	f.Fuzz(func(t *testing.T, data []byte) {
		cr := &countingReader{r: bytes.NewReader(data)}
		m, err := ReadFrame(cr, max)
		if cr.n > 4+max {
			t.Fatalf("read %d bytes with a %d-byte bound", cr.n, max)
		}
		if err != nil {
			if errors.Is(err, ErrFrameTooBig) && cr.n > 4 {
				t.Fatalf("read %d bytes of a frame it refused as too large", cr.n)
			}
			return
		}
		if m.Type == "" {
			t.Fatal("accepted a frame without a type")
		}
		if n := binary.BigEndian.Uint32(data[:4]); n == 0 || n > max || int(n)+4 != cr.n {
			t.Fatalf("accepted a frame of announced length %d after reading %d bytes", n, cr.n)
		}
	})
}

// decodeBody decodes body as the body of a message of type typ.
func decodeBody(typ string, body []byte, v any) error {
	return Message{Type: typ, Body: json.RawMessage(body)}.Decode(v)
}

func FuzzDecodeHello(f *testing.F) {
	h := NewHello("v1.2.3", "host")
	b, _ := json.Marshal(h)
	f.Add(b)
	h.Auth = &AuthHello{Scheme: AuthScheme, Nonce: Nonce{1, 2, 3}}
	b, _ = json.Marshal(h)
	f.Add(b)
	f.Add([]byte(`{"protocol":"wirespeed","version":99,"min_version":98}`))
	f.Add([]byte(`{"protocol":"wirespeed","version":1,"min_version":1,"auth":{"scheme":"hmac-sha256","nonce":"zz"}}`))
	f.Add([]byte(`{"version":-1,"min_version":2147483648}`))
	f.Add([]byte(`null`))
	mine := NewHello("fuzz", "")
	f.Fuzz(func(t *testing.T, body []byte) {
		var theirs Hello
		if err := decodeBody(TypeHello, body, &theirs); err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("decode error %v is not a protocol error", err)
			}
			return
		}
		if v, err := Negotiate(mine, theirs); err == nil && (v < MinVersion || v > Version) {
			t.Fatalf("negotiated version %d outside %d-%d", v, MinVersion, Version)
		}
		if CheckAuthHello(theirs.Auth) == nil {
			// An accepted offer has a usable nonce: a proof over it verifies.
			p := NewAuthProof([]byte("0123456789abcdef"), RoleClient, 1, theirs.Auth.Nonce, Nonce{9})
			if VerifyAuth([]byte("0123456789abcdef"), RoleClient, 1, theirs.Auth.Nonce, Nonce{9}, p) != nil {
				t.Fatal("a proof over an accepted nonce does not verify")
			}
		}
	})
}

func FuzzDecodeTestRequest(f *testing.F) {
	for _, k := range spec.Kinds {
		sp := spec.Default()
		sp.Kind = k
		sp.Parallel = 4
		b, _ := json.Marshal(TestRequest{Spec: sp, Payload: []byte("abc")})
		f.Add(b)
	}
	f.Add([]byte(`{"spec":{"test":"TCP_STREAM","duration_s":1e300,"omit_s":-1e300,"interval_s":"NaN","parallel":128}}`))
	f.Add([]byte(`{"spec":{"test":"tcp_bidir","duration_s":1,"send_size":1,"recv_size":1,"parallel":129,"payload":{"kind":"file"}}}`))
	f.Add([]byte(`{"spec":null,"payload":"!!"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var req TestRequest
		if err := decodeBody(TypeTest, body, &req); err != nil {
			return
		}
		sp := req.Spec
		if sp.Validate() != nil {
			return
		}
		// What validation accepts is bounded and well formed.
		if sp.Duration <= 0 || sp.Duration > spec.MaxDuration || sp.Omit < 0 || sp.Omit > spec.MaxDuration {
			t.Fatalf("accepted duration %v, omit %v", sp.Duration, sp.Omit)
		}
		streams := sp.Streams()
		if len(streams) == 0 || len(streams) > 2*spec.MaxParallel {
			t.Fatalf("accepted a plan of %d streams", len(streams))
		}
		for i, st := range streams {
			if st.ID != i+1 {
				t.Fatalf("stream %d has id %d", i, st.ID)
			}
		}
		// It survives a trip through the wire form unchanged, within the
		// precision of float seconds.
		b, err := json.Marshal(sp)
		if err != nil {
			t.Fatal(err)
		}
		var back spec.Test
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.Validate() != nil || back.Kind != sp.Kind || back.Parallel != sp.Parallel || back.SendSize != sp.SendSize {
			t.Fatalf("round trip changed %+v into %+v", sp, back)
		}
	})
}

func FuzzDecodeAccepted(f *testing.F) {
	b, _ := json.Marshal(Accepted{Token: NewToken(), DataPort: 7575})
	f.Add(b)
	f.Add([]byte(`{"token":"00","data_port":-1}`))
	f.Add([]byte(`{"token":12,"data_port":"x"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var acc Accepted
		if err := decodeBody(TypeAccepted, body, &acc); err != nil {
			return
		}
		// An accepted token is exactly 16 bytes and writes back the same.
		txt, _ := acc.Token.MarshalText()
		var back Token
		if err := back.UnmarshalText(txt); err != nil || back != acc.Token {
			t.Fatalf("token %s does not round-trip: %v", txt, err)
		}
	})
}

func FuzzDecodeResult(f *testing.F) {
	res := result.SideResult{Side: result.Remote, Hostname: "h", Flows: []result.Flow{{
		Direction: spec.ClientToServer, Side: result.Remote, Role: result.Receiver, ElapsedS: 1, Bytes: 1000,
		Intervals: []result.Interval{{StartS: 0, EndS: 1, Bytes: 1000, BitsPerSecond: 8000}},
		Streams:   []result.StreamSide{{ID: 1, Side: result.Remote, Role: result.Receiver, Bytes: 1000, TCPInfo: &measure.TCPInfo{SndMSS: 1448}}},
	}}}
	b, _ := json.Marshal(res)
	f.Add(b)
	// Every optional part present, so the fuzzer starts from all the keys
	// a server's result message can carry.
	res.CPU, res.Counters, res.Env, res.DataPath = &measure.CPU{}, &measure.Counters{}, &sysinfo.Env{}, &result.DataPath{}
	res.Warnings, res.Error, res.CPUError, res.Interrupted = []string{"w"}, "e", "c", true
	b, _ = json.Marshal(res)
	f.Add(b)
	f.Add([]byte(`{"flows":[{"streams":[{"id":-1,"tcp_info":null}],"intervals":null}],"error":"x"}`))
	f.Add([]byte(`{"flows":{}}`))
	// A hostile server's text: control characters and a bidi override,
	// escaped when decoded; escaping again must change nothing.
	f.Add([]byte(`{"side":"remote","hostname":"h\u001b[2J","flows":[],"error":"x\u202e\u0007\\x07","warnings":["\t"]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var r result.SideResult
		if err := decodeBody(TypeResult, body, &r); err != nil {
			return
		}
		// What decodes encodes, and decodes back to the same value: the
		// client keeps and re-emits the server's side as it received it.
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("a decoded result does not encode: %v", err)
		}
		var back result.SideResult
		if err := decodeBody(TypeResult, out, &back); err != nil {
			t.Fatalf("an encoded result does not decode: %v\n%s", err, out)
		}
		if d := cmp.Diff(r, back, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("round trip changed the result (-decoded +again):\n%s", d)
		}
		// Whatever decodes can be joined with a local side without a panic.
		sp := spec.Default()
		sp.Kind = spec.TCPBidir
		result.Join(sp, result.SideResult{Side: result.Local}, r)
	})
}

func FuzzReadDataHeader(f *testing.F) {
	var buf bytes.Buffer
	WriteDataHeader(&buf, NewToken(), 1)
	f.Add(buf.Bytes()[4:])
	f.Add(make([]byte, DataHeaderLen-4))
	f.Add([]byte{1, 2, 3})
	f.Add(append(make([]byte, 16), 0xff, 0xff, 0xff, 0xff))
	f.Fuzz(func(t *testing.T, data []byte) {
		cr := &countingReader{r: bytes.NewReader(data)}
		tok, id, err := ReadDataHeader(cr)
		if cr.n > DataHeaderLen-4 {
			t.Fatalf("read %d bytes of a %d-byte header", cr.n, DataHeaderLen-4)
		}
		if err != nil {
			return
		}
		if id < 1 || id > 1<<16 {
			t.Fatalf("accepted stream id %d", id)
		}
		if !bytes.Equal(tok[:], data[:16]) {
			t.Fatal("token differs from the header's bytes")
		}
	})
}

func FuzzVerifyAuth(f *testing.F) {
	key := []byte("0123456789abcdef")
	nc, ns := Nonce{1}, Nonce{2}
	good, _ := json.Marshal(NewAuthProof(key, RoleClient, 1, nc, ns))
	f.Add(good)
	f.Add([]byte(`{"mac":""}`))
	f.Add([]byte(`{"mac":"zz"}`))
	f.Add([]byte(`{"mac":12}`))
	want := NewAuthProof(key, RoleClient, 1, nc, ns).MAC
	f.Fuzz(func(t *testing.T, body []byte) {
		var p AuthProof
		if err := decodeBody(TypeAuth, body, &p); err != nil {
			return
		}
		err := VerifyAuth(key, RoleClient, 1, nc, ns, p)
		if err == nil && !bytes.EqualFold([]byte(p.MAC), []byte(want)) {
			t.Fatalf("accepted proof %q, the valid one is %q", p.MAC, want)
		}
		if err != nil && !errors.Is(err, ErrAuth) {
			t.Fatalf("error %v is not ErrAuth", err)
		}
	})
}

// bytesConn is a net.Conn whose reads come from r; deadlines are
// accepted and ignored (the reader runs out instead of timing out).
type bytesConn struct {
	net.Conn
	r *countingReader
}

func (c *bytesConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *bytesConn) SetReadDeadline(time.Time) error  { return nil }
func (c *bytesConn) SetWriteDeadline(time.Time) error { return nil }

// FuzzReadMagic feeds the client's preamble reader what a server could
// answer: it accepts exactly a leading "WSPD", leaves what follows it to
// the frame reader, and says "iperf3 server" exactly when the first byte
// is one of the states iperf3 opens with.
func FuzzReadMagic(f *testing.F) {
	f.Add(ControlMagic[:])
	f.Add(append(ControlMagic[:], frame(`{"type":"hello"}`)...))
	f.Add(DataMagic[:])
	f.Add([]byte{9})          // iperf3's PARAM_EXCHANGE
	f.Add([]byte{0xff})       // ACCESS_DENIED
	f.Add([]byte{0xfe, 0, 0}) // SERVER_ERROR
	f.Add([]byte("HTTP/1.1 400 Bad Request\r\n"))
	f.Add([]byte("SSH-2.0-OpenSSH_9.6\r\n"))
	f.Add([]byte("WSP"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		cr := &countingReader{r: bytes.NewReader(data)}
		cc := NewConn(&bytesConn{r: cr}, 0)
		err := cc.ReadMagic(time.Second)
		isMagic := len(data) >= 4 && [4]byte(data[:4]) == ControlMagic
		if isMagic != (err == nil) {
			t.Fatalf("ReadMagic(%q) = %v", data, err)
		}
		if err == nil {
			got, gerr := ReadFrame(cc.r, 4096)
			want, werr := ReadFrame(bytes.NewReader(data[4:]), 4096)
			if (gerr == nil) != (werr == nil) || got.Type != want.Type || !bytes.Equal(got.Body, want.Body) {
				t.Fatalf("after the preamble the next frame is %+v, %v; want %+v, %v", got, gerr, want, werr)
			}
			return
		}
		if !errors.Is(err, ErrNotWirespeed) {
			t.Fatalf("ReadMagic(%q) = %v, not ErrNotWirespeed", data, err)
		}
		iperf3 := len(data) > 0 && (data[0] == 9 || data[0] == 0xff || data[0] == 0xfe)
		if errors.Is(err, ErrIperf3Server) != iperf3 {
			t.Fatalf("ReadMagic(%q) = %v: iperf3 server %v, want %v", data, err, !iperf3, iperf3)
		}
	})
}
