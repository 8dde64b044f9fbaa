package spec

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// The socket options choose where a test's packets leave from and how
// they are marked: the client's local address, device and data port
// (-B, --bind-dev, --cport), the TOS byte of both sides' data packets
// (--tos, --dscp), the TCP MSS (--mss) and whether UDP datagrams may be
// fragmented (--dont-fragment). The first three are the client's own,
// recorded so that a result says which path it measured; the server
// applies the others to its data sockets too.

// Limits of the socket options.
const (
	// MinMSS and MaxMSS are what Linux takes for TCP_MAXSEG: TCP_MIN_MSS
	// and MAX_TCP_WINDOW.
	MinMSS = 88
	MaxMSS = 32767
	// MaxTOS is the largest TOS byte; MaxDSCP the largest DiffServ code
	// point, its upper six bits.
	MaxTOS  = 255
	MaxDSCP = 63
	// MaxIfName is the longest interface name, IFNAMSIZ less its NUL.
	MaxIfName = 15
)

// dscpNames are the DiffServ code points with names (RFC 2474, 2597,
// 3246, 5865, 8622), as iperf3's --dscp knows them.
var dscpNames = map[string]int{
	"CS0": 0, "CS1": 8, "CS2": 16, "CS3": 24, "CS4": 32, "CS5": 40, "CS6": 48, "CS7": 56,
	"AF11": 10, "AF12": 12, "AF13": 14,
	"AF21": 18, "AF22": 20, "AF23": 22,
	"AF31": 26, "AF32": 28, "AF33": 30,
	"AF41": 34, "AF42": 36, "AF43": 38,
	"EF": 46, "VOICE-ADMIT": 44, "LE": 1, "DF": 0,
}

// ParseDSCP reads a DiffServ code point: a name such as EF, AF41 or CS1
// (any case) or a number 0 to 63 (decimal, 0x hex or 0 octal, as
// iperf3). It returns the code point, not the TOS byte: that is dscp<<2.
func ParseDSCP(s string) (int, error) {
	if d, ok := dscpNames[strings.ToUpper(strings.TrimSpace(s))]; ok {
		return d, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 0, 0)
	if err != nil || n < 0 || n > MaxDSCP {
		return 0, fmt.Errorf("DSCP %q: use a name (EF, AF11..AF43, CS0..CS7, LE) or a number 0 to %d", s, MaxDSCP)
	}
	return int(n), nil
}

// ParseTOS reads a TOS byte, 0 to 255, in decimal, 0x hex or 0 octal
// (iperf3's -S takes all three).
func ParseTOS(s string) (int, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 0, 0)
	if err != nil || n < 0 || n > MaxTOS {
		return 0, fmt.Errorf("TOS %q: use a number 0 to %d (decimal, 0x hex or 0 octal), or --dscp for a code point", s, MaxTOS)
	}
	return int(n), nil
}

// BindIP is t's bind address parsed, the zero Addr for none (or one
// Validate refuses).
func (t Test) BindIP() netip.Addr {
	a, _ := netip.ParseAddr(t.BindAddr)
	return a
}

// ClientPortOf is the client's data port for the stream with the given
// 1-based id under --cport, 0 for an ephemeral one.
func (t Test) ClientPortOf(id int) int {
	if t.ClientPort <= 0 {
		return 0
	}
	return t.ClientPort + id - 1
}

func (t Test) validateSockOpts() error {
	if t.BindAddr != "" {
		a, err := netip.ParseAddr(t.BindAddr)
		switch {
		case err != nil:
			return fmt.Errorf("bind address %q is not an IP address (-B takes an address of this host, such as 192.0.2.1 or 2001:db8::1)", t.BindAddr)
		case a.Zone() != "":
			return fmt.Errorf("bind address %q: give the device with --bind-dev, not a zone", t.BindAddr)
		case t.IPVersion == 4 && !a.Unmap().Is4():
			return fmt.Errorf("bind address %s is IPv6 but the test is IPv4 only (-4)", a)
		case t.IPVersion == 6 && a.Is4():
			return fmt.Errorf("bind address %s is IPv4 but the test is IPv6 only (-6)", a)
		}
	}
	if n := len(t.BindDev); n > 0 && (n > MaxIfName || strings.ContainsAny(t.BindDev, "/ \t\n\x00") || t.BindDev == "." || t.BindDev == "..") {
		return fmt.Errorf("device %q is not an interface name (at most %d characters, no '/' or spaces)", t.BindDev, MaxIfName)
	}
	if t.ClientPort != 0 {
		last := t.ClientPort + len(t.Streams()) - 1
		switch {
		case t.Kind == TCPCRR:
			return fmt.Errorf("--cport cannot apply to TCP_CRR: every transaction opens a new connection and needs a port of its own")
		case t.ClientPort < 1 || t.ClientPort > 65535:
			return fmt.Errorf("client port %d must be between 1 and 65535", t.ClientPort)
		case last > 65535:
			return fmt.Errorf("client port %d: the %d streams would use ports up to %d, beyond 65535", t.ClientPort, len(t.Streams()), last)
		}
	}
	switch {
	case t.TOS < 0 || t.TOS > MaxTOS:
		return fmt.Errorf("TOS %d must be between 0 and %d", t.TOS, MaxTOS)
	case t.MSS != 0 && (t.MSS < MinMSS || t.MSS > MaxMSS):
		return fmt.Errorf("MSS %d must be between %d and %d bytes (what Linux takes for TCP_MAXSEG)", t.MSS, MinMSS, MaxMSS)
	case t.MSS != 0 && t.Kind.UDP():
		return fmt.Errorf("--mss sets the TCP maximum segment size; %s is UDP", t.Kind)
	case t.DontFragment && !t.Kind.UDP():
		return fmt.Errorf("--dont-fragment applies to the UDP tests (UDP_STREAM, UDP_RR); TCP never sends fragments, it sizes its segments to the path (see --mss)")
	}
	return nil
}

// DSCPName names the code point of a TOS byte (EF for 0xb8), "" when the
// ECN bits are set or the code point has no name. CS0 and DF are the
// default, 0: "".
func DSCPName(tos int) string {
	if tos&3 != 0 || tos <= 0 {
		return ""
	}
	best := ""
	for n, d := range dscpNames {
		// One name per code point; DF and CS0 are 0, not shown.
		if d == tos>>2 && (best == "" || n < best) {
			best = n
		}
	}
	return best
}
