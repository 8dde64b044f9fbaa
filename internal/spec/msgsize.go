package spec

import "fmt"

// MessageSize is the size a test is plotted, swept and matched by: the
// send size of a stream test, the request size of a request/response test
// (a sweep sets the response to the same size, as netperf's TCP_RR sweeps
// -r 1,1, -r 64,64, ... do).
func (t Test) MessageSize() int {
	if t.Kind.RR() {
		return t.RequestSize
	}
	return t.SendSize
}

// AtMessageSize is t with message size n: the send size of a stream test,
// both the request and the response size of a request/response test.
func (t Test) AtMessageSize(n int) Test {
	if t.Kind.RR() {
		t.RequestSize, t.ResponseSize = n, n
		return t
	}
	t.SendSize = n
	return t
}

// SizeLabel names the sizes that tell two runs of one test apart: the send
// size of a stream test ("1024"), "REQ,RESP" for a request/response test.
func (t Test) SizeLabel() string {
	if t.Kind.RR() {
		return fmt.Sprintf("%d,%d", t.RequestSize, t.ResponseSize)
	}
	return fmt.Sprint(t.SendSize)
}
