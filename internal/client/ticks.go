package client

import (
	"sort"
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
	if r.Index < d.next {
		return // already handed on
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
		// In index order, over the indexes present: never counting toward
		// an index, however far it is.
		idx := make([]int, 0, len(d.rcv))
		for i := range d.rcv {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		for _, i := range idx {
			var snd *result.IntervalReport
			if s, ok := d.snd[i]; ok {
				snd = &s
			}
			tk.emit(result.JoinTick(d.rcv[i], snd))
			delete(d.rcv, i)
		}
		if n := len(idx); n > 0 {
			d.next = idx[n-1] + 1
		}
	}
}
