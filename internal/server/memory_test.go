package server_test

import (
	"encoding/binary"
	"net"
	"runtime"
	"testing"
	"time"

	"wirespeed/internal/control"
	"wirespeed/internal/server"
)

// serverMemory is the Go heap and stacks this process holds, after a
// collection: the server's and the test's own connections.
func serverMemory() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}

// preAuthConns is how many unauthenticated connections
// TestMemoryBeforeAuthentication opens, and preAuthBudget what they may
// cost the server in all: 16 KiB each (a goroutine's stack, a 4 KiB read
// buffer and what is read of a hello fit in it; a 64 KiB frame buffer
// does not).
const (
	preAuthConns  = 2000
	preAuthBudget = preAuthConns * 16 << 10
)

// TestMemoryBeforeAuthentication: thousands of connections that send the
// control preamble and a frame header, then nothing, keep the server's
// memory within preAuthBudget. Half announce 65,535 bytes (over the
// handshake bound: refused at once), half announce exactly the bound and
// send 16 bytes of it (the server waits for the rest, but holds only what
// arrived).
func TestMemoryBeforeAuthentication(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 2000 connections")
	}
	srv := startServer(t, server.Config{HandshakeTimeout: 30 * time.Second, Auth: server.Auth{PSK: testKey}})
	base := serverMemory()
	goroutines := runtime.NumGoroutine()
	conns := make([]net.Conn, 0, preAuthConns)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range preAuthConns {
		c, err := net.Dial("tcp", srv.addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		msg := append([]byte("WSPD"), 0, 0, 0, 0)
		if i%2 == 0 {
			binary.BigEndian.PutUint32(msg[4:], 65535)
		} else {
			binary.BigEndian.PutUint32(msg[4:], control.HandshakeMaxFrame)
			msg = append(msg, `{"type":"hello",`...)
		}
		if _, err := c.Write(msg); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	// Wait until the server has read them all: its goroutines for the
	// connections that wait settle.
	deadline := time.Now().Add(20 * time.Second)
	last, stable := 0, 0
	for time.Now().Before(deadline) && stable < 5 {
		n := runtime.NumGoroutine()
		if n == last && n >= goroutines+preAuthConns/2 {
			stable++
		} else {
			stable = 0
		}
		last = n
		time.Sleep(200 * time.Millisecond)
	}
	used := int64(serverMemory()) - int64(base)
	t.Logf("%d connections before authentication: %d KiB of heap and stacks (%d bytes each), budget %d KiB",
		preAuthConns, used>>10, used/preAuthConns, preAuthBudget>>10)
	if used > preAuthBudget {
		t.Errorf("%d unauthenticated connections took %d KiB of memory, over the budget of %d KiB", preAuthConns, used>>10, preAuthBudget>>10)
	}
}
