package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/units"
)

// outputFlags say how run shows its result as text; the JSON document
// never changes with them.
type outputFlags struct {
	unit       units.RateUnit // -f
	timestamps string         // --timestamps[=FORMAT], strftime; "" for none
	logfile    string         // --logfile FILE
	jsonStream bool           // --json-stream
	fields     []string       // --fields NAME,...
	fieldStyle string         // --fields-style

	layout string           // timestamps as a Go layout, set by open
	now    func() time.Time // the clock of the timestamps; nil: time.Now
}

func (o *outputFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&o.timestamps, "timestamps", "", "put the time at the start of each interval line, strftime's FORMAT (iperf3's --timestamps; alone: \"%c \", e.g. --timestamps='%F %T ')")
	fl.Lookup("timestamps").NoOptDefVal = report.DefaultTimestamp
	fl.StringVar(&o.logfile, "logfile", "", "write what run prints to FILE instead of stdout, appending (iperf3's --logfile); errors stay on stderr")
	fl.BoolVar(&o.jsonStream, "json-stream", false, "one JSON object a line as the run goes: start, intervals, the result (iperf3's --json-stream)")
	fl.StringSliceVar(&o.fields, "fields", nil, "print only these figures, for scripts (netperf's -o/-O): CSV column names, e.g. throughput_bps,retransmits")
	fl.StringVar(&o.fieldStyle, "fields-style", "csv", "how --fields prints: csv (a header line, then values; netperf's -o), table (aligned columns; -O) or values (no header)")
	fl.VarP(rateUnitValue{&o.unit}, "format", "f", "throughput units of the text (iperf3's and netperf's -f): k, m, g, t (10^3..10^12 bits/s) or K, M, G, T (KBytes/s..TBytes/s); JSON is bits/s")
}

// registerVerbose is -v, which run, sweep, matrix and mesh share.
func registerVerbose(fl *pflag.FlagSet, v *bool) {
	fl.BoolVarP(v, "verbose", "v", false, "the detail under the answer: each stream, each side's CPU, device and environment, every column, warnings in full (iperf3's -V)")
}

// rateUnitValue is -f: one letter of k m g t K M G T.
type rateUnitValue struct{ u *units.RateUnit }

func (v rateUnitValue) String() string {
	if v.u == nil {
		return ""
	}
	return v.u.String()
}

func (v rateUnitValue) Set(s string) error {
	u, err := units.ParseRateUnit(s)
	if err != nil {
		return err
	}
	*v.u = u
	return nil
}

func (v rateUnitValue) Type() string { return "unit" }

// open checks the output flags and returns e with its stdout sent to
// --logfile, and the function that closes the file (nil without one).
func (o *outputFlags) open(e *env, json bool) (*env, func() error, error) {
	if o.fields != nil {
		switch {
		case json || o.jsonStream:
			return nil, nil, usagef("--fields prints chosen figures instead of the document; drop --json or --json-stream")
		}
		if err := report.CheckFields(o.fields, o.fieldStyle); err != nil {
			return nil, nil, usagef("--fields: %v%s", err, fieldsHint(o.fields))
		}
	}
	if o.timestamps != "" {
		layout, err := report.TimestampLayout(o.timestamps)
		if err != nil {
			return nil, nil, usagef("--timestamps: %v", err)
		}
		o.layout = layout
	}
	if o.logfile == "" {
		return e, nil, nil
	}
	if err := checkWritable("--logfile", o.logfile, "run.log", false); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(o.logfile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("--logfile: %w", err)
	}
	to := *e
	w := &stickyWriter{w: f}
	to.stdout = w
	return &to, func() error {
		cerr := f.Close()
		if err := w.error(); err != nil {
			return err
		}
		return cerr
	}, nil
}

// stickyWriter keeps the first write error of the --logfile, which the
// report's writers do not look at, so that run ends with it: a full disk
// (or /dev/full) once exited 0 with the output lost.
type stickyWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	if err != nil {
		s.err = err
	}
	return n, err
}

func (s *stickyWriter) error() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// tickWriter is where one tick's interval lines go: w, each line
// prefixed with the time of the tick when --timestamps asks.
func (o *outputFlags) tickWriter(w io.Writer) io.Writer {
	if o.layout == "" {
		return w
	}
	now := o.now
	if now == nil {
		now = time.Now
	}
	return &stampWriter{w: w, stamp: []byte(now().Format(o.layout)), lineStart: true}
}

// stampWriter writes stamp at the start of every line.
type stampWriter struct {
	w         io.Writer
	stamp     []byte
	lineStart bool
}

func (s *stampWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if s.lineStart {
			if _, err := s.w.Write(s.stamp); err != nil {
				return n, err
			}
			s.lineStart = false
		}
		i := len(p)
		for j, c := range p {
			if c == '\n' {
				i = j + 1
				s.lineStart = true
				break
			}
		}
		m, err := s.w.Write(p[:i])
		n += m
		if err != nil {
			return n, err
		}
		p = p[i:]
	}
	return n, nil
}

// streamTick returns the interval handler of --json-stream: each tick an
// interval event, under mu.
func streamTick(w io.Writer, mu *sync.Mutex) func(result.Tick) {
	return func(tk result.Tick) {
		mu.Lock()
		defer mu.Unlock()
		report.Stream(w, "interval", tk)
	}
}

// streamEnd writes the last event of --json-stream: the document, or the
// error when nothing was measured.
func streamEnd(w io.Writer, doc *result.Document, runErr error) error {
	if doc == nil {
		return report.Stream(w, "error", report.StreamError{Error: runErr.Error()})
	}
	return report.StreamEnd(w, *doc)
}
