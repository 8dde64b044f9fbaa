package netconf_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"testing"

	"github.com/vishvananda/netns"

	"wirespeed/internal/lab"
	"wirespeed/internal/netconf"
	"wirespeed/internal/netdev"
	"wirespeed/internal/nstest"
)

// state is what a device looks like through readers independent of the
// session under test.
type state struct {
	mtu      int
	features map[string]bool // kernel name -> active
	fs       netdev.Features
}

func readState(t *testing.T, l *lab.Lab, s lab.HostName) state {
	t.Helper()
	host := l.Host(s)
	mtu, fs := nstest.DeviceState(t, host.Netns, host.Dev)
	st := state{mtu: mtu, features: map[string]bool{}, fs: fs}
	for _, f := range fs {
		st.features[f.Name] = f.Active
	}
	return st
}

func (s state) diff(o state) string {
	var d []string
	if s.mtu != o.mtu {
		d = append(d, fmt.Sprintf("mtu %d != %d", s.mtu, o.mtu))
	}
	for n, on := range s.features {
		if o.features[n] != on {
			d = append(d, fmt.Sprintf("%s %v != %v", n, on, o.features[n]))
		}
	}
	return strings.Join(d, ", ")
}

func open(t *testing.T, l *lab.Lab, s lab.HostName, keep bool) *netconf.Session {
	t.Helper()
	host := l.Host(s)
	ns, err := netns.GetFromName(host.Netns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close() })
	sess, err := netconf.Open(netconf.Options{Dev: host.Dev, Netns: ns, NetnsName: host.Netns, Keep: keep,
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

var tsoFeatures = []string{"tx-tcp-segmentation", "tx-tcp6-segmentation", "tx-tcp-ecn-segmentation", "tx-tcp-mangleid-segmentation"}

func TestSetAndRestoreOnVeth(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	origA, origB := readState(t, l, lab.A), readState(t, l, lab.B)
	if !origA.features["tx-tcp-segmentation"] || origA.mtu != 1500 {
		t.Fatalf("veth starts with tso %v mtu %d; the test expects on and 1500", origA.features["tx-tcp-segmentation"], origA.mtu)
	}
	s := open(t, l, lab.A, false)
	if err := s.Set(netconf.Feature("tso", false), netconf.MTU(9000)); err != nil {
		t.Fatal(err)
	}
	now := readState(t, l, lab.A)
	for _, n := range tsoFeatures {
		if on, ok := now.features[n]; ok && on {
			t.Errorf("%s still on after tso=off", n)
		}
	}
	if now.mtu != 9000 {
		t.Errorf("mtu %d after setting 9000", now.mtu)
	}
	if d := origB.diff(readState(t, l, lab.B)); d != "" {
		t.Errorf("the other end changed: %s", d)
	}
	ch := s.Changes()
	if len(ch) != 2 || ch[0].Setting != "tso" || ch[0].Before != "on" || ch[0].After != "off" ||
		ch[1].Setting != "mtu" || ch[1].Before != "1500" || ch[1].After != "9000" || ch[0].Namespace != l.A.Netns {
		t.Errorf("changes = %+v", ch)
	}
	if len(ch) > 0 && len(ch[0].Features) < 2 {
		t.Errorf("tso=off recorded %d kernel features, want every TSO one: %+v", len(ch[0].Features), ch[0].Features)
	}
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if d := origA.diff(readState(t, l, lab.A)); d != "" {
		t.Errorf("not restored: %s", d)
	}
	if err := s.Restore(); err != nil {
		t.Errorf("second Restore: %v", err)
	}
}

// TestTxChecksumOff turns tx checksumming off, which makes the kernel turn
// TSO off too; restoring tx must bring TSO back.
func TestTxChecksumOff(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	orig := readState(t, l, lab.A)
	s := open(t, l, lab.A, false)
	if err := s.Set(netconf.Feature("tx-checksumming", false)); err != nil {
		t.Fatal(err)
	}
	now := readState(t, l, lab.A)
	if now.features["tx-checksum-ip-generic"] || now.features["tx-tcp-segmentation"] {
		t.Errorf("after tx off: csum %v tso %v, want both off", now.features["tx-checksum-ip-generic"], now.features["tx-tcp-segmentation"])
	}
	// The environment record's TSO follows the kernel's feature for the
	// test's IPv4 traffic, whatever else of the group (accecn on this
	// kernel) stayed on.
	for _, o := range now.fs.OffloadsFor(netip.MustParseAddr("127.0.0.1")) {
		if o.Name == "tcp-segmentation-offload" && o.On != now.features["tx-tcp-segmentation"] {
			t.Errorf("record says tso %v, the kernel's tx-tcp-segmentation is %v (group: %v)", o.On, now.features["tx-tcp-segmentation"], now.fs)
		}
	}
	if c := s.Changes()[0]; c.After != "off" {
		t.Errorf("tx-checksumming change recorded as %s -> %s, want -> off", c.Before, c.After)
	}
	found := false
	for _, f := range s.Changes()[0].Features {
		found = found || f.Name == "tx-tcp-segmentation" && f.Before && !f.After
	}
	if !found {
		t.Errorf("the consequence on TSO is not recorded: %+v", s.Changes())
	}
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if d := orig.diff(readState(t, l, lab.A)); d != "" {
		t.Errorf("not restored: %s", d)
	}
}

func TestFixedOnVeth(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	s := open(t, l, lab.A, false)
	defer s.Restore()
	err := s.Set(netconf.Feature("lro", true)) // veth has no LRO to turn on
	if !errors.Is(err, netdev.ErrFixed) || !strings.Contains(err.Error(), "large-receive-offload") {
		t.Errorf("error = %v, want ErrFixed naming large-receive-offload", err)
	}
}

func TestKeepOnVeth(t *testing.T) {
	l := nstest.NewNamespacePair(t)
	s := open(t, l, lab.A, true)
	if err := s.Set(netconf.Feature("gso", false)); err != nil {
		t.Fatal(err)
	}
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if readState(t, l, lab.A).features["tx-generic-segmentation"] {
		t.Error("Keep: gso was restored")
	}
}
