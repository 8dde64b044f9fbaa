package server

import (
	"context"
	"errors"
	"syscall"
	"time"
)

// forceCloseAfter bounds how long aborted sessions may take to send their
// results and say bye before the server closes their connections.
const forceCloseAfter = 5 * time.Second

// drainContext returns the context the server's connections run under. It
// ends when ctx is cancelled (or Serve returns) and either no test is
// running or ShutdownTimeout has passed: running tests may finish, new
// ones are refused meanwhile. Once it ends, running tests are aborted (the
// client still gets what was measured) and idle sessions close; sessions
// still open forceCloseAfter later are closed. The returned function waits
// for all that and must be called before Serve returns.
//
// So Serve returns within ShutdownTimeout + forceCloseAfter of its
// context's end, plus the few seconds a handshake or an aborting stream
// may still take, each bounded by its own deadline.
func (s *Server) drainContext(ctx context.Context) (context.Context, func()) {
	sess, cancel := context.WithCancel(context.WithoutCancel(ctx))
	returning := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		select {
		case <-ctx.Done():
		case <-returning:
		}
		s.safety.draining.Store(true)
		if d := s.cfg.ShutdownTimeout; d > 0 && s.safety.running.Load() > 0 {
			s.log.Info("shutting down: running tests may finish", "running", s.safety.running.Load(), "timeout", d)
			if !s.waitFor(d, func() bool { return s.safety.running.Load() == 0 }) {
				s.log.Warn("shutdown timeout: aborting running tests", "running", s.safety.running.Load(), "timeout", d)
			}
		}
		cancel()
		if !s.waitFor(forceCloseAfter, func() bool { return s.sessions() == 0 }) {
			s.log.Warn("closing sessions that did not end after the shutdown", "sessions", s.sessions())
			s.closeSessions()
		}
	}()
	return sess, func() {
		close(returning)
		<-done
	}
}

// waitFor polls cond until it holds or d has passed, and reports whether
// it held.
func (s *Server) waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// acceptBackoff decides what to do about an accept error that is not a
// timeout. Running out of file descriptors or memory is temporary (a flood
// of connections, each dropped at its deadline): wait a little, growing to
// a second, and accept again rather than stop serving. It reports whether
// to go on accepting.
func (s *Server) acceptBackoff(ctx context.Context, err error) bool {
	switch {
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE), errors.Is(err, syscall.ENOBUFS),
		errors.Is(err, syscall.ENOMEM), errors.Is(err, syscall.ECONNABORTED):
	default:
		return false
	}
	sf := &s.safety
	if time.Since(sf.acceptLast) > 2*time.Second {
		sf.acceptDelay = 0
	}
	if sf.acceptDelay == 0 {
		sf.acceptDelay = 5 * time.Millisecond
		s.log.Warn("accept failed, retrying", "err", err)
	} else {
		sf.acceptDelay = min(2*sf.acceptDelay, time.Second)
	}
	t := time.NewTimer(sf.acceptDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	sf.acceptLast = time.Now()
	return true
}
