package spec

import "testing"

func TestMessageSize(t *testing.T) {
	tests := []struct {
		name      string
		t         Test
		want      int
		wantLabel string
	}{
		{"stream uses the send size", Test{Kind: TCPStream, SendSize: 1024, RecvSize: 8, RequestSize: 3}, 1024, "1024"},
		{"udp stream uses the datagram", Test{Kind: UDPStream, SendSize: 1472}, 1472, "1472"},
		{"rr uses the request", Test{Kind: TCPRR, SendSize: 9, RequestSize: 64, ResponseSize: 1024}, 64, "64,1024"},
		{"crr uses the request", Test{Kind: TCPCRR, RequestSize: 1, ResponseSize: 1}, 1, "1,1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.t.MessageSize(); got != tt.want {
				t.Errorf("MessageSize() = %d, want %d", got, tt.want)
			}
			if got := tt.t.SizeLabel(); got != tt.wantLabel {
				t.Errorf("SizeLabel() = %q, want %q", got, tt.wantLabel)
			}
			at := tt.t.AtMessageSize(77)
			if at.MessageSize() != 77 {
				t.Errorf("AtMessageSize(77).MessageSize() = %d", at.MessageSize())
			}
			if tt.t.Kind.RR() && (at.RequestSize != 77 || at.ResponseSize != 77 || at.SendSize != tt.t.SendSize) {
				t.Errorf("AtMessageSize(77) on %s = req %d resp %d send %d, want 77 77 %d", tt.t.Kind, at.RequestSize, at.ResponseSize, at.SendSize, tt.t.SendSize)
			}
			if !tt.t.Kind.RR() && (at.SendSize != 77 || at.RequestSize != tt.t.RequestSize) {
				t.Errorf("AtMessageSize(77) on %s = send %d req %d", tt.t.Kind, at.SendSize, at.RequestSize)
			}
		})
	}
}
