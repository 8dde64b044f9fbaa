package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"wirespeed/internal/netconf"
	"wirespeed/internal/result"
)

func TestParseDimensions(t *testing.T) {
	tests := []struct {
		name    string
		sets    []string
		want    []result.MatrixDimension
		wantErr string
	}{
		{name: "features and mtu", sets: []string{"tso=on,off", "TX-Checksumming=ON,false", "mtu=1500, 9000"}, want: []result.MatrixDimension{
			{Name: "tso", Values: []string{"on", "off"}},
			{Name: "tx-checksumming", Values: []string{"on", "off"}},
			{Name: "mtu", Values: []string{"1500", "9000"}},
		}},
		{name: "sides", sets: []string{"remote:gro=on,off", "local:gro=off"}, want: []result.MatrixDimension{
			{Name: "gro", Side: result.Remote, Values: []string{"on", "off"}},
			{Name: "gro", Side: result.Local, Values: []string{"off"}},
		}},
		{name: "no values", sets: []string{"tso"}, wantErr: "NAME=VALUE,VALUE"},
		{name: "bad value", sets: []string{"tso=on,maybe"}, wantErr: "on or off"},
		{name: "bad mtu", sets: []string{"mtu=1500,jumbo"}, wantErr: "MTU"},
		{name: "twice", sets: []string{"tso=on,off", "tso=off"}, wantErr: "already varied"},
		{name: "both and one side", sets: []string{"tso=on,off", "remote:tso=off"}, wantErr: "already varied"},
		{name: "value twice", sets: []string{"tso=on,on"}, wantErr: "twice"},
		{name: "too many", sets: []string{"mtu=1000,1100,1200,1300,1400,1500,1600,1700", "tso=on,off", "gso=on,off", "gro=on,off", "sg=on,off", "rx=on,off", "tx=on,off"}, wantErr: "more than 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseDimensions(tt.sets)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCombinations(t *testing.T) {
	dims := []result.MatrixDimension{
		{Name: "tso", Values: []string{"on", "off"}},
		{Name: "mtu", Side: result.Remote, Values: []string{"1500", "9000"}},
	}
	var got []string
	for _, c := range combinations(dims) {
		got = append(got, result.RowLabel(c))
	}
	want := []string{"tso=on remote:mtu=1500", "tso=on remote:mtu=9000", "tso=off remote:mtu=1500", "tso=off remote:mtu=9000"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestSettingsOrder: the MTU first, then features turned on, then off,
// and only what applies to the side.
func TestSettingsOrder(t *testing.T) {
	row := []result.MatrixSetting{
		{Name: "tso", Value: "on"},
		{Name: "tx-checksumming", Value: "off"},
		{Name: "gro", Side: result.Remote, Value: "on"},
		{Name: "mtu", Value: "9000"},
	}
	str := func(ss []netconf.Setting) string { return strings.Join(settingStrings(ss), " ") }
	if got, want := str(settingsFor(row, result.Local)), "mtu=9000 tso=on tx-checksumming=off"; got != want {
		t.Errorf("local: %q, want %q", got, want)
	}
	if got, want := str(settingsFor(row, result.Remote)), "mtu=9000 tso=on gro=on tx-checksumming=off"; got != want {
		t.Errorf("remote: %q, want %q", got, want)
	}
}

func TestMatrixUsageErrors(t *testing.T) {
	tests := []struct {
		args     []string
		inStderr string
	}{
		{[]string{"matrix", "--dev", "wst-x"}, "at least one --set"},
		{[]string{"matrix", "--set", "tso=on,off"}, "--dev IFACE"},
		{[]string{"matrix", "--dev", "wst-x", "--remote-netns", "wst-y", "--set", "tso=on,off"}, "give --remote-dev"},
		{[]string{"matrix", "--dev", "wst-x", "--set", "remote:tso=on,off"}, "give --remote-dev"},
		{[]string{"matrix", "--remote-dev", "wst-x", "--set", "local:tso=on,off"}, "give --dev"},
		{[]string{"matrix", "--dev", "wst-x", "--set", "tso=on,off", "--sizes", "64", "-m", "64"}, "drop -m"},
		{[]string{"matrix", "--dev", "wst-x", "--set", "tso=on,off", "--tradeoff"}, "--tradeoff"},
		{[]string{"matrix", "a", "b"}, "at most one"},
	}
	for _, tt := range tests {
		code, _, stderr := runMain(t, tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.inStderr) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, ExitUsage, tt.inStderr)
		}
	}
}

// TestMatrixRemoteRefused: against a server without --allow-netconf, a
// remote change is refused before anything changes, and the message says
// what the server needs.
func TestMatrixRemoteRefused(t *testing.T) {
	code, out, stderr := execute(t, context.Background(), "matrix", "--remote-dev", "lo", "--set", "mtu=65536", "-l", "0.2")
	if code != ExitRuntime || !strings.Contains(stderr, "--allow-netconf") || !strings.Contains(stderr, "authenticated") {
		t.Errorf("exit %d, stderr %q, stdout %q", code, stderr, out)
	}
}

// fakeChanger records what a matrix asks of a device.
type fakeChanger struct {
	sets     [][]netconf.Setting
	panicAt  int // panic in this set call (1-based); 0 never
	finished int
	kept     bool
	abandons atomic.Int32 // abandon may run on another goroutine
}

func (f *fakeChanger) side() result.Side { return result.Local }
func (f *fakeChanger) device() result.MatrixDevice {
	return result.MatrixDevice{Dev: "fake0", Via: "local"}
}
func (f *fakeChanger) check(context.Context, []netconf.Setting) error {
	return nil
}
func (f *fakeChanger) set(_ context.Context, s []netconf.Setting) ([]netconf.SettingChange, error) {
	f.sets = append(f.sets, s)
	if len(f.sets) == f.panicAt {
		panic("boom")
	}
	return nil, nil
}
func (f *fakeChanger) finish(_ context.Context, keep bool) error {
	f.finished++
	f.kept = keep
	return nil
}
func (f *fakeChanger) abandon() { f.abandons.Add(1) }

// TestMatrixPanicRestores: a panic in the middle of a matrix restores
// the devices (abandon: even with --keep) and goes on panicking.
func TestMatrixPanicRestores(t *testing.T) {
	fc := &fakeChanger{}
	dims, _ := parseDimensions([]string{"tso=on,off"})
	var out bytes.Buffer
	m := &matrixRun{e: &env{stdout: &out, stderr: &out}, f: &matrixFlags{keep: true, run: runFlags{json: true}}, dims: dims, changers: []changer{fc}}
	defer func() {
		if p := recover(); p != "boom" {
			t.Fatalf("recovered %v, want the panic to go on", p)
		}
		if n := fc.abandons.Load(); n != 1 {
			t.Errorf("abandoned %d times, want once", n)
		}
	}()
	fc.panicAt = 1 // in the first row's settings, before any measurement
	m.run(context.Background(), "test")
	t.Fatal("run returned")
}

// TestMatrixSignalRestoresAtOnce: when the command's context ends (the
// CLI's on SIGINT or SIGTERM), the devices are restored at once, not only
// when the matrix has unwound.
func TestMatrixSignalRestoresAtOnce(t *testing.T) {
	fc := &fakeChanger{}
	dims, _ := parseDimensions([]string{"tso=on,off"})
	var out bytes.Buffer
	m := &matrixRun{e: &env{stdout: &out, stderr: &out}, f: &matrixFlags{run: runFlags{json: true}}, dims: dims, changers: []changer{fc}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := m.run(ctx, "test")
	if !errors.Is(err, errInterrupted) {
		t.Errorf("run = %v, want errInterrupted", err)
	}
	// The restore at once runs on its own goroutine.
	for i := 0; i < 100 && fc.abandons.Load() == 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if fc.abandons.Load() != 1 || fc.finished != 1 || fc.kept {
		t.Errorf("abandoned %d, finished %d (keep %v); want restored at once and at the end", fc.abandons.Load(), fc.finished, fc.kept)
	}
}
