package netdev

import (
	"errors"
	"os"
	"testing"

	"github.com/vishvananda/netns"
)

// TestLoopback reads the loopback device, which every Linux host has and
// which needs no privilege to read.
func TestLoopback(t *testing.T) {
	c, err := Open(netns.None())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fs, err := c.Features("lo")
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) < 20 {
		t.Errorf("lo reports %d features; kernels since 3.x report more than 20", len(fs))
	}
	for _, name := range []string{"rx-gro", "tx-generic-segmentation", "tx-tcp-segmentation", "rx-checksum"} {
		if _, ok := fs.Get(name); !ok {
			t.Errorf("lo lacks feature %s", name)
		}
	}
	// Loopback checksums are fixed on: it never computes them.
	if f, _ := fs.Get("rx-checksum"); !f.Active || f.Changeable {
		t.Errorf("lo rx-checksum = %+v, want active and fixed", f)
	}
	// The loopback driver answers no driver info; that must read as
	// "not supported", which callers turn into a warning.
	if _, err := c.DriverInfo("lo"); err != nil && !errors.Is(err, ErrUnsupported) {
		t.Errorf("DriverInfo(lo) error = %v, want nil or ErrUnsupported", err)
	}
}

func TestNoSuchDevice(t *testing.T) {
	c, err := Open(0) // the zero value means the current namespace
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for name, err := range map[string]error{
		"features":    func() error { _, err := c.Features("wst-nosuch0"); return err }(),
		"driver info": func() error { _, err := c.DriverInfo("wst-nosuch0"); return err }(),
		"link mode":   func() error { _, err := c.LinkMode("wst-nosuch0"); return err }(),
	} {
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s of a missing device: error = %v, want os.ErrNotExist", name, err)
		}
	}
	if _, err := c.Features("a-name-longer-than-ifnamsiz"); err == nil {
		t.Error("a name longer than IFNAMSIZ gave no error")
	}
}

func TestSetFeaturesRefusesFixed(t *testing.T) {
	c, err := Open(netns.None())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// rx-checksum on lo is fixed: refused before any ioctl that changes
	// anything, so this is safe on the host.
	err = c.SetFeatures("lo", map[string]bool{"rx-checksum": false})
	if !errors.Is(err, ErrFixed) {
		t.Errorf("error = %v, want ErrFixed", err)
	}
	err = c.SetFeatures("lo", map[string]bool{"no-such-feature": false})
	if !errors.Is(err, ErrUnknownFeature) {
		t.Errorf("error = %v, want ErrUnknownFeature", err)
	}
}
