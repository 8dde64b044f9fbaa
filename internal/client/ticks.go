package client

import (
	"sync"

	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// ticker pairs the receiver's and the sender's report of each interval of
// each direction and hands the joined tick on, in order.
type ticker struct {
	emit func(result.Tick)
	mu   sync.Mutex
	dirs map[spec.Direction]*dirTicks
}

type dirTicks struct {
	next int
	rcv  map[int]result.IntervalReport
	snd  map[int]result.IntervalReport
}

func newTicker(t spec.Test, emit func(result.Tick)) *ticker {
	tk := &ticker{emit: emit, dirs: map[spec.Direction]*dirTicks{}}
	for _, d := range t.Directions() {
		tk.dirs[d] = &dirTicks{rcv: map[int]result.IntervalReport{}, snd: map[int]result.IntervalReport{}}
	}
	return tk
}

// add takes one side's report. Safe for concurrent use.
func (tk *ticker) add(r result.IntervalReport) {
	if tk.emit == nil {
		return
	}
	tk.mu.Lock()
	defer tk.mu.Unlock()
	switch r.Role {
	case result.Requester:
		// The requester measures a request/response test on its own.
		tk.emit(result.JoinTick(r, nil))
		return
	case result.Responder:
		return
	}
	d := tk.dirs[r.Direction]
	if d == nil {
		return
	}
	if r.Role == result.Receiver {
		d.rcv[r.Index] = r
	} else {
		d.snd[r.Index] = r
	}
	for {
		rcv, okR := d.rcv[d.next]
		snd, okS := d.snd[d.next]
		if !okR || !okS {
			return
		}
		tk.emit(result.JoinTick(rcv, &snd))
		delete(d.rcv, d.next)
		delete(d.snd, d.next)
		d.next++
	}
}

// flush hands on the receiver's reports still waiting for their sender's.
func (tk *ticker) flush() {
	if tk.emit == nil {
		return
	}
	tk.mu.Lock()
	defer tk.mu.Unlock()
	for _, dir := range []spec.Direction{spec.ClientToServer, spec.ServerToClient} {
		d := tk.dirs[dir]
		if d == nil {
			continue
		}
		for ; len(d.rcv) > 0; d.next++ {
			rcv, ok := d.rcv[d.next]
			if !ok {
				continue
			}
			var snd *result.IntervalReport
			if s, ok := d.snd[d.next]; ok {
				snd = &s
			}
			tk.emit(result.JoinTick(rcv, snd))
			delete(d.rcv, d.next)
		}
	}
}
