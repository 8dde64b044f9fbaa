package server

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"
	"go.uber.org/goleak"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/nstest"
	"wirespeed/internal/spec"
)

// ncKey is the pre-shared key of the netconf tests' servers and clients.
var ncKey = []byte("0123456789abcdef0123456789abcdef")

// ncDialKey is ncDial for a client proving key.
func ncDialKey(t *testing.T, addr string, key []byte) *client.Client {
	t.Helper()
	c, err := client.Dial(context.Background(), client.Config{Addr: addr, Tool: "test", Hostname: "client", Security: client.Security{PSK: key}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestNetconfForbidden: a session may change the server's devices only
// when the server allows it and the session is authenticated with the
// server's pre-shared key; the refusal names both requirements and which
// one is missing, and leaves the session usable. Allowed and
// authenticated, a check (which changes nothing) goes through.
func TestNetconfForbidden(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name    string
		allow   bool
		key     []byte
		missing string // "" for allowed
	}{
		{"neither", false, nil, "has neither"},
		{"not allowed", false, ncKey, "without --allow-netconf"},
		{"not authenticated", true, nil, "not authenticated"},
		{"allowed", true, ncKey, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, stop := ncServer(t, Config{AllowNetconf: tt.allow, Auth: Auth{PSK: tt.key}}, nil)
			defer stop()
			c := ncDialKey(t, addr, tt.key)
			defer c.Close()
			_, err := c.Netconf(context.Background(), control.NetconfCheck, "lo", []string{"mtu=65536"})
			if tt.missing == "" {
				if err != nil {
					t.Fatalf("check by an authenticated client of a server that allows it: %v", err)
				}
				return
			}
			if !control.HasCode(err, control.CodeForbidden) {
				t.Fatalf("Netconf = %v, want a %s error", err, control.CodeForbidden)
			}
			for _, want := range []string{"--allow-netconf", "authenticated", "--psk-file", tt.missing} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %q does not say %q", err, want)
				}
			}
			// The session goes on: a run still works.
			sp := spec.Default()
			sp.Duration, sp.Interval = 200*time.Millisecond, 0
			if _, err := c.Run(context.Background(), sp); err != nil {
				t.Errorf("run after the refusal: %v", err)
			}
		})
	}
}

// devState is what a test compares before and after: the MTU and every
// kernel feature's state of a device in a namespace.
func devState(t *testing.T, ns netns.NsHandle, dev string) string {
	t.Helper()
	mtu, fs := nstest.DeviceStateAt(t, ns, dev)
	var b strings.Builder
	b.WriteString("mtu=" + strconv.Itoa(mtu))
	for _, f := range fs {
		b.WriteString(" " + f.Name + "=")
		if f.Active {
			b.WriteString("on")
		} else {
			b.WriteString("off")
		}
	}
	return b.String()
}

