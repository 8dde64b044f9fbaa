package server_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// TestClientVanishesMidTest: a client whose sockets all reset in the
// middle of a test (what the kernel does for a killed process with
// unread data) leaves the server with a logged failure within seconds, its
// test slot free, and no goroutine or descriptor left behind.
func TestClientVanishesMidTest(t *testing.T) {
	// The kinds whose data path is TCP connections on the server's port
	// (the raw client below opens those); UDP and TCP_CRR vanish through
	// client.Run in TestClientVanishesUDPAndCRR.
	for _, kind := range []spec.Kind{spec.TCPStream, spec.TCPMaerts, spec.TCPBidir, spec.TCPRR} {
		t.Run(string(kind), func(t *testing.T) {
			srv := startServer(t, server.Config{})
			base := goleak.IgnoreCurrent()
			fds := openFDs(t)

			cc := rawConn(t, srv.addr, "", control.NewHello("raw", ""))
			if _, err := helloBack(t, cc); err != nil {
				t.Fatal(err)
			}
			sp := shortSpec(kind, 2)
			sp.Duration = 30 * time.Second
			cc.Send(control.TypeTest, control.TestRequest{Spec: sp})
			var acc control.Accepted
			if err := cc.Expect(control.TypeAccepted, &acc, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			var conns []*net.TCPConn
			for _, st := range sp.Streams() {
				c, err := net.Dial("tcp", srv.addr)
				if err != nil {
					t.Fatal(err)
				}
				control.WriteDataHeader(c, acc.Token, st.ID)
				conns = append(conns, c.(*net.TCPConn))
			}
			if err := cc.Expect(control.TypeReady, nil, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			cc.Send(control.TypeStart, struct{}{})
			// Keep the streams busy for a moment: send, and never read.
			for _, c := range conns {
				go c.Write(make([]byte, 1<<20))
			}
			time.Sleep(500 * time.Millisecond)
			killed := time.Now()
			for _, c := range conns {
				c.SetLinger(0)
				c.Close()
			}
			cc.NetConn().(*net.TCPConn).SetLinger(0)
			cc.Close()

			line := srv.logs.waitLog(t, "test done", "result=failed")
			if time.Since(killed) > 10*time.Second {
				t.Errorf("the server noticed after %v", time.Since(killed))
			}
			if !strings.Contains(line, "peer=127.0.0.1:") {
				t.Errorf("failure line without the peer: %s", line)
			}
			// The slot is free at once.
			c := mustDial(t, client.Config{Addr: srv.addr})
			if _, err := c.Run(context.Background(), shortSpec(spec.TCPStream, 1)); err != nil {
				t.Errorf("next test: %v", err)
			}
			c.Close()
			testkit.CheckNoLeaks(t, 10*time.Second, base)
			waitFDs(t, fds)
		})
	}
}
