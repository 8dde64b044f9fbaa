package spec

import (
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	base := Default()
	base.SendBatch, base.RecvBatch = 1, 1 // where a command line starts
	for _, tc := range []struct {
		name    string
		kind    Kind
		mod     func(*Test)
		given   Given
		want    func(*Test)
		wantErr string
	}{
		{name: "tcp stream as given", kind: TCPStream,
			want: func(t *Test) { t.SendBatch, t.RecvBatch = 0, 0 }},
		{name: "-R on TCP_STREAM is TCP_MAERTS", kind: TCPStream, given: Given{Reverse: true},
			want: func(t *Test) { t.Kind = TCPMaerts; t.SendBatch, t.RecvBatch = 0, 0 }},
		{name: "-R on UDP_STREAM reverses it", kind: UDPStream, given: Given{Reverse: true},
			want: func(t *Test) { t.Reverse = true; t.SendSize = 1472; t.RxTimestamp = RxTimestampClock }},
		{name: "-R on TCP_RR", kind: TCPRR, given: Given{Reverse: true}, wantErr: "-R reverses TCP_STREAM and UDP_STREAM; it does not apply to TCP_RR"},
		// 1500-byte MTU less 20 (IPv4) and 8 (UDP); IPv6's header is 40.
		{name: "UDP default size", kind: UDPStream, want: func(t *Test) { t.SendSize = 1472; t.RxTimestamp = RxTimestampClock }},
		{name: "UDP default size over IPv6", kind: UDPStream, given: Given{IPVersion: 6},
			want: func(t *Test) { t.SendSize = 1452; t.IPVersion = 6; t.RxTimestamp = RxTimestampClock }},
		{name: "UDP size given stays", kind: UDPStream, mod: func(t *Test) { t.SendSize = 1000 }, given: Given{SendSizeSet: true},
			want: func(t *Test) { t.SendSize = 1000; t.RxTimestamp = RxTimestampClock }},
		// 65507/1400 = 46 datagrams of 1400 bytes a send.
		{name: "UDP with GSO", kind: UDPStream, mod: func(t *Test) { t.GSOSize = 1400 },
			want: func(t *Test) { t.GSOSize = 1400; t.SendSize = 46 * 1400; t.RxTimestamp = RxTimestampClock }},
		{name: "UDP batches kept", kind: UDPStream, mod: func(t *Test) { t.SendBatch = 8 },
			want: func(t *Test) { t.SendBatch = 8; t.SendSize = 1472; t.RxTimestamp = RxTimestampClock }},
		// One datagram per call: the receiver's clock; several: the
		// kernel's stamp for each.
		{name: "UDP receive batch times by the kernel", kind: UDPStream, mod: func(t *Test) { t.RecvBatch = 8 },
			want: func(t *Test) { t.RecvBatch = 8; t.SendSize = 1472; t.RxTimestamp = RxTimestampKernel }},
		{name: "UDP GRO times by the kernel", kind: UDPStream, mod: func(t *Test) { t.GRO = true },
			want: func(t *Test) { t.GRO = true; t.SendSize = 1472; t.RxTimestamp = RxTimestampKernel }},
		{name: "UDP kernel stamps asked", kind: UDPStream, mod: func(t *Test) { t.RxTimestamp = RxTimestampKernel },
			want: func(t *Test) { t.SendSize = 1472; t.RxTimestamp = RxTimestampKernel }},
		{name: "clock with a receive batch refused", kind: UDPStream, mod: func(t *Test) { t.RecvBatch = 8; t.RxTimestamp = RxTimestampClock },
			wantErr: "need --rx-timestamp kernel"},
		{name: "rx timestamp on TCP refused", kind: TCPStream, mod: func(t *Test) { t.RxTimestamp = RxTimestampKernel },
			wantErr: "--rx-timestamp applies to UDP_STREAM"},
		{name: "rx timestamp unknown", kind: UDPStream, mod: func(t *Test) { t.RxTimestamp = "nic" },
			wantErr: `--rx-timestamp "nic"`},
		{name: "batch on TCP refused", kind: TCPStream, mod: func(t *Test) { t.SendBatch = 8 }, wantErr: "--send-batch applies to UDP_STREAM"},
		{name: "IPv4 asked", kind: TCPRR, given: Given{IPVersion: 4},
			want: func(t *Test) { t.IPVersion = 4; t.SendBatch, t.RecvBatch = 0, 0 }},
		{name: "invalid after defaults", kind: TCPStream, mod: func(t *Test) { t.Parallel = 0 }, wantErr: "parallel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base
			in.Kind = tc.kind
			if tc.mod != nil {
				tc.mod(&in)
			}
			got, err := Resolve(in, tc.given)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := base
			want.Kind = tc.kind
			if tc.want != nil {
				tc.want(&want)
			}
			if got != want {
				t.Errorf("Resolve:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestLookupNetwork: -4 and -6 ask the resolver for one family, anything
// else for either.
func TestLookupNetwork(t *testing.T) {
	for v, want := range map[int]string{0: "ip", 4: "ip4", 6: "ip6", 5: "ip"} {
		if got := LookupNetwork(v); got != want {
			t.Errorf("LookupNetwork(%d) = %q, want %q", v, got, want)
		}
	}
}
