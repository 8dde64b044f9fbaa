package verify

import "testing"

// TestTruthArithmetic: the truths' sizes, by hand: MSS 1448 at MTU 1500
// (1500 - 20 IP - 20 TCP - 12 timestamps), 8948 at 9000.
func TestTruthArithmetic(t *testing.T) {
	if mss(1500) != 1448 || mss(9000) != 8948 {
		t.Errorf("mss(1500) %d, mss(9000) %d, want 1448 and 8948", mss(1500), mss(9000))
	}
	if f := mss(1500) + tcpHeader + ipv4Header + ethHeader; f != 1514 {
		t.Errorf("a full frame at 1500 is %d bytes, want 1514", f)
	}
}
