package server

import (
	"context"
	"log/slog"
	"time"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// The one log line per test. Every admitted test ends in exactly one line,
// "test done" once its side ran or "test failed" when it could not start,
// with the peer (from the session's logger), the test, its duration (from
// the request to the end), the bytes this side moved inside the window and
// the result: ok, interrupted or failed, with the reason of a failure.
// Refused requests get a "test refused" line with the reason instead.

// testGrace is how much longer than its warm-up and window a test may keep
// the control connection quiet: the first-byte grace and the drain (5 s
// each) plus room for the setup.
const testGrace = 20 * time.Second

// testRecord follows one test from its request to its log line.
type testRecord struct {
	started time.Time
	logged  bool
}

type recordKey struct{}

// observeTest runs one test of the session (run is the server's test function), counts
// it as active meanwhile, lets the control connection stay quiet for the
// test's length, and logs its line if run failed before logging one.
func (ss *session) observeTest(ctx context.Context, t spec.Test, run func(context.Context) error) error {
	s, cc, log := ss.s, ss.cc, ss.log
	rec := &testRecord{started: time.Now()}
	s.safety.running.Add(1)
	s.metrics().testStarted()
	ss.recvTimeout.Store(int64(t.Length() + testGrace))
	err := run(context.WithValue(ctx, recordKey{}, rec))
	ss.recvTimeout.Store(int64(s.cfg.IdleTimeout))
	// The reader may wait with the test's deadline already: shorten it.
	cc.NetConn().SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout))
	s.metrics().testEnded()
	s.safety.running.Add(-1)
	if err != nil && !rec.logged {
		reason := "setup"
		if ctx.Err() != nil {
			reason = "shutdown"
		}
		s.metrics().testFailed(reason)
		log.Info("test failed", "test", t.Kind, "duration", time.Since(rec.started).Round(time.Millisecond),
			"bytes", 0, "result", "failed", "reason", reason, "err", err)
	}
	return err
}

// testDone logs the line of a test whose side ran, and counts it. err is
// the side's own error, abortErr the control connection's.
func (s *Server) testDone(ctx context.Context, log *slog.Logger, t spec.Test, bytes int64, res result.SideResult, err, abortErr error) {
	rec, _ := ctx.Value(recordKey{}).(*testRecord)
	var d time.Duration
	if rec != nil {
		rec.logged = true
		d = time.Since(rec.started).Round(time.Millisecond)
	}
	m := s.metrics()
	for _, f := range res.Flows {
		dir := "received"
		if f.Role == result.Sender {
			dir = "sent"
		}
		m.moved(dir, f.Bytes)
	}
	attrs := []any{"test", t.Kind, "duration", d, "bytes", bytes}
	switch {
	case abortErr != nil:
		m.testFailed("control_lost")
		attrs = append(attrs, "result", "failed", "reason", "control_lost", "err", abortErr)
	case err != nil:
		m.testFailed("stream")
		attrs = append(attrs, "result", "failed", "reason", "stream", "err", err)
	case !res.Interrupted && cutShort(t, res):
		// The peer's end of stream came well before the window's end: a
		// client killed mid-test looks like this to a receiver.
		m.testFailed("truncated")
		attrs = append(attrs, "result", "failed", "reason", "truncated")
	case res.Interrupted:
		m.testServed("interrupted")
		attrs = append(attrs, "result", "interrupted")
	default:
		m.testServed("ok")
		attrs = append(attrs, "result", "ok")
	}
	log.Info("test done", attrs...)
}

// cutShort reports whether a flow's window closed well before its planned
// end without an interrupt. A few milliseconds short is normal: a
// receiver's window is anchored on its first byte and may end just after
// the sender's end of stream arrives.
func cutShort(t spec.Test, res result.SideResult) bool {
	for _, f := range res.Flows {
		if f.Truncated && f.ElapsedS < 0.9*t.Duration.Seconds() {
			return true
		}
	}
	return false
}
