package netconf

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"
)

// ErrHeld is returned by Open when another session of this process is
// changing the device, under whichever of its names (an alternative name
// included) it was opened.
var ErrHeld = errors.New("another session is changing this device")

// held is every device a Session of this process has open, by identity:
// its network namespace and interface index, never a name, so that a
// device's alternative names and a rename cannot make it two devices.
var held = struct {
	sync.Mutex
	m map[string]string // device identity -> the name its session opened it by
}{m: map[string]string{}}

// hold takes the device for a new session opened as name.
func hold(id, name string) error {
	held.Lock()
	defer held.Unlock()
	if other, ok := held.m[id]; ok {
		if other == name {
			return fmt.Errorf("interface %s: %w; wait until that session ends", name, ErrHeld)
		}
		return fmt.Errorf("interface %s (the device opened as %s): %w; wait until that session ends", name, other, ErrHeld)
	}
	held.m[id] = name
	return nil
}

func unhold(id string) {
	held.Lock()
	delete(held.m, id)
	held.Unlock()
}

// addr is one address of a device, as the session found it when it
// opened; sys is the platform's full record, to put it back as it was.
type addr struct {
	prefix netip.Prefix
	sys    any
}

// missing returns the addresses of orig that are not in now.
func missing(orig, now []addr) []addr {
	have := map[netip.Prefix]bool{}
	for _, a := range now {
		have[a.prefix] = true
	}
	var out []addr
	for _, a := range orig {
		if !have[a.prefix] {
			out = append(out, a)
		}
	}
	return out
}

func prefixes(as []addr) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.prefix.String()
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

// hasIPv6 says whether as holds an IPv6 address.
func hasIPv6(as []addr) bool {
	for _, a := range as {
		if a.prefix.Addr().Is6() && !a.prefix.Addr().Is4In6() {
			return true
		}
	}
	return false
}