// TestNetconfRestoredWhenSessionEnds changes a lab device through the
// server, in each of the ways a session can end, and checks that the
// device is exactly as before each time; with keep, the change stays.
func TestNetconfRestoredWhenSessionEnds(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	ns, err := netns.GetFromName(l.A.Netns)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	dev := l.A.Dev
	orig := devState(t, ns, dev)
	// The lab's namespace stands in for the server's own (netns); the
	// sessions authenticate with the key as real ones do.
	prepare := func(s *Server) { s.nc.netns = ns }
	set := func(t *testing.T, c *client.Client) {
		t.Helper()
		reply, err := c.Netconf(context.Background(), control.NetconfSet, dev, []string{"tso=off", "tx-checksumming=off", "mtu=9000"})
		if err != nil {
			t.Fatal(err)
		}
		if len(reply.Changes) != 3 || reply.Env == nil {
			t.Errorf("reply: %d changes, env %v; want 3 and a record", len(reply.Changes), reply.Env != nil)
		}
		if now := devState(t, ns, dev); now == orig || !strings.Contains(now, "mtu=9000") || !strings.Contains(now, "tx-tcp-segmentation=off") {
			t.Fatalf("after set: %s", now)
		}
	}
	waitRestored := func(t *testing.T, how string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			now := devState(t, ns, dev)
			if now == orig {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: device not restored:\nbefore %s\nnow    %s", how, orig, now)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	t.Run("bye", func(t *testing.T) {
		addr, stop := ncServer(t, Config{AllowNetconf: true, Auth: Auth{PSK: ncKey}}, prepare)
		defer stop()
		c := ncDialKey(t, addr, ncKey)
		set(t, c)
		c.Close()
		waitRestored(t, "after bye")
	})
	t.Run("restore request", func(t *testing.T) {
		addr, stop := ncServer(t, Config{AllowNetconf: true, Auth: Auth{PSK: ncKey}}, prepare)
		defer stop()
		c := ncDialKey(t, addr, ncKey)
		set(t, c)
		if _, err := c.Netconf(context.Background(), control.NetconfRestore, dev, nil); err != nil {
			t.Fatal(err)
		}
		if now := devState(t, ns, dev); now != orig {
			t.Fatalf("after restore: %s", now)
		}
	})
	t.Run("connection lost", func(t *testing.T) {
		addr, stop := ncServer(t, Config{AllowNetconf: true}, func(s *Server) { s.nc.netns, s.nc.authenticateAll = ns, true })
		defer stop()
		// A raw control connection (no key exchange: the server trusts
		// every session here), closed without a bye, as by a client that
		// was killed.
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		cc := control.NewConn(nc, 0)
		defer cc.Close()
		if err := cc.WriteMagic(); err != nil {
			t.Fatal(err)
		}
		if err := cc.Send(control.TypeHello, control.NewHello("test", "raw")); err != nil {
			t.Fatal(err)
		}
		if err := cc.ReadMagic(5 * time.Second); err != nil {
			t.Fatal(err)
		}
		if err := cc.Expect(control.TypeHello, nil, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		req := control.NetconfRequest{Action: control.NetconfSet, Dev: dev, Settings: []string{"tso=off", "mtu=9000"}}
		if err := cc.Send(control.TypeNetconf, req); err != nil {
			t.Fatal(err)
		}
		if err := cc.Expect(control.TypeNetconfDone, nil, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		if now := devState(t, ns, dev); !strings.Contains(now, "mtu=9000") {
			t.Fatalf("after set: %s", now)
		}
		cc.Close()
		waitRestored(t, "after the connection was lost")
	})
	t.Run("server stops", func(t *testing.T) {
		addr, stop := ncServer(t, Config{AllowNetconf: true, Auth: Auth{PSK: ncKey}}, prepare)
		c := ncDialKey(t, addr, ncKey)
		set(t, c)
		stop()
		if now := devState(t, ns, dev); now != orig {
			t.Fatalf("after the server stopped: %s", now)
		}
	})
	t.Run("second client", func(t *testing.T) {
		addr, stop := ncServer(t, Config{AllowNetconf: true, MaxTests: 2, Auth: Auth{PSK: ncKey}}, prepare)
		defer stop()
		c := ncDialKey(t, addr, ncKey)
		set(t, c)
		c2 := ncDialKey(t, addr, ncKey)
		_, err := c2.Netconf(context.Background(), control.NetconfSet, dev, []string{"mtu=1500"})
		if !control.HasCode(err, control.CodeNetconf) || !strings.Contains(err.Error(), "another client") {
			t.Errorf("second client's change = %v, want refused: another client holds the device", err)
		}
		c.Close()
		waitRestored(t, "after the first client's bye")
	})
	t.Run("bad requests", func(t *testing.T) {
		addr, stop := ncServer(t, Config{AllowNetconf: true, Auth: Auth{PSK: ncKey}}, prepare)
		defer stop()
		c := ncDialKey(t, addr, ncKey)
		for _, tc := range []struct {
			dev      string
			settings []string
			want     string
		}{
			{"wst-nonesuch", []string{"mtu=1500"}, "wst-nonesuch"},
			{dev, []string{"warp=on"}, `"warp"`},
			{dev, []string{"lro=on"}, "fixed"},
			{"../etc", []string{"mtu=1500"}, "not an interface name"},
		} {
			_, err := c.Netconf(context.Background(), control.NetconfCheck, tc.dev, tc.settings)
			if !control.HasCode(err, control.CodeNetconf) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("check %s %v = %v, want %q", tc.dev, tc.settings, err, tc.want)
			}
		}
		if _, err := c.Netconf(context.Background(), control.NetconfCheck, dev, []string{"tso=off", "mtu=9000"}); err != nil {
			t.Errorf("check of possible settings: %v", err)
		}
		if now := devState(t, ns, dev); now != orig {
			t.Fatalf("check changed the device: %s", now)
		}
	})
	t.Run("keep", func(t *testing.T) {
		addr, stop := ncServer(t, Config{AllowNetconf: true, Auth: Auth{PSK: ncKey}}, prepare)
		defer stop()
		c := ncDialKey(t, addr, ncKey)
		set(t, c)
		if _, err := c.Netconf(context.Background(), control.NetconfKeep, dev, nil); err != nil {
			t.Fatal(err)
		}
		c.Close()
		stop()
		if now := devState(t, ns, dev); !strings.Contains(now, "mtu=9000") {
			t.Fatalf("after keep and bye: %s, want the settings kept", now)
		}
	})
}
