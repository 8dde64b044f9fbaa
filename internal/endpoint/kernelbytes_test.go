package endpoint

import (
	"testing"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
)

// TestKernelBytes: a stream's payload over its window as the kernel
// counted it is the change of its TCP_INFO counts between the window's
// ends, not their values at the end (which count from the connection's
// opening: an RRUL flow opens before its load): a sender whose peer had
// acknowledged 1000 bytes at the start and 6000 at the end sent 5000;
// a receiver that had 300 and 2300, 2000. A kernel without the counts
// (0 at the end) gives none, and so do the request/response roles.
func TestKernelBytes(t *testing.T) {
	a := measure.TCPInfo{BytesAcked: 1000, BytesReceived: 300}
	b := measure.TCPInfo{BytesAcked: 6000, BytesReceived: 2300}
	if acked, recv := kernelBytes(result.Sender, a, b); acked == nil || *acked != 5000 || recv != nil {
		t.Errorf("sender: acked %v, received %v; want 5000 and none", acked, recv)
	}
	if acked, recv := kernelBytes(result.Receiver, a, b); recv == nil || *recv != 2000 || acked != nil {
		t.Errorf("receiver: acked %v, received %v; want none and 2000", acked, recv)
	}
	if acked, recv := kernelBytes(result.Sender, measure.TCPInfo{}, measure.TCPInfo{}); acked != nil || recv != nil {
		t.Errorf("no kernel counts: acked %v, received %v; want none", acked, recv)
	}
	if acked, recv := kernelBytes(result.Requester, a, b); acked != nil || recv != nil {
		t.Errorf("requester: acked %v, received %v; want none", acked, recv)
	}
}
