package server

import "sync"

// One-off serving (serve -1, iperf3's -1): the server serves one
// client's test, then stops accepting and Serve returns nil once every
// connection it started has ended. The test is a wirespeed session that
// was admitted a test (with all the iterations it runs on that session)
// or an iperf3 client's test; connections refused before a test (busy,
// failed authentication, a port scan) do not count.

type oneOff struct {
	once sync.Once
	done chan struct{} // closed when the one test was served
}

// served records that a test was served; with Config.OneOff set, the
// server stops accepting.
func (s *Server) served() {
	if !s.cfg.OneOff {
		return
	}
	s.oneOff.once.Do(func() {
		s.log.Info("one-off: the test was served, stopping")
		close(s.oneOff.done)
	})
}

// oneOffDone is closed once the one test of a one-off server was served;
// nil (never ready) on a server that serves on.
func (s *Server) oneOffDone() <-chan struct{} { return s.oneOff.done }

// isClosed reports whether ch is closed; a nil ch never is.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
