package engine

import (
	"encoding/binary"
	"testing"
)

// FuzzUDPReceive feeds the UDP receiver's header handling (handle, for
// wirespeed's header and iperf3's two) a sequence of datagrams a peer
// could send: it must never panic, and its counts must agree with a
// model worked out from the datagrams themselves, independently of the
// tracker's ring.
//
// The input is: one byte choosing the format (0 wirespeed, 1 iperf3,
// 2 iperf3 with 64-bit counters), then datagrams, each a length byte and
// that many bytes.
func FuzzUDPReceive(f *testing.F) {
	for format := range byte(3) {
		var hf udpFormat
		switch format {
		case 1:
			hf = formatIperf3
		case 2:
			hf = formatIperf3Wide
		}
		// Real datagrams as the sender stamps them: in order, a gap,
		// a late one, a duplicate.
		in := []byte{format}
		for _, seq := range []uint64{0, 1, 3, 2, 2, 4} {
			b := make([]byte, 32)
			hf.stamp(b, seq, 1_700_000_000_123_456_789+seq*1000)
			in = append(in, byte(len(b)))
			in = append(in, b...)
		}
		f.Add(in)
	}
	// wirespeed's end of stream after two datagrams, then one more.
	in := []byte{0}
	for _, seq := range []uint64{0, 1} {
		b := make([]byte, 16)
		formatWirespeed.stamp(b, seq, 5)
		in = append(append(in, 16), b...)
	}
	var fin [udpHeaderLen]byte
	binary.BigEndian.PutUint64(fin[:8], finSeq)
	binary.BigEndian.PutUint64(fin[8:], 2)
	in = append(append(in, 16), fin[:]...)
	in = append(append(in, 16), make([]byte, 16)...)
	f.Add(in)
	// A stray data-header copy (huge sequence number), iperf3's 4-byte
	// stream hello, a runt.
	f.Add([]byte{0, 20, 'W', 'S', 'D', 'T', 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add([]byte{1, 4, '9', '8', '7', '6', 3, 1, 2, 3})
	f.Add([]byte{2, 12, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1})

	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 1 {
			return
		}
		var hf udpFormat
		switch data[0] % 3 {
		case 1:
			hf = formatIperf3
		case 2:
			hf = formatIperf3Wide
		}
		r := &UDPReceiver{tr: newSeqTracker(), fin: -1, hdr: hf}

		// The model: which datagrams are data and their sequence numbers.
		var (
			bytes, accepted int64
			seqs            []uint64
			fin             int64 = -1
		)
		rest := data[1:]
		for len(rest) > 0 {
			n := int(rest[0])
			rest = rest[1:]
			n = min(n, len(rest))
			b := rest[:n]
			rest = rest[n:]
			more := r.handle(b, int64(len(seqs))*1000, true)

			seq, ok := modelParse(hf, b)
			if hf == formatWirespeed && len(b) >= udpHeaderLen && binary.BigEndian.Uint64(b) == finSeq {
				fin = int64(binary.BigEndian.Uint64(b[8:16]))
				if more {
					t.Fatal("the end-of-stream datagram did not end the stream")
				}
				break
			}
			if !more {
				t.Fatalf("datagram %x ended the stream", b)
			}
			if ok {
				bytes += int64(len(b))
				accepted++
				seqs = append(seqs, seq)
			}
		}
		r.publish()
		c := r.Counters()
		if c.Bytes != bytes {
			t.Errorf("counted %d bytes, the data datagrams hold %d", c.Bytes, bytes)
		}
		if r.fin != fin {
			t.Errorf("sender total %d, the end-of-stream datagram said %d", r.fin, fin)
		}
		tr := &r.tr
		if tr.unique+tr.dup != accepted {
			t.Errorf("unique %d + duplicates %d != %d data datagrams", tr.unique, tr.dup, accepted)
		}
		if tr.unique+tr.lost != int64(tr.next) {
			t.Errorf("unique %d + lost %d != %d numbers up to the highest", tr.unique, tr.lost, tr.next)
		}
		if tr.dup < 0 || tr.ooo < 0 || tr.lost < 0 || tr.jitter < 0 {
			t.Errorf("negative count: lost %d ooo %d dup %d jitter %v", tr.lost, tr.ooo, tr.dup, tr.jitter)
		}
		// Where every number fits the tracking window, the counts are
		// exact: distinct numbers, duplicates, late arrivals, gaps.
		if len(seqs) == 0 {
			return
		}
		lo, hi := seqs[0], seqs[0]
		for _, s := range seqs {
			lo, hi = min(lo, s), max(hi, s)
		}
		if hi-lo >= seqWindow {
			return
		}
		seen := map[uint64]bool{}
		var late, dup int64
		var top uint64
		for i, s := range seqs {
			switch {
			case seen[s]:
				dup++
			case i > 0 && s < top:
				late++
			}
			seen[s] = true
			if i == 0 || s > top {
				top = s
			}
		}
		want := struct{ unique, lost, ooo, dup int64 }{int64(len(seen)), int64(hi+1) - int64(len(seen)), late, dup}
		got := struct{ unique, lost, ooo, dup int64 }{tr.unique, tr.lost, tr.ooo, tr.dup}
		if got != want {
			t.Errorf("numbers %v: unique, lost, late, dup = %v, want %v", seqs, got, want)
		}
	})
}

// modelParse is what the header formats say, written out again from
// their description: the 0-based sequence number of a data datagram.
func modelParse(f udpFormat, b []byte) (uint64, bool) {
	var seq uint64
	switch f {
	case formatWirespeed:
		if len(b) < 16 {
			return 0, false
		}
		seq = binary.BigEndian.Uint64(b)
		return seq, seq < 1<<62
	case formatIperf3:
		if len(b) < 12 {
			return 0, false
		}
		seq = uint64(binary.BigEndian.Uint32(b[8:]))
	case formatIperf3Wide:
		if len(b) < 16 {
			return 0, false
		}
		seq = binary.BigEndian.Uint64(b[8:])
	}
	if seq == 0 || seq >= 1<<62 {
		return 0, false
	}
	return seq - 1, true
}
