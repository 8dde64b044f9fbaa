package endpoint

import (
	"sync"
	"time"

	"wirespeed/internal/engine"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// loadSeconds reads the byte counters of an RRUL side's receiving loops
// at each step from the load's start, on the side's own clock: the
// timeline's throughput, whatever -i says (result.LoadSeconds). Run
// registers the loops as it makes them (Config.seconds); it is safe for
// concurrent use.
type loadSeconds struct {
	mu    sync.Mutex
	step  time.Duration
	start time.Time
	max   int // readings kept, the last one aside
	loops []secondsLoop
	rec   result.LoadSeconds
}

type secondsLoop struct {
	id   int
	dir  spec.Direction
	loop engine.Loop
}

// add registers a loop of Run's; only receivers are counted, a flow's
// throughput being its receiver's count.
func (s *loadSeconds) add(id int, dir spec.Direction, role result.Role, l engine.Loop) {
	if s == nil || role != result.Receiver {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loops = append(s.loops, secondsLoop{id: id, dir: dir, loop: l})
}

// read takes one reading of every registered loop's bytes, now; past
// max readings only the last (last) is taken.
func (s *loadSeconds) read(last bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !last && len(s.rec.T) >= s.max {
		return
	}
	at := time.Since(s.start).Seconds()
	for _, l := range s.loops {
		i := -1
		for j, f := range s.rec.Flows {
			if f.ID == l.id {
				i = j
			}
		}
		if i < 0 {
			// A loop registered late was at 0 at the readings before.
			s.rec.Flows = append(s.rec.Flows, result.FlowBytes{ID: l.id, Direction: l.dir, Bytes: make([]int64, len(s.rec.T))})
			i = len(s.rec.Flows) - 1
		}
		s.rec.Flows[i].Bytes = append(s.rec.Flows[i].Bytes, l.loop.Counters().Bytes)
	}
	for i := range s.rec.Flows {
		if len(s.rec.Flows[i].Bytes) < len(s.rec.T)+1 {
			s.rec.Flows[i].Bytes = append(s.rec.Flows[i].Bytes, 0)
		}
	}
	s.rec.T = append(s.rec.T, at)
}

// run reads at the load's start and at each step after it, the times
// scheduled from the start so that they do not drift, until stop is
// closed; then once more, for the load's last part (its drain
// included). The returned function stops it and waits for the last
// reading.
func (s *loadSeconds) run(start time.Time, maxReadings int) (stop func()) {
	s.start, s.max = start, maxReadings
	s.rec.StepS = s.step.Seconds()
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for k := 0; ; k++ {
			tm := time.NewTimer(time.Until(start.Add(time.Duration(k) * s.step)))
			select {
			case <-quit:
				tm.Stop()
				s.read(true)
				return
			case <-tm.C:
			}
			s.read(false)
		}
	}()
	return func() { close(quit); <-done }
}

// record returns what was read.
func (s *loadSeconds) record() *result.LoadSeconds {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rec
	return &r
}
