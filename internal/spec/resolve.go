package spec

import "fmt"

// Given is what a user asked for beyond a Test's own fields: what the
// defaults that depend on the test are read from.
type Given struct {
	// Reverse asks the server to send (-R): TCP_STREAM becomes
	// TCP_MAERTS, UDP_STREAM is reversed; other tests refuse it.
	Reverse bool
	// SendSizeSet says the send size was given (-m); when it was not,
	// UDP_STREAM takes a datagram size instead of the TCP default.
	SendSizeSet bool
	// IPVersion is 4 or 6 when one was asked (-4, -6), 0 for either.
	IPVersion int
}

// Resolve returns t as the test g asks for, with the defaults that depend
// on the test filled in, validated:
//
//   - -R: TCP_STREAM runs as TCP_MAERTS, UDP_STREAM with Reverse;
//   - UDP_STREAM without a send size sends DefaultUDPSize datagrams,
//     DefaultUDP6Size over IPv6, or with GSO as many GSOSize datagrams as
//     one send carries (GSOSendSize);
//   - the UDP batches are recorded for UDP_STREAM only, the test they
//     apply to: 1 (one datagram per call, where a command line starts)
//     becomes 0, the default, for the other tests;
//   - UDP_STREAM's receiver times arrivals by its clock per receive call
//     (RxTimestampClock) unless told, or unless a call takes several
//     datagrams (--recv-batch, --gro): the kernel's stamps then;
//   - the IP version asked.
//
// Every command that makes a test out of what a user gave (run, sweep,
// matrix, mesh, lab run, run --iperf3) calls it, so that one command line
// means the same test whichever command runs it.
func Resolve(t Test, g Given) (Test, error) {
	if g.Reverse {
		switch t.Kind {
		case TCPStream, TCPMaerts:
			t.Kind = TCPMaerts
		case UDPStream:
			t.Reverse = true
		default:
			return t, fmt.Errorf("-R reverses TCP_STREAM and UDP_STREAM; it does not apply to %s", t.Kind)
		}
	}
	if t.Kind == UDPStream && !g.SendSizeSet {
		t.SendSize = DefaultUDPSize
		switch {
		case t.GSOSize > 0:
			t.SendSize = GSOSendSize(t.GSOSize) // --gso: -m is the bytes per send
		case g.IPVersion == 6:
			t.SendSize = DefaultUDP6Size
		}
	}
	if t.Kind != UDPStream {
		if t.SendBatch == 1 {
			t.SendBatch = 0
		}
		if t.RecvBatch == 1 {
			t.RecvBatch = 0
		}
	}
	if t.Kind == UDPStream && t.RxTimestamp == "" {
		// The receiver's clock per call where a call takes one datagram;
		// the kernel's stamps where it takes several.
		t.RxTimestamp = RxTimestampClock
		if t.RecvBatch > 1 || t.GRO {
			t.RxTimestamp = RxTimestampKernel
		}
	}
	if g.IPVersion != 0 {
		t.IPVersion = g.IPVersion
	}
	return t, t.Validate()
}
