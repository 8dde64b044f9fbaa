package netconf

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/netdev"
)

// fakeDev is a device with veth-like features and the kernel's rule that
// TSO is only active while scatter-gather and tx checksumming are.
type fakeDev struct {
	feats    netdev.Features // Requested is the wish; Active is computed
	mtuV     int
	maxMTU   int
	setErr   error
	closed   int
	setLogs  []map[string]bool
	addrList []addr
}

func newFake() *fakeDev {
	d := &fakeDev{mtuV: 1500, maxMTU: 65535, feats: netdev.Features{
		{Name: "tx-scatter-gather", Changeable: true, Requested: true},
		{Name: "tx-checksum-ipv4", Changeable: false},
		{Name: "tx-checksum-ip-generic", Changeable: true, Requested: true},
		{Name: "tx-tcp-segmentation", Changeable: true, Requested: true},
		{Name: "tx-tcp6-segmentation", Changeable: true, Requested: true},
		{Name: "tx-generic-segmentation", Changeable: true, Requested: true},
		{Name: "rx-gro", Changeable: true, Requested: false},
		{Name: "rx-lro", Changeable: false},
		{Name: "rx-checksum", Changeable: true, Requested: true},
	}}
	d.update()
	return d
}

func (d *fakeDev) update() {
	on := map[string]bool{}
	for _, f := range d.feats {
		on[f.Name] = f.Requested
	}
	for i := range d.feats {
		f := &d.feats[i]
		f.Active = f.Requested
		if strings.HasPrefix(f.Name, "tx-tcp") {
			f.Active = f.Requested && on["tx-scatter-gather"] && on["tx-checksum-ip-generic"]
		}
	}
}

func (d *fakeDev) features() (netdev.Features, error) {
	return append(netdev.Features(nil), d.feats...), nil
}

func (d *fakeDev) setFeatures(want map[string]bool) error {
	d.setLogs = append(d.setLogs, want)
	if d.setErr != nil {
		return d.setErr
	}
	for n, on := range want {
		found := false
		for i := range d.feats {
			if d.feats[i].Name == n {
				if !d.feats[i].Changeable {
					return netdev.ErrFixed
				}
				d.feats[i].Requested, found = on, true
			}
		}
		if !found {
			return netdev.ErrUnknownFeature
		}
	}
	d.update()
	return nil
}

func (d *fakeDev) mtu() (int, error) { return d.mtuV, nil }

func (d *fakeDev) setMTU(n int) error {
	if n > d.maxMTU {
		return errors.New("invalid argument")
	}
	d.mtuV = n
	return nil
}

func (d *fakeDev) close() { d.closed++ }

// id: every fake is a device of its own.
func (d *fakeDev) id() string { return fmt.Sprintf("fake-%p", d) }

func (d *fakeDev) addrs() ([]addr, error) { return append([]addr(nil), d.addrList...), nil }

func (d *fakeDev) addAddr(a addr) error {
	d.addrList = append(d.addrList, a)
	return nil
}

