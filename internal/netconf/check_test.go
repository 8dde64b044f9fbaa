package netconf

import (
	"errors"
	"strings"
	"testing"

	"wirespeed/internal/netdev"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		settings []Setting
		wantErr  []string // substrings, all of them
	}{
		{"fine", []Setting{Feature("tso", false), Feature("tx-checksumming", true), MTU(9000)}, nil},
		{"kernel name", []Setting{Feature("rx-gro", true)}, nil},
		{"unknown", []Setting{Feature("warp", true)}, []string{`"warp"`}},
		{"fixed", []Setting{Feature("lro", true)}, []string{"large-receive-offload", "fixed"}},
		{"every problem at once", []Setting{Feature("warp", true), Feature("lro", true), MTU(-1)},
			[]string{`"warp"`, "large-receive-offload", "must be positive"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newFake()
			s := session(t, d, Options{})
			defer s.Restore()
			err := s.Check(tt.settings...)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
			} else {
				if err == nil {
					t.Fatal("Check: no error")
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
			}
			if len(d.setLogs) != 0 || d.mtuV != 1500 {
				t.Errorf("Check changed the device: %d feature changes, mtu %d", len(d.setLogs), d.mtuV)
			}
		})
	}
	if !errors.Is(func() error {
		s := session(t, newFake(), Options{})
		defer s.Restore()
		return s.Check(Feature("lro", true))
	}(), netdev.ErrFixed) {
		t.Error("a fixed feature's error does not wrap netdev.ErrFixed")
	}
}

// TestVerifyDependentFeature sets a combination the kernel cannot hold:
// TSO on while tx checksumming is off. Setting them in order succeeds
// setting by setting (TSO on, then checksumming off, which takes TSO
// with it), and Verify is what tells.
func TestVerifyDependentFeature(t *testing.T) {
	d := newFake()
	s := session(t, d, Options{})
	defer s.Restore()
	combo := []Setting{Feature("tso", true), Feature("tx-checksumming", false)}
	if err := s.Set(combo...); err != nil {
		t.Fatalf("Set: %v", err)
	}
	err := s.Verify(combo...)
	if !errors.Is(err, ErrNotApplied) || !strings.Contains(err.Error(), "tso is not on") {
		t.Errorf("Verify = %v, want ErrNotApplied naming tso", err)
	}
	ok := []Setting{Feature("tx-checksumming", true), Feature("tso", false), MTU(9000)}
	if err := s.Set(ok...); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if err := s.Verify(ok...); err != nil {
		t.Errorf("Verify after a possible combination: %v", err)
	}
	if err := s.Verify(MTU(1500)); !errors.Is(err, ErrNotApplied) || !strings.Contains(err.Error(), "mtu is 9000") {
		t.Errorf("Verify(mtu 1500) at 9000 = %v", err)
	}
}

func TestRestoreNowIgnoresKeep(t *testing.T) {
	d := newFake()
	s := session(t, d, Options{Keep: true})
	if err := s.Set(Feature("tso", false), MTU(9000)); err != nil {
		t.Fatal(err)
	}
	if err := s.RestoreNow(); err != nil {
		t.Fatal(err)
	}
	if !d.active("tx-tcp-segmentation") || d.mtuV != 1500 {
		t.Errorf("after RestoreNow with Keep: tso %v mtu %d, want on and 1500", d.active("tx-tcp-segmentation"), d.mtuV)
	}
	if err := s.Restore(); err != nil {
		t.Errorf("Restore after RestoreNow: %v", err)
	}
	if err := s.Check(MTU(1500)); !errors.Is(err, ErrEnded) {
		t.Errorf("Check after the end = %v, want ErrEnded", err)
	}
}
