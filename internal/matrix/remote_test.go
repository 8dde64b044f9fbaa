package matrix

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
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// fakeNetconfServer speaks just enough of the control protocol to answer
// netconf requests: it records each one and answers netconf_done, a
// netconf_failed error for a setting named "fail", or a forbidden error
// for every request about the device "refuse".
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
				if req.Dev == "refuse" {
					cc.SendError(control.CodeForbidden, "this server does not change its devices: start it with --allow-netconf")
					continue
				}
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
	r := NewRemote(c, "wst-a")
	ctx := context.Background()
	settings := []netconf.Setting{netconf.MTU(9000), netconf.Feature("tso", false)}
	if err := r.Check(ctx, settings); err != nil {
		t.Fatal(err)
	}
	changes, err := r.Set(ctx, settings)
	if err != nil || len(changes) != 1 {
		t.Fatalf("set: %v, %v", changes, err)
	}
	_, err = r.Set(ctx, []netconf.Setting{netconf.Feature("fail", true)})
	if !control.HasCode(err, control.CodeNetconf) {
		t.Errorf("a failed setting: %v, want a netconf_failed error", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	// After an interrupt the restore is still sent.
	if err := r.Finish(cancelled, false); err != nil {
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
	// A device never set is not restored: there is nothing to restore.
	r2 := NewRemote(c, "wst-a")
	if err := r2.Finish(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Set(ctx, settings); err != nil {
		t.Fatal(err)
	}
	if err := r2.Finish(ctx, true); err != nil {
		t.Fatal(err)
	}
	if req, keep := <-got, <-got; req.Action != "set" || keep.Action != "keep" {
		t.Errorf("finish of a device never set sent %q; finish with keep sent %q", req.Action, keep.Action)
	}
}

// TestRefusedRestoresNothing: a server that refuses to change its device
// refuses the check, before anything changed; the matrix ends with the
// refusal and asks no restore, so it reports no failed restore (which
// would tell the user the device was left changed).
func TestRefusedRestoresNothing(t *testing.T) {
	addr, got := fakeNetconfServer(t)
	c, err := client.Dial(context.Background(), client.Config{Addr: addr, Tool: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dims, _ := ParseDimensions([]string{"tso=on,off"})
	plan := Plan{Base: testSpec(), Repeat: spec.DefaultRepeat(), Dimensions: dims, Changers: []Changer{NewRemote(c, "refuse")}}
	measured := 0
	doc, err := Run(context.Background(), plan, Options{Measure: countMeasure(&measured)})
	if !control.HasCode(err, control.CodeForbidden) || !strings.Contains(err.Error(), "--dev only") {
		t.Errorf("run: %v, want the refusal", err)
	}
	if measured != 0 || len(doc.Matrix.Rows) != 0 || len(doc.Matrix.RestoreErrors) != 0 {
		t.Errorf("measured %d, rows %d, restore errors %q; want none", measured, len(doc.Matrix.Rows), doc.Matrix.RestoreErrors)
	}
	// Every request was recorded before it was answered.
	var actions []string
	for len(got) > 0 {
		actions = append(actions, (<-got).Action)
	}
	if strings.Join(actions, ",") != "check" {
		t.Errorf("requests %q, want the check only", actions)
	}
}
