package result

import (
	"math"
	"testing"

	"wirespeed/internal/spec"
)

func flow(dir spec.Direction, side Side, role Role, elapsed float64, perStream map[int]int64, ivs ...Interval) Flow {
	f := Flow{Direction: dir, Side: side, Role: role, ElapsedS: elapsed, Intervals: ivs}
	for id := 1; id <= 4; id++ {
		b, ok := perStream[id]
		if !ok {
			continue
		}
		f.Bytes += b
		f.Streams = append(f.Streams, StreamSide{ID: id, Side: side, Role: role, Bytes: b, TotalBytes: b + 10, Retransmits: int64(id)})
	}
	return f
}

func TestJoinBidir(t *testing.T) {
	sp := spec.Default()
	sp.Kind = spec.TCPBidir
	local := SideResult{Side: Local, Flows: []Flow{
		flow(spec.ClientToServer, Local, Sender, 2.0, map[int]int64{1: 1000},
			Interval{StartS: 0, EndS: 1, Bytes: 500, Retransmits: 3}, Interval{StartS: 1, EndS: 2, Bytes: 500, Retransmits: 4}),
		flow(spec.ServerToClient, Local, Receiver, 4.0, map[int]int64{2: 3000},
			Interval{StartS: 0, EndS: 1, Bytes: 750, BitsPerSecond: 6000}),
	}}
	remote := SideResult{Side: Remote, Flows: []Flow{
		flow(spec.ClientToServer, Remote, Receiver, 1.0, map[int]int64{1: 900},
			Interval{StartS: 0, EndS: 1, Bytes: 450, BitsPerSecond: 3600}, Interval{StartS: 1, EndS: 2, Bytes: 450, BitsPerSecond: 3600}),
		flow(spec.ServerToClient, Remote, Sender, 4.0, map[int]int64{2: 3100},
			Interval{StartS: 0, EndS: 1, Bytes: 800, Retransmits: 7}),
	}}
	res := Join(sp, local, remote)

	if len(Texts(res.Warnings)) != 0 {
		t.Errorf("warnings: %v", Texts(res.Warnings))
	}
	c2s, s2c := res.Directions[0], res.Directions[1]
	// c2s: receiver (remote) 900 bytes over 1 s = 7200 bit/s; sender 1000 over 2 s.
	want := Summary{BitsPerSecond: 7200, SenderBitsPerSecond: 4000, Bytes: 900, SenderBytes: 1000, ElapsedS: 1, SenderElapsedS: 2, Retransmits: 1}
	if c2s.Summary != want {
		t.Errorf("c2s summary %+v, want %+v", c2s.Summary, want)
	}
	if c2s.Sender != Local || c2s.Receiver != Remote || s2c.Sender != Remote || s2c.Receiver != Local {
		t.Errorf("sides: c2s %s->%s, s2c %s->%s", c2s.Sender, c2s.Receiver, s2c.Sender, s2c.Receiver)
	}
	// Intervals: receiver's bytes, sender's retransmits.
	if got := c2s.Intervals[1]; got.Bytes != 450 || got.Retransmits != 4 {
		t.Errorf("c2s interval 1: %+v", got)
	}
	// Totals are the sums of both directions; rates add up.
	if res.Summary.Bytes != 3900 || res.Summary.SenderBytes != 4100 {
		t.Errorf("summary bytes %d/%d, want 3900/4100", res.Summary.Bytes, res.Summary.SenderBytes)
	}
	if want := 7200.0 + 3000*8/4.0; math.Abs(res.Summary.BitsPerSecond-want) > 1e-9 {
		t.Errorf("summary throughput %g, want %g", res.Summary.BitsPerSecond, want)
	}
	if res.Summary.ElapsedS != 4 || res.Summary.Retransmits != 1+2 {
		t.Errorf("summary elapsed %g retrans %d", res.Summary.ElapsedS, res.Summary.Retransmits)
	}
	if len(res.Intervals) != 2 || res.Intervals[0].Bytes != 450+750 || res.Intervals[0].BitsPerSecond != 3600+6000 || res.Intervals[1].Bytes != 450 {
		t.Errorf("summed intervals %+v", res.Intervals)
	}
	if len(res.Streams) != 2 || res.Streams[0].Sender.Side != Local || res.Streams[1].Receiver.Side != Local {
		t.Errorf("streams %+v", res.Streams)
	}
	if s := res.Streams[1].Summary; s.Bytes != 3000 || s.SenderBytes != 3100 || s.Retransmits != 2 {
		t.Errorf("stream 2 summary %+v", s)
	}
}

func TestJoinMissingRemote(t *testing.T) {
	sp := spec.Default()
	local := SideResult{Side: Local, Flows: []Flow{flow(spec.ClientToServer, Local, Sender, 1, map[int]int64{1: 10})}}
	res := Join(sp, local, SideResult{Side: Remote, Error: "boom"})
	if len(Texts(res.Warnings)) != 2 {
		t.Fatalf("warnings %v, want one for the missing receiver and one for the error", Texts(res.Warnings))
	}
	if res.Summary.BitsPerSecond != 0 || res.Summary.SenderBytes != 10 {
		t.Errorf("summary %+v", res.Summary)
	}
}

func TestRate(t *testing.T) {
	if Rate(1000, 0) != 0 || Rate(125, 1) != 1000 || Ratio(1, 0) != 0 || Ratio(1, 4) != 0.25 {
		t.Error("Rate or Ratio wrong")
	}
}

func TestJoinTick(t *testing.T) {
	rcv := IntervalReport{Direction: spec.ClientToServer, Role: Receiver, Index: 3,
		Interval: Interval{Bytes: 100}, Streams: []StreamInterval{{ID: 1, Interval: Interval{Bytes: 60}}, {ID: 2, Interval: Interval{Bytes: 40}}}}
	snd := IntervalReport{Direction: spec.ClientToServer, Role: Sender, Index: 3,
		Interval: Interval{Bytes: 110, Retransmits: 5, CwndBytes: 9}, Streams: []StreamInterval{{ID: 2, Interval: Interval{Retransmits: 5, CwndBytes: 4}}}}
	tk := JoinTick(rcv, &snd)
	if tk.Interval.Bytes != 100 || tk.Interval.Retransmits != 5 || tk.Index != 3 {
		t.Errorf("tick %+v", tk.Interval)
	}
	if tk.Streams[1].Retransmits != 5 || tk.Streams[1].Bytes != 40 || tk.Streams[0].Retransmits != 0 {
		t.Errorf("streams %+v", tk.Streams)
	}
	if rcv.Streams[1].Retransmits != 0 {
		t.Errorf("JoinTick changed its input")
	}
}
