package spec

import "fmt"

// validateMPTCP refuses --mptcp where a test has no lasting TCP data
// connection to make Multipath TCP: the UDP tests, TCP_CRR (a
// connection per transaction, opened by raw sockets on Linux) and RRUL
// (whose probes are TCP_CRR's).
func (t Test) validateMPTCP() error {
	if !t.MPTCP {
		return nil
	}
	switch {
	case t.Kind.UDP():
		return fmt.Errorf("--mptcp makes the TCP data connections Multipath TCP; %s is UDP: use TCP_STREAM, TCP_MAERTS, TCP_BIDIR or TCP_RR", t.Kind)
	case t.Kind == TCPCRR, t.Kind == RRUL:
		return fmt.Errorf("--mptcp applies to TCP_STREAM, TCP_MAERTS, TCP_BIDIR and TCP_RR, whose connections last the run; %s opens a connection per transaction", t.Kind)
	}
	return nil
}