func (d *fakeDev) active(name string) bool {
	f, _ := d.feats.Get(name)
	return f.Active
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func session(t *testing.T, d *fakeDev, opts Options) *Session {
	t.Helper()
	opts.Log = quiet()
	if opts.Dev == "" {
		opts.Dev = "veth0"
	}
	s, err := newSession(opts, d)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseSettings(t *testing.T) {
	tests := []struct {
		in      string
		want    []Setting
		wantErr string
	}{
		{in: "tso=off,gso=on,mtu=9000", want: []Setting{Feature("tso", false), Feature("gso", true), MTU(9000)}},
		{in: " TSO = Off , , tx-checksumming=false", want: []Setting{Feature("tso", false), Feature("tx-checksumming", false)}},
		{in: "gro=1,lro=0", want: []Setting{Feature("gro", true), Feature("lro", false)}},
		{in: "", want: nil},
		{in: "tso", wantErr: "write NAME=VALUE"},
		{in: "=off", wantErr: "write NAME=VALUE"},
		{in: "tso=maybe", wantErr: "on or off"},
		{in: "mtu=big", wantErr: "number of bytes"},
		{in: "mtu=20", wantErr: "from 68"},
	}
	for _, tt := range tests {
		got, err := ParseSettings(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseSettings(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSettings(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseSettings(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
	if s := MTU(9000).String() + " " + Feature("tso", false).String(); s != "mtu=9000 tso=off" {
		t.Errorf("String = %q", s)
	}
}

func TestSetRecordsAndRestores(t *testing.T) {
	d := newFake()
	s := session(t, d, Options{NetnsName: "wst-t-a"})
	if err := s.Set(Feature("tx", false), MTU(9000)); err != nil {
		t.Fatal(err)
	}
	if d.active("tx-checksum-ip-generic") || d.active("tx-tcp-segmentation") || d.mtuV != 9000 {
		t.Fatalf("after Set: csum %v tso %v mtu %d", d.active("tx-checksum-ip-generic"), d.active("tx-tcp-segmentation"), d.mtuV)
	}
	want := []SettingChange{
		{Device: "veth0", Namespace: "wst-t-a", Setting: "tx", Before: "on", After: "off", Features: []FeatureChange{
			{Name: "tx-checksum-ip-generic", Before: true, After: false},
			{Name: "tx-tcp-segmentation", Before: true, After: false, Consequence: true},
			{Name: "tx-tcp6-segmentation", Before: true, After: false, Consequence: true},
		}},
		{Device: "veth0", Namespace: "wst-t-a", Setting: "mtu", Before: "1500", After: "9000"},
	}
	if diff := cmp.Diff(want, s.Changes()); diff != "" {
		t.Errorf("Changes (-want +got):\n%s", diff)
	}
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if !d.active("tx-checksum-ip-generic") || !d.active("tx-tcp-segmentation") || d.mtuV != 1500 {
		t.Errorf("after Restore: csum %v tso %v mtu %d, want on, on, 1500", d.active("tx-checksum-ip-generic"), d.active("tx-tcp-segmentation"), d.mtuV)
	}
	// Only what was touched is written back, with the original request.
	last := d.setLogs[len(d.setLogs)-1]
	if diff := cmp.Diff(map[string]bool{"tx-checksum-ip-generic": true}, last); diff != "" {
		t.Errorf("restore wrote (-want +got):\n%s", diff)
	}
	if d.closed != 1 {
		t.Errorf("device closed %d times, want 1", d.closed)
	}
}

func TestRestoreIdempotent(t *testing.T) {
	d := newFake()
	s := session(t, d, Options{})
	if err := s.Set(Feature("gro", true)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := s.Restore(); err != nil {
			t.Fatalf("Restore #%d: %v", i+1, err)
		}
	}
	if n := len(d.setLogs); n != 2 {
		t.Errorf("%d feature writes, want 2 (set, one restore)", n)
	}
	if d.closed != 1 {
		t.Errorf("closed %d times, want 1", d.closed)
	}
	if err := s.Set(Feature("gro", true)); !errors.Is(err, ErrEnded) {
		t.Errorf("Set after Restore: %v, want ErrEnded", err)
	}
}

func TestRestoreWithoutChanges(t *testing.T) {
	d := newFake()
	s := session(t, d, Options{})
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if len(d.setLogs) != 0 {
		t.Errorf("restore wrote %v with nothing changed", d.setLogs)
	}
}

func TestKeep(t *testing.T) {
	d := newFake()
	s := session(t, d, Options{Keep: true})
	if err := s.Set(Feature("tso", false), MTU(9000)); err != nil {
		t.Fatal(err)
	}
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if d.active("tx-tcp-segmentation") || d.mtuV != 9000 {
		t.Errorf("Keep: tso %v mtu %d, want the last setting left (off, 9000)", d.active("tx-tcp-segmentation"), d.mtuV)
	}
}

func TestFixed(t *testing.T) {
	d := newFake()
	s := session(t, d, Options{})
	err := s.Set(Feature("lro", true))
	if !errors.Is(err, netdev.ErrFixed) || !strings.Contains(err.Error(), "large-receive-offload") {
		t.Errorf("error = %v, want ErrFixed naming large-receive-offload", err)
	}
	if len(d.setLogs) != 0 || len(s.Changes()) != 0 {
		t.Errorf("a fixed feature was written or recorded: %v %v", d.setLogs, s.Changes())
	}
}

func TestNotApplied(t *testing.T) {
	d := newFake()
	s := session(t, d, Options{})
	if err := s.Set(Feature("sg", false)); err != nil {
		t.Fatal(err)
	}
	err := s.Set(Feature("tso", true)) // TSO cannot be on without SG
	if !errors.Is(err, ErrNotApplied) || !strings.Contains(err.Error(), "tx-tcp-segmentation") {
		t.Errorf("error = %v, want ErrNotApplied naming tx-tcp-segmentation", err)
	}
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if !d.active("tx-tcp-segmentation") || !d.active("tx-scatter-gather") {
		t.Error("not restored")
	}
}

func TestErrors(t *testing.T) {
	d := newFake()
	s := session(t, d, Options{})
	if err := s.Set(Feature("turbo", true)); !errors.Is(err, netdev.ErrUnknownFeature) {
		t.Errorf("unknown feature: %v", err)
	}
	if err := s.Set(MTU(70000)); err == nil || !strings.Contains(err.Error(), "set mtu 70000 on veth0") {
		t.Errorf("too large MTU: %v", err)
	}
	if err := s.Restore(); err != nil {
		t.Errorf("Restore after a failed MTU: %v", err)
	}
}

func TestRestoreReportsFailure(t *testing.T) {
	d := newFake()
	s := session(t, d, Options{})
	if err := s.Set(Feature("gso", false)); err != nil {
		t.Fatal(err)
	}
	d.setErr = errors.New("no such device")
	err := s.Restore()
	if err == nil || !strings.Contains(err.Error(), "restore features of veth0: no such device") {
		t.Errorf("error = %v", err)
	}
	if err2 := s.Restore(); err2 != err {
		t.Errorf("second Restore = %v, want the first's result", err2)
	}
}

// TestErrUnsupported checks that a caller can test what the package
// returns for errors.ErrUnsupported as well as for ErrUnsupported.
func TestErrUnsupported(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", ErrUnsupported)
	if !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, ErrUnsupported) {
		t.Errorf("%v: want it to match errors.ErrUnsupported and ErrUnsupported", err)
	}
}
