package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/netconf"
	"wirespeed/internal/servertest"
	"wirespeed/internal/testkit"
)

// fakeNetconfServer speaks just enough of the control protocol to answer
// netconf requests: it records each one and answers netconf_done, or a
// netconf_failed error for a setting named "fail".
func fakeNetconfServer(t *testing.T) (addr string, got chan control.NetconfRequest) {
	t.Helper()
	ln := testkit.Listen(t)
	got = make(chan control.NetconfRequest, 16)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		cc := control.NewConn(c, 0)
		if cc.ReadMagic(5*time.Second) != nil || cc.Expect(control.TypeHello, nil, 5*time.Second) != nil {
			return
		}
		cc.WriteMagic()
		cc.Send(control.TypeHello, control.NewHello("fake", "fake"))
		for {
			m, err := cc.Recv(5 * time.Second)
			if err != nil {
				return
			}
			switch m.Type {
			case control.TypeBye:
				cc.Send(control.TypeBye, struct{}{})
				return
			case control.TypeNetconf:
				var req control.NetconfRequest
				m.Decode(&req)
				got <- req
				if strings.Contains(strings.Join(req.Settings, ","), "fail") {
					cc.SendError(control.CodeNetconf, "wst-a: fail is not a feature")
					continue
				}
				cc.Send(control.TypeNetconfDone, control.NetconfReply{Action: req.Action, Dev: req.Dev,
					Changes: []netconf.SettingChange{{Device: req.Dev, Setting: "tso", Before: "on", After: "off"}}})
			}
		}
	}()
	return ln.Addr().String(), got
}

// TestRemoteChanger: the server's device is checked, set, and restored
// or kept with netconf requests; a refusal of a setting is an error the
// matrix skips a row for, not a lost connection.
func TestRemoteChanger(t *testing.T) {
	addr, got := fakeNetconfServer(t)
	c := servertest.Dial(t, client.Config{Addr: addr})
	defer c.Close()
	r := &remoteChanger{c: c, dev: "wst-a"}
	ctx := context.Background()
	settings := []netconf.Setting{netconf.MTU(9000), netconf.Feature("tso", false)}
	if err := r.check(ctx, settings); err != nil {
		t.Fatal(err)
	}
	changes, err := r.set(ctx, settings)
	if err != nil || len(changes) != 1 {
		t.Fatalf("set: %v, %v", changes, err)
	}
	_, err = r.set(ctx, []netconf.Setting{netconf.Feature("fail", true)})
	if !control.HasCode(err, control.CodeNetconf) {
		t.Errorf("a failed setting: %v, want a netconf_failed error", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	// After an interrupt the restore is still sent.
	if err := r.finish(cancelled, false); err != nil {
		t.Fatal(err)
	}
	want := []control.NetconfRequest{
		{Action: "check", Dev: "wst-a", Settings: []string{"mtu=9000", "tso=off"}},
		{Action: "set", Dev: "wst-a", Settings: []string{"mtu=9000", "tso=off"}},
		{Action: "set", Dev: "wst-a", Settings: []string{"fail=on"}},
		{Action: "restore", Dev: "wst-a"},
	}
	var have []control.NetconfRequest
	for range want {
		select {
		case req := <-got:
			have = append(have, req)
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d requests arrived: %+v", len(have), have)
		}
	}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	r2 := &remoteChanger{c: c, dev: "wst-a"}
	if err := r2.finish(ctx, true); err != nil {
		t.Fatal(err)
	}
	if req := <-got; req.Action != "keep" {
		t.Errorf("finish with keep sent %q", req.Action)
	}
}
