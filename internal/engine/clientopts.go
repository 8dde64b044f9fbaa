package engine

import "wirespeed/internal/spec"

// ClientOptions are the options of the client's data socket for stream
// st of test t, for wirespeed's client and the iperf3 client alike. The
// client binds to -B's address and --bind-dev's device, and stream i to
// --cport's port+i-1. A TCP socket takes the client's buffer, congestion
// control, no-delay, TOS and MSS; a UDP one its buffer, TOS and
// don't-fragment, and a UDP_STREAM receiver UDPReceiveBuffer when the
// user asked for no buffer. TCP_CRR dials a connection per transaction,
// each from an ephemeral port (spec refuses --cport there): its options
// have no port, whatever st is.
func ClientOptions(t spec.Test, st spec.Stream) Options {
	if t.Kind.UDP() {
		o := Options{
			SockBuf: t.LocalSockBuf, LocalAddr: t.BindIP(), BindDev: t.BindDev, LocalPort: t.ClientPortOf(st.ID),
			TOS: t.TOS, DontFragment: t.DontFragment,
		}
		if o.SockBuf == 0 && t.Kind == spec.UDPStream && st.Dir == spec.ServerToClient {
			o.SockBuf = UDPReceiveBuffer
		}
		return o
	}
	o := Options{
		SockBuf: t.LocalSockBuf, CongestionControl: t.CongestionControl, NoDelay: t.NoDelay,
		LocalAddr: t.BindIP(), BindDev: t.BindDev, TOS: t.StreamTOS(st), MSS: t.MSS, MPTCP: t.MPTCP,
	}
	if t.Kind != spec.TCPCRR {
		o.LocalPort = t.ClientPortOf(st.ID)
	}
	return o
}

// ServerOptions are the options of wirespeed's server's data socket for
// stream st of test t: the spec's remote buffer, TOS and, for TCP, the
// congestion control, no-delay and MSS, for UDP the don't-fragment, and a
// UDP_STREAM receiver UDPReceiveBuffer when the user asked for no buffer.
// The bind address, device and port are the client's alone. An MSS set
// on an accepted connection changes nothing the handshake settled, but
// the client's SYN carried it already, which holds the server's segments
// to it; a TCP_CRR listener, one for all its streams, has it before any
// handshake. An RRUL flow's TOS is its rrul mark (spec.Test.StreamTOS).
func ServerOptions(t spec.Test, st spec.Stream) Options {
	if t.Kind.UDP() {
		o := Options{SockBuf: t.RemoteSockBuf, TOS: t.TOS, DontFragment: t.DontFragment}
		if o.SockBuf == 0 && t.Kind == spec.UDPStream && st.Dir == spec.ClientToServer {
			o.SockBuf = UDPReceiveBuffer
		}
		return o
	}
	return Options{
		SockBuf: t.RemoteSockBuf, CongestionControl: t.CongestionControl, NoDelay: t.NoDelay,
		TOS: t.StreamTOS(st), MSS: t.MSS, MPTCP: t.MPTCP,
	}
}
