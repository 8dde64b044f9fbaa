package result

import (
	"strings"
	"testing"
	"time"

	"wirespeed/internal/spec"
)

// TestJoinAmount: a fixed amount (-n 10000) is reached when the
// receiver's streams count all of it over their life (TotalBytes, which
// flow makes 10 more than the window's bytes), and the warning says
// which side fell short, from the two sides' totals alone: no side says
// itself whether it reached the amount.
func TestJoinAmount(t *testing.T) {
	const a = 10000
	for _, tt := range []struct {
		name      string
		kind      spec.Kind
		sent, got map[int]int64 // window bytes per stream; nil for no figures
		reached   bool
		wantWarn  string // "" for none
		noSender  bool
	}{
		{name: "receiver got exactly the amount", kind: spec.TCPStream,
			sent: map[int]int64{1: 4990, 2: 4990}, got: map[int]int64{1: 4990, 2: 4990}, reached: true},
		{name: "sender ran out of -l", kind: spec.TCPStream,
			sent: map[int]int64{1: 3990, 2: 3990}, got: map[int]int64{1: 3990, 2: 3990},
			wantWarn: "client_to_server: the amount of 10000 bytes was not reached: the sender sent 8000 bytes before the length (-l 3s) ran out"},
		{name: "receiver one byte short", kind: spec.TCPStream,
			sent: map[int]int64{1: 4990, 2: 4990}, got: map[int]int64{1: 4990, 2: 4989},
			wantWarn: "client_to_server: the amount of 10000 bytes was not reached: the sender sent 10000 bytes, the receiver got 9999"},
		// The server sends, as an iperf3 server would: its flow's totals
		// name the cause as well.
		{name: "server sender ran out of -l", kind: spec.TCPMaerts,
			sent: map[int]int64{1: 2990, 2: 2990}, got: map[int]int64{1: 2990, 2: 2990},
			wantWarn: "server_to_client: the amount of 10000 bytes was not reached: the sender sent 6000 bytes before the length (-l 3s) ran out"},
		{name: "no sender figures", kind: spec.TCPStream, noSender: true,
			got:      map[int]int64{1: 3990, 2: 3990},
			wantWarn: "client_to_server: the amount of 10000 bytes was not reached: the receiver got 8000 bytes (no sender figures)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sp := spec.Default()
			sp.Kind, sp.Parallel, sp.AmountBytes, sp.Duration = tt.kind, 2, a, 3*time.Second
			dir := sp.Directions()[0]
			snd, rcv := SideResult{Side: Local}, SideResult{Side: Remote}
			if dir == spec.ServerToClient {
				snd, rcv = rcv, snd
			}
			if !tt.noSender {
				snd.Flows = []Flow{flow(dir, snd.Side, Sender, 3, tt.sent)}
			}
			rcv.Flows = []Flow{flow(dir, rcv.Side, Receiver, 3, tt.got)}
			local, remote := snd, rcv
			if snd.Side == Remote {
				local, remote = rcv, snd
			}
			res := Join(sp, local, remote)
			d := res.Directions[0]
			if d.Amount == nil || d.Amount.Bytes != a || d.Amount.Reached != tt.reached {
				t.Errorf("amount %+v, want %d bytes, reached %v", d.Amount, a, tt.reached)
			}
			var warns []string
			for _, w := range Texts(res.Warnings) {
				if strings.Contains(w, "amount") {
					warns = append(warns, w)
				}
			}
			switch {
			case tt.wantWarn == "" && len(warns) != 0:
				t.Errorf("warnings %q, want none", warns)
			case tt.wantWarn != "" && (len(warns) != 1 || warns[0] != tt.wantWarn):
				t.Errorf("warnings %q, want %q", warns, tt.wantWarn)
			}
		})
	}
}
