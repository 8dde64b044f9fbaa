package servertest

import (
	"context"
	"net"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// TestStartAndDial: a started server runs a test for a dialed client,
// and stops listening when stopped; a dial to nothing fails.
func TestStartAndDial(t *testing.T) {
	testkit.VerifyNoLeaks(t)
	addr, stop := Start(t, server.Config{})
	c := Dial(t, client.Config{Addr: addr})
	sp := spec.Default()
	sp.Duration, sp.Interval = 200*time.Millisecond, 0
	res, err := c.Run(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Bytes <= 0 {
		t.Errorf("a test on the started server moved %d bytes", res.Summary.Bytes)
	}
	c.Close()
	stop()
	if nc, err := net.Dial("tcp", addr); err == nil {
		nc.Close()
		t.Errorf("%s still accepts connections after stop", addr)
	}
	if _, err := TryDial(t, client.Config{Addr: addr}); err == nil {
		t.Error("TryDial to a stopped server succeeded")
	}
}
