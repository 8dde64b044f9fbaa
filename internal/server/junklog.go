package server

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Connections refused before they became a session (unknown protocol,
// failed handshakes and authentications, stray data connections, ...)
// are logged by sampling: in each junkLogInterval the first junkLogBurst
// of each reason get their own line with the peer's address, the rest
// are only counted, and one summary line per interval says how many of
// each reason were not logged. A flood of junk connections so writes a
// bounded number of lines a minute instead of one per connection.

// The sampling: lines of their own per reason and interval.
var (
	junkLogInterval = time.Minute
	junkLogBurst    = 3
)

// junkLog samples the log lines of refused connections. Its zero value is
// ready to use.
type junkLog struct {
	mu      sync.Mutex
	start   time.Time      // of the current interval
	logged  map[string]int // lines logged in it, by reason
	dropped map[string]int // lines counted but not logged, by reason
}

// refused logs one refused connection through log at level, unless its
// reason had its lines in this interval already.
func (s *Server) refused(log *slog.Logger, level slog.Level, reason, msg string, args ...any) {
	if s.junk.take(reason, time.Now(), s.log) {
		log.Log(context.Background(), level, msg, append(args, "reason", reason)...)
	}
}

// take reports whether a line of reason may be logged now, and counts it
// when not. A new interval first flushes the last one's counts to log.
func (j *junkLog) take(reason string, now time.Time, log *slog.Logger) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if now.Sub(j.start) >= junkLogInterval {
		j.flushLocked(log, now)
	}
	if j.logged[reason] < junkLogBurst {
		j.logged[reason]++
		return true
	}
	j.dropped[reason]++
	return false
}

// flush writes the summary of the interval so far, if anything was not
// logged, when the interval is over or force is set.
func (j *junkLog) flush(log *slog.Logger, now time.Time, force bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if force || now.Sub(j.start) >= junkLogInterval {
		j.flushLocked(log, now)
	}
}

func (j *junkLog) flushLocked(log *slog.Logger, now time.Time) {
	if len(j.dropped) > 0 {
		total := 0
		reasons := make([]string, 0, len(j.dropped))
		for r, n := range j.dropped {
			total += n
			reasons = append(reasons, r)
		}
		slices.Sort(reasons)
		attrs := make([]any, 0, len(reasons))
		for _, r := range reasons {
			attrs = append(attrs, slog.Int(r, j.dropped[r]))
		}
		log.Info("refused connections not logged one by one", "count", total,
			"since", j.start.Format(time.RFC3339), slog.Group("by_reason", attrs...))
	}
	j.start = now
	j.logged = map[string]int{}
	j.dropped = map[string]int{}
}

// runJunkLog writes each interval's summary on time, even when no further
// refused connection comes to trigger it, until ctx ends; then the last.
func (s *Server) runJunkLog(ctx context.Context) {
	t := time.NewTicker(junkLogInterval / 4)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			s.junk.flush(s.log, now, false)
		case <-ctx.Done():
			s.junk.flush(s.log, time.Now(), true)
			return
		}
	}
}
