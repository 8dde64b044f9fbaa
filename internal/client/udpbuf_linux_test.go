package client_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"wirespeed/internal/client"
	"wirespeed/internal/engine"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

// sysctlInt reads an integer sysctl under /proc/sys/net/core.
func sysctlInt(t *testing.T, name string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/core/" + name)
	if err != nil {
		t.Skipf("cannot read net.core.%s: %v", name, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("net.core.%s: %v", name, err)
	}
	return n
}

// TestUDPReceiveBufferDefault: with no -s/-S, the receiving socket of a
// UDP_STREAM asks for engine.UDPReceiveBuffer, whichever side receives,
// and the sending one asks for nothing; an asked buffer is what the
// receiver gets. Linux caps an ask at net.core.rmem_max and grants
// twice what it took; a socket that asked nothing keeps rmem_default.
func TestUDPReceiveBufferDefault(t *testing.T) {
	rmemMax, rmemDefault := sysctlInt(t, "rmem_max"), sysctlInt(t, "rmem_default")
	granted := func(ask int) int { return 2 * min(ask, rmemMax) }
	addr, _ := startServer(t, server.Config{})
	for _, tt := range []struct {
		name    string
		reverse bool
		local   int // -s, the client's buffer
		want    int // the receiver's SO_RCVBUF
	}{
		{"client to server", false, 0, granted(engine.UDPReceiveBuffer)},
		{"server to client", true, 0, granted(engine.UDPReceiveBuffer)},
		{"server to client -s 64K", true, 64 << 10, granted(64 << 10)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, client.Config{Addr: addr})
			sp := shortSpec(spec.UDPStream, 1)
			sp.SendSize, sp.RateBitsPerSecond, sp.Reverse = spec.DefaultUDPSize, 10e6, tt.reverse
			sp.LocalSockBuf = tt.local
			res, err := c.Run(context.Background(), sp)
			if err != nil {
				t.Fatal(err)
			}
			st := res.Streams[0]
			if st.Receiver.RcvBuf != tt.want {
				t.Errorf("receiver (%s) SO_RCVBUF %d, want %d (rmem_max %d)", st.Receiver.Side, st.Receiver.RcvBuf, tt.want, rmemMax)
			}
			if st.Sender.RcvBuf != rmemDefault {
				t.Errorf("sender (%s) SO_RCVBUF %d, want rmem_default %d: it asked for a buffer", st.Sender.Side, st.Sender.RcvBuf, rmemDefault)
			}
		})
	}
}
