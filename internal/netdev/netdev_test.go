package netdev

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// vethLike is a feature list shaped like a veth device's.
var vethLike = Features{
	{Name: "tx-scatter-gather", Changeable: true, Requested: true, Active: true},
	{Name: "tx-checksum-ipv4", Changeable: false},
	{Name: "tx-checksum-ip-generic", Changeable: true, Requested: true, Active: true},
	{Name: "tx-checksum-ipv6", Changeable: false},
	{Name: "tx-tcp-segmentation", Changeable: true, Requested: true, Active: false},
	{Name: "tx-tcp-ecn-segmentation", Changeable: true, Requested: true, Active: true},
	{Name: "tx-tcp6-segmentation", Changeable: true, Requested: false, Active: false},
	{Name: "tx-generic-segmentation", Changeable: true, Requested: true, Active: true},
	{Name: "rx-gro", Changeable: true, Requested: false, Active: false},
	{Name: "rx-lro", Changeable: false, Requested: false, Active: false},
	{Name: "rx-checksum", Changeable: false, Requested: true, Active: true},
	{Name: "highdma", Changeable: false, Requested: true, Active: true},
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name      string
		wantName  string
		wantNames []string
		wantErr   error
	}{
		{name: "tso", wantName: "tcp-segmentation-offload", wantNames: []string{"tx-tcp-segmentation", "tx-tcp-ecn-segmentation", "tx-tcp6-segmentation"}},
		{name: "TCP-Segmentation-Offload", wantName: "tcp-segmentation-offload", wantNames: []string{"tx-tcp-segmentation", "tx-tcp-ecn-segmentation", "tx-tcp6-segmentation"}},
		{name: "tx", wantName: "tx-checksumming", wantNames: []string{"tx-checksum-ipv4", "tx-checksum-ip-generic", "tx-checksum-ipv6"}},
		{name: "tx-checksumming", wantName: "tx-checksumming", wantNames: []string{"tx-checksum-ipv4", "tx-checksum-ip-generic", "tx-checksum-ipv6"}},
		{name: "sg", wantName: "scatter-gather", wantNames: []string{"tx-scatter-gather"}},
		{name: "gso", wantName: "generic-segmentation-offload", wantNames: []string{"tx-generic-segmentation"}},
		{name: "gro", wantName: "generic-receive-offload", wantNames: []string{"rx-gro"}},
		{name: "lro", wantName: "large-receive-offload", wantNames: []string{"rx-lro"}},
		{name: "rx", wantName: "rx-checksumming", wantNames: []string{"rx-checksum"}},
		{name: "tx-tcp6-segmentation", wantName: "tx-tcp6-segmentation", wantNames: []string{"tx-tcp6-segmentation"}},
		{name: " highdma ", wantName: "highdma", wantNames: []string{"highdma"}},
		{name: "ufo", wantErr: ErrUnknownFeature},   // a group the device has nothing of
		{name: "turbo", wantErr: ErrUnknownFeature}, // nothing at all
		{name: "", wantErr: ErrUnknownFeature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, members, err := vethLike.Resolve(tt.name)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.wantName {
				t.Errorf("name = %q, want %q", got, tt.wantName)
			}
			var names []string
			for _, m := range members {
				names = append(names, m.Name)
			}
			if diff := cmp.Diff(tt.wantNames, names); diff != "" {
				t.Errorf("members (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveErrorListsNames(t *testing.T) {
	_, _, err := vethLike.Resolve("turbo")
	if err == nil || !strings.Contains(err.Error(), "gro, gso, lro, rx, sg, tso, tx") {
		t.Errorf("error = %v, want it to list the groups the device has", err)
	}
}

func TestOffloads(t *testing.T) {
	want := []FeatureState{
		{Name: "rx-checksumming", On: true, Fixed: true, Requested: true},
		// on because one member (generic) is on; not fixed because one can change
		{Name: "tx-checksumming", On: true, Fixed: false, Requested: true},
		{Name: "scatter-gather", On: true, Fixed: false, Requested: true},
		// off: only tx-tcp-ecn-segmentation is on, and it segments no
		// ordinary TCP (tx-tcp-segmentation and tx-tcp6-segmentation are off)
		{Name: "tcp-segmentation-offload", On: false, Fixed: false, Requested: true},
		{Name: "generic-segmentation-offload", On: true, Requested: true},
		{Name: "generic-receive-offload", On: false},
		{Name: "large-receive-offload", On: false, Fixed: true},
	}
	if diff := cmp.Diff(want, vethLike.Offloads()); diff != "" {
		t.Errorf("Offloads (-want +got):\n%s", diff)
	}
}

func TestRecord(t *testing.T) {
	got := vethLike[4:6].Record()
	want := []FeatureState{
		{Name: "tx-tcp-segmentation", On: false, Fixed: false, Requested: true},
		{Name: "tx-tcp-ecn-segmentation", On: true, Fixed: false, Requested: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Record (-want +got):\n%s", diff)
	}
}

// TestOffloadsTSOAfterTxChecksumOff is this kernel's veth after
// `ethtool -K dev tx off`: the kernel turned tx-tcp-segmentation and
// tx-tcp6-segmentation off with it and kept tx-tcp-accecn-segmentation on.
// The TSO group says off: no TCP of the test is segmented.
func TestOffloadsTSOAfterTxChecksumOff(t *testing.T) {
	fs := Features{
		{Name: "tx-checksum-ip-generic", Changeable: true, Requested: false, Active: false},
		{Name: "tx-tcp-segmentation", Changeable: true, Requested: true, Active: false},
		{Name: "tx-tcp-ecn-segmentation", Changeable: true, Requested: true, Active: false},
		{Name: "tx-tcp-accecn-segmentation", Changeable: true, Requested: true, Active: true},
		{Name: "tx-tcp6-segmentation", Changeable: true, Requested: true, Active: true},
	}
	tso := func(peer string) FeatureState {
		var p netip.Addr
		if peer != "" {
			p = netip.MustParseAddr(peer)
		}
		for _, o := range fs.OffloadsFor(p) {
			if o.Name == "tcp-segmentation-offload" {
				return o
			}
		}
		t.Fatalf("no tso group for peer %q", peer)
		return FeatureState{}
	}
	if got := tso("127.0.0.1"); got.On || !got.Requested {
		t.Errorf("IPv4 peer: tso %+v, want off (tx-tcp-segmentation), requested on", got)
	}
	// tx-tcp6-segmentation stayed on in this made-up state: IPv6 traffic
	// is segmented, and the record says so.
	if got := tso("::1"); !got.On {
		t.Errorf("IPv6 peer: tso %+v, want on (tx-tcp6-segmentation)", got)
	}
	if got := tso(""); !got.On {
		t.Errorf("no peer: tso %+v, want on (either family's feature on)", got)
	}
	fs[4].Active = false
	if got := tso(""); got.On {
		t.Errorf("no peer, both families' features off: tso %+v, want off though accecn is on", got)
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
