package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"wirespeed/internal/iterate"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// isTerminal reports whether w is a terminal, for a live progress line.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressMode is --progress: where a sweep's or matrix's progress goes
// on stderr. auto: a line rewritten in place on a terminal, otherwise a
// whole line per event (one line each, for grep and tee: never wrapped
// onto continuation lines); on: whole lines even on a terminal; off:
// nothing.
type progressMode string

const (
	progressAuto progressMode = "auto"
	progressOn   progressMode = "on"
	progressOff  progressMode = "off"
)

func (m *progressMode) String() string { return string(*m) }
func (m *progressMode) Type() string   { return "auto|on|off" }

func (m *progressMode) Set(s string) error {
	switch v := progressMode(s); v {
	case progressAuto, progressOn, progressOff:
		*m = v
		return nil
	}
	return fmt.Errorf("%q: want auto, on or off", s)
}

// addProgressFlag registers --progress, auto by default.
func addProgressFlag(cmd *cobra.Command, m *progressMode) {
	*m = progressAuto
	cmd.Flags().Var(m, "progress", "progress on stderr: auto (a line rewritten in place on a terminal, "+
		"otherwise one whole line per iteration), on (whole lines even on a terminal) or off")
}

// live is whether w gets the line rewritten in place.
func (m progressMode) live(w io.Writer) bool { return m == progressAuto && isTerminal(w) }

// progress shows where a sweep is on stderr: the size (k of n), the
// iteration, the time elapsed and an estimate of the time left. On a
// terminal it is one line rewritten in place (every second and at every
// event); otherwise a plain line per event, for logs. A nil *progress
// shows nothing. It is the sweep.Observer of a sweep's progress.
type progress struct {
	w    io.Writer
	live bool
	n    int
	rep  spec.Repeat
	// guess is the time one iteration takes before any has been timed:
	// the window, its warm-up and the time to set up and drain a run.
	guess time.Duration

	mu         sync.Mutex
	start      time.Time
	todo       int // points to measure in this session
	measured   int // of them, finished
	iters      int // iterations finished in measured points
	iterTime   time.Duration
	timed      int // iterations timed
	k, size    int
	iter, done int // current iteration of the point, iterations done in it
	iterStart  time.Time
	shown      bool // a live line is on the screen
	quit       chan struct{}
	stopped    bool
}

// newProgress returns the progress of a sweep of n sizes shown as mode
// says, nil for off.
func newProgress(w io.Writer, mode progressMode, t spec.Test, rep spec.Repeat, n int) *progress {
	if mode == progressOff {
		return nil
	}
	live := mode.live(w)
	p := &progress{w: w, live: live, n: n, rep: rep, guess: t.Omit + t.Duration + 500*time.Millisecond, start: time.Now(), quit: make(chan struct{})}
	if live {
		go func() {
			tk := time.NewTicker(time.Second)
			defer tk.Stop()
			for {
				select {
				case <-tk.C:
					p.mu.Lock()
					if p.shown {
						p.draw()
					}
					p.mu.Unlock()
				case <-p.quit:
					return
				}
			}
		}()
	}
	return p
}

// Begin says how many points this session measures.
func (p *progress) Begin(todo int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.todo = todo
}

// Kept says that point k was taken from the resumed file.
func (p *progress) Kept(k int, pt result.Point) {
	if p == nil || p.live {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "sweep: size %d of %d (%d bytes): complete in the resumed file, kept\n", k+1, p.n, pt.MsgSize)
}

// Start says that point k starts.
func (p *progress) Start(k, size int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.k, p.size, p.iter, p.done = k, size, 0, 0
}

// Iteration takes the sweep's iteration events.
func (p *progress) Iteration(ev iterate.Event) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !ev.Done {
		p.iter, p.iterStart = ev.Iteration, time.Now()
		if p.live {
			p.draw()
		}
		return
	}
	p.done = ev.Iteration
	p.iterTime += time.Since(p.iterStart)
	p.timed++
	if p.live {
		p.draw()
		return
	}
	// One whole line, however long: a log is read with grep.
	fmt.Fprintf(p.w, "sweep: size %d of %d (%d bytes): %s; %s\n",
		p.k+1, p.n, p.size, report.IterationProgress(ev.Iteration, ev.Max, ev.Result, ev.Confidence), p.times())
}

// Measured says that point k finished.
func (p *progress) Measured(k int, pt result.Point) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.measured++
	p.iters += p.done
	p.done, p.iter = 0, 0
}

// above runs print (which writes the table on stdout) with the live line
// out of its way.
func (p *progress) above(print func()) {
	if p == nil || !p.live {
		print()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
	// The line comes back with the next iteration.
	print()
}

// stop ends the live line. It may be called more than once.
func (p *progress) stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	close(p.quit)
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// draw rewrites the live line; p.mu is held.
func (p *progress) draw() {
	if p.stopped {
		return
	}
	fmt.Fprintf(p.w, "\r\033[Ksweep: size %d of %d (%d bytes), iteration %d (at most %d); %s",
		p.k+1, p.n, p.size, max(p.iter, 1), p.rep.MaxIterations, p.times())
	p.shown = true
}

// times is "elapsed 1m2s, about 3m10s left"; p.mu is held.
//
// The estimate is the iterations still to run times the mean time of an
// iteration so far. A point is assumed to need as many iterations as the
// points measured so far needed on average (the minimum before any has
// finished): a guess, shown with "about".
func (p *progress) times() string {
	per := p.guess
	if p.timed > 0 {
		per = p.iterTime / time.Duration(p.timed)
	}
	perPoint := float64(p.rep.MinIterations)
	if p.measured > 0 {
		perPoint = float64(p.iters) / float64(p.measured)
	}
	after := max(p.todo-p.measured-1, 0)
	left := time.Duration(float64(after)*perPoint*float64(per)) +
		time.Duration(max(perPoint-float64(p.done)-1, 0)*float64(per))
	if p.iter > p.done {
		left += max(per-time.Since(p.iterStart), 0)
	}
	return fmt.Sprintf("elapsed %v, about %v left", time.Since(p.start).Round(time.Second), left.Round(time.Second))
}
