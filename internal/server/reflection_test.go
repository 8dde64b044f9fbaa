package server_test

import (
	"net"
	"testing"
	"time"

	"wirespeed/internal/control"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

// TestNoReflection: in a test where the server sends (TCP_MAERTS), the
// server sends nothing to a data connection that comes from another
// address than the control connection, even with the right token, nor to
// one from the right address with a wrong token; the client's own data
// connection then gets the test's data.
func TestNoReflection(t *testing.T) {
	srv := startServer(t, server.Config{StreamsTimeout: 3 * time.Second})
	cc := rawConn(t, srv.addr, "127.0.0.1", control.NewHello("raw", ""))
	if _, err := helloBack(t, cc); err != nil {
		t.Fatal(err)
	}
	sp := shortSpec(spec.TCPMaerts, 1)
	sp.Duration = 300 * time.Millisecond
	cc.Send(control.TypeTest, control.TestRequest{Spec: sp})
	var acc control.Accepted
	if err := cc.Expect(control.TypeAccepted, &acc, 5*time.Second); err != nil {
		t.Fatal(err)
	}

	dataConn := func(local string, tok control.Token) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		c, err := d.Dial("tcp", srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if err := control.WriteDataHeader(c, tok, 1); err != nil {
			t.Fatal(err)
		}
		return c
	}
	victim := dataConn("127.0.0.2", acc.Token)
	guess := dataConn("127.0.0.1", control.NewToken())
	for name, c := range map[string]net.Conn{"other address, right token": victim, "right address, wrong token": guess} {
		closed, got := closedByServer(c, 3*time.Second)
		if got != 0 || !closed {
			t.Errorf("%s: server sent %d bytes, closed %v; want 0 bytes and closed", name, got, closed)
		}
	}
	srv.logs.waitLog(t, "data connection from another address", "peer=127.0.0.2:")

	// The real data connection, from the control connection's address.
	mine := dataConn("127.0.0.1", acc.Token)
	if err := cc.Expect(control.TypeReady, nil, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	cc.Send(control.TypeStart, struct{}{})
	mine.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 64<<10)
	var got int
	for {
		n, err := mine.Read(buf)
		got += n
		if err != nil {
			break
		}
	}
	if got == 0 {
		t.Error("the client's own data connection got nothing")
	}
	if err := cc.Expect(control.TypeResult, nil, 10*time.Second); err != nil {
		t.Errorf("result: %v", err)
	}
}
