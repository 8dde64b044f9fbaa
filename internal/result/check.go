package result

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"wirespeed/internal/spec"
)

// A peer's figures are checked where they enter (CheckSide, CheckReport,
// CheckJoined): a figure no measurement can give is refused with an error
// naming it, so that no later stage (Join's rates, a mean's sums, the
// JSON, the CSV, the archive, the exporter) ever meets it. CheckFinite is
// the last defence where a document is written.

// Bounds of the figures a peer may report (docs/security.md).
const (
	// MaxBitsPerSecond is the fastest rate any count may imply over its
	// window: 10 Tbit/s, far above any link (400 Gbit/s) or loopback.
	MaxBitsPerSecond = 10e12
	// MinWindowS is the shortest window counts are judged over (fits).
	MinWindowS = 1e-3
	// MinElapsedS is the shortest window that counted anything: the
	// monotonic clock's nanosecond. A rate is a count over a window; one
	// of 1e-300 s made it +Inf.
	MinElapsedS = 1e-9
	// MaxFigure bounds every other number of a peer's record (a
	// latency, a percentage, a CPU time): far beyond any honest one, and
	// small enough that sums and products of them stay finite.
	MaxFigure = 1e20
	// MaxPct bounds a percentage: a thread's share of a CPU is at most
	// 100; measurement skew adds a little, never tenfold.
	MaxPct = 1000
)

// maxBytesPerSecond is MaxBitsPerSecond in bytes.
const maxBytesPerSecond = MaxBitsPerSecond / 8

// ErrFigure is wrapped by every error of a figure a record cannot hold.
var ErrFigure = errors.New("impossible figure")

// FigureError names a figure a record cannot hold: where it is (its
// JSON path), its value, and why it cannot be.
type FigureError struct {
	Path  string
	Value string
	Why   string
}

func (e *FigureError) Error() string {
	return e.Path + " is " + e.Value + ": " + e.Why
}

// Unwrap makes errors.Is(err, ErrFigure) hold.
func (e *FigureError) Unwrap() error { return ErrFigure }

// figErr is the error of the figure at path whose value is v (a float64,
// an int64, a uint64 or an int), why it cannot be in format and args.
func figErr(path string, v any, format string, args ...any) error {
	var s string
	switch x := v.(type) {
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case int64:
		s = strconv.FormatInt(x, 10)
	case uint64:
		s = strconv.FormatUint(x, 10)
	case int:
		s = strconv.Itoa(x)
	}
	// An error's words, not a warning's (report words those).
	return &FigureError{Path: path, Value: s, Why: fmt.Errorf(format, args...).Error()}
}

// at is path's element i.
func at(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// signedInts are the integer fields that may be below 0 in an honest
// record: an interval's lost datagrams (a late one gives its loss back),
// the change of a gauge or a reset counter (counters' all, a driver's
// ethtool statistics), sysctl values, and CPU numbers where -1 means
// none.
var signedInts = map[string]bool{
	"lost": true, "all": true, "ethtool": true, "sysctls": true,
	"busiest_cpu": true, "last_cpu": true, "cpu": true,
}

// signedFloats are the float fields of a joined result that may be below
// 0 in an honest one: a confidence interval's bounds (a noisy mean's lower
// bound), a UDP loss share (late datagrams), the figures a warning or a
// limit's note quotes (a difference).
var signedFloats = map[string]bool{"lo": true, "hi": true, "loss_pct": true, "figures": true}

// walkNumbers calls fn with every number in v, walked by the JSON names
// of its fields: path is where it is ("flows[0].elapsed_s"), leaf the
// name of the field that holds it (a map's or a slice's field for their
// elements).
func walkNumbers(v reflect.Value, path, leaf string, fn func(path, leaf string, v reflect.Value) error) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return walkNumbers(v.Elem(), path, leaf, fn)
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := walkNumbers(v.Index(i), path+"["+strconv.Itoa(i)+"]", leaf, fn); err != nil {
				return err
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if err := walkNumbers(it.Value(), path+"["+strconv.Quote(it.Key().String())+"]", leaf, fn); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				if err := walkNumbers(v.Field(i), path, leaf, fn); err != nil {
					return err
				}
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			if err := walkNumbers(v.Field(i), p, name, fn); err != nil {
				return err
			}
		}
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fn(path, leaf, v)
	}
	return nil
}

// CheckFinite returns an error naming the first figure of v (a document,
// a result, any record) that is not a finite number, by its JSON path:
// JSON has no Inf or NaN, and a figure that is one is a bug or a peer's
// figure no check refused. nil when every figure is finite.
func CheckFinite(v any) error {
	return walkNumbers(reflect.ValueOf(v), "", "", func(path, _ string, v reflect.Value) error {
		if v.CanFloat() {
			if x := v.Float(); math.IsInf(x, 0) || math.IsNaN(x) {
				return figErr(path, x, "not a finite number, which JSON, CSV and the archive cannot hold")
			}
		}
		return nil
	})
}

// checkNumbers checks every number of a peer's record v: finite, not
// below 0 (but signedInts), no larger than MaxFigure, a percentage no
// larger than MaxPct. prefix starts each path.
func checkNumbers(v any, prefix string) error {
	return walkNumbers(reflect.ValueOf(v), prefix, "", func(path, leaf string, v reflect.Value) error {
		switch {
		case v.CanFloat():
			x := v.Float()
			switch {
			case math.IsInf(x, 0) || math.IsNaN(x):
				return figErr(path, x, "not a finite number")
			case x < 0 && !signedFloats[leaf]:
				return figErr(path, x, "below 0")
			case math.Abs(x) > MaxFigure:
				return figErr(path, x, "more than %g, which no measurement gives", float64(MaxFigure))
			case strings.HasSuffix(leaf, "_pct") && x > MaxPct:
				return figErr(path, x, "a percentage above %d", MaxPct)
			}
		case v.CanInt():
			if x := v.Int(); x < 0 && !signedInts[leaf] {
				return figErr(path, x, "below 0")
			}
		}
		return nil
	})
}

// window checks a window of elapsedS seconds: no longer than maxS, the
// whole run as its client saw it. It may be short: an RRUL flow's
// receiver on a loaded machine opened its window 33 us before the end
// (its first byte came late), and a fixed amount (-n) may be moved in
// microseconds; fits keeps what it counted, and every rate made of it,
// within MaxBitsPerSecond.
func window(path string, elapsedS, maxS float64) error {
	if elapsedS > maxS {
		return figErr(path, elapsedS, "longer than the run, %.3f s", maxS)
	}
	return nil
}

// counted checks that a window of elapsedS seconds that counted n is
// not shorter than the clock's resolution, MinElapsedS: Join divides n
// by it.
func counted(path string, n float64, elapsedS float64) error {
	if n > 0 && elapsedS < MinElapsedS {
		return figErr(path, elapsedS, "a window shorter than a nanosecond, the clock's resolution, that counted %g", n)
	}
	return nil
}

// fits checks that count n, at least a byte each, fits MaxBitsPerSecond
// over elapsedS seconds, judged over MinWindowS at least: an honest RRUL
// flow's receiver on a loaded machine had a window of 33 us, its first
// byte late.
func fits(path string, n float64, elapsedS float64) error {
	if n > maxBytesPerSecond*max(elapsedS, MinWindowS) {
		return figErr(path, n, "more than %g bit/s could move in its window of %g s", float64(MaxBitsPerSecond), elapsedS)
	}
	return nil
}

// checkInterval checks one interval of a peer's record: it lies in the
// run (0 <= start <= end <= maxS) and its counts fit MaxBitsPerSecond over
// the whole run. Not over the interval: its ends are the ticks' samples,
// and a tick late on a loaded machine left an honest server's interval
// 1.67 GB in 143 us (server's TestLongHighRateIntervals). Its rate is
// the peer's and only shown; MaxFigure bounds it.
func checkInterval(path string, iv Interval, maxS float64) error {
	switch {
	case iv.EndS < iv.StartS:
		return figErr(path+".end_s", iv.EndS, "before the interval's start, %g", iv.StartS)
	case iv.EndS > maxS:
		return figErr(path+".end_s", iv.EndS, "after the run's end, %.3f s", maxS)
	}
	for _, c := range []struct {
		name string
		n    int64
	}{{"bytes", iv.Bytes}, {"packets", iv.Packets}, {"retransmits", iv.Retransmits}, {"lost", iv.Lost}} {
		if float64(c.n) > maxBytesPerSecond*maxS {
			return figErr(path+"."+c.name, c.n, "more than %g bit/s could move in the run's %.3f s", float64(MaxBitsPerSecond), maxS)
		}
	}
	return nil
}

// CheckReport checks a peer's interval report: every number as
// CheckSide's, and the interval and each stream's within the run so far
// (runS seconds, the client's clock, slack included).
func CheckReport(r IntervalReport, runS float64) error {
	if err := checkNumbers(r, "interval report"); err != nil {
		return err
	}
	if err := checkInterval("interval report.interval", r.Interval, runS); err != nil {
		return err
	}
	for i, s := range r.Streams {
		if err := checkInterval(at("interval report.streams", i), s.Interval, runS); err != nil {
			return err
		}
	}
	return nil
}

// CheckSide checks the figures of a side's result a peer sent for a run
// that lasted runS seconds on the client's clock (slack included):
// every number finite, not below 0 (but signedInts), no larger than
// MaxFigure; each window (a flow's, the device's, the CPU's) no longer
// than the run;
// each count (bytes, packets, calls, retransmits, the device's bytes and
// packets) within what MaxBitsPerSecond moves in its window, a packet at
// least a byte; each interval within the run. The error names the figure
// by its JSON path under "result".
func CheckSide(s SideResult, runS float64) error {
	if err := checkNumbers(s, "result"); err != nil {
		return err
	}
	for i, f := range s.Flows {
		p := at("result.flows", i)
		if err := window(p+".elapsed_s", f.ElapsedS, runS); err != nil {
			return err
		}
		if err := fits(p+".bytes", float64(f.Bytes), f.ElapsedS); err != nil {
			return err
		}
		if f.StartOffsetS > runS {
			return figErr(p+".start_offset_s", f.StartOffsetS, "after the run's end, %.3f s", runS)
		}
		for j, iv := range f.Intervals {
			if err := checkInterval(at(p+".intervals", j), iv, runS); err != nil {
				return err
			}
		}
		for j, st := range f.Streams {
			sp := at(p+".streams", j)
			for _, c := range []struct {
				name string
				n    int64
			}{{"bytes", st.Bytes}, {"calls", st.Calls}, {"packets", st.Packets}, {"retransmits", st.Retransmits},
				{"lost", st.Lost}, {"send_errors", st.SendErrors}, {"timeouts", st.Timeouts}, {"seq_unique", st.SeqUnique}} {
				if err := fits(sp+"."+c.name, float64(c.n), f.ElapsedS); err != nil {
					return err
				}
			}
			// Over the connection's life: the whole run at most.
			for _, c := range []struct {
				name string
				n    int64
			}{{"total_bytes", st.TotalBytes}, {"total_packets", st.TotalPackets}} {
				if err := fits(sp+"."+c.name, float64(c.n), runS); err != nil {
					return err
				}
			}
			for k, iv := range st.Intervals {
				if err := checkInterval(at(sp+".intervals", k), iv, runS); err != nil {
					return err
				}
			}
		}
		// Join divides the flow's and its streams' counts by its window.
		n := float64(f.Bytes)
		for _, st := range f.Streams {
			n = max(n, float64(st.Bytes), float64(st.Packets))
		}
		if err := counted(p+".elapsed_s", n, f.ElapsedS); err != nil {
			return err
		}
	}
	if w := s.Wire; w != nil {
		if err := window("result.wire.elapsed_s", w.ElapsedS, runS); err != nil {
			return err
		}
		l := w.Link
		for _, c := range []struct {
			name string
			n    uint64
		}{
			{"tx_bytes", l.TxBytes}, {"rx_bytes", l.RxBytes}, {"tx_packets", l.TxPackets}, {"rx_packets", l.RxPackets},
			{"tx_dropped", l.TxDropped}, {"rx_dropped", l.RxDropped}, {"tx_errors", l.TxErrors}, {"rx_errors", l.RxErrors},
			{"rx_missed", l.RxMissed}, {"rx_over_errs", l.RxOverErrs},
		} {
			if err := fits("result.wire.link."+c.name, float64(c.n), w.ElapsedS); err != nil {
				return err
			}
		}
		if err := counted("result.wire.elapsed_s", float64(max(l.TxBytes, l.RxBytes, l.TxPackets, l.RxPackets)), w.ElapsedS); err != nil {
			return err
		}
		// A packet carries at least a byte.
		if l.TxPackets > l.TxBytes {
			return figErr("result.wire.link.tx_packets", l.TxPackets, "more packets than the %d bytes they carried", l.TxBytes)
		}
		if l.RxPackets > l.RxBytes {
			return figErr("result.wire.link.rx_packets", l.RxPackets, "more packets than the %d bytes they carried", l.RxBytes)
		}
		if q := w.Qdisc; q != nil {
			for _, c := range []struct {
				name string
				n    uint64
			}{{"sent_bytes", q.SentBytes}, {"sent_packets", q.SentPackets}, {"drops", q.Drops}, {"requeues", q.Requeues}, {"overlimits", q.Overlimits}} {
				if err := fits("result.wire.qdisc."+c.name, float64(c.n), w.ElapsedS); err != nil {
					return err
				}
			}
		}
	}
	if c := s.CPU; c != nil {
		if err := window("result.cpu.elapsed_s", c.ElapsedS, runS); err != nil {
			return err
		}
		if c.CPUs > maxCPUs {
			return figErr("result.cpu.cpus", c.CPUs, "more than %d CPUs", maxCPUs)
		}
	}
	return nil
}

// maxCPUs is the most CPUs a host has: Linux's NR_CPUS is at most 8192.
const maxCPUs = 8192

// CheckJoined checks a result another side joined (a relaying server's,
// Local its side, Remote its peer's): every figure as CheckSide's, every
// rate no more than MaxBitsPerSecond. The error names the figure under
// "result".
func CheckJoined(r Result) error {
	if err := CheckFinite(r); err != nil {
		return err
	}
	// The spec is this client's own, and a warning's figures may be
	// signed (a difference): the figures measured are the rest.
	r.Spec, r.Warnings = spec.Test{}, nil
	if err := checkNumbers(r, "result"); err != nil {
		return err
	}
	// A window's rates: an interval's may be honestly higher (fits).
	return walkNumbers(reflect.ValueOf(r), "result", "", func(path, leaf string, v reflect.Value) error {
		if v.CanFloat() && strings.HasSuffix(leaf, "_bps") && !strings.Contains(path, "intervals[") && v.Float() > MaxBitsPerSecond {
			return figErr(path, v.Float(), "more than %g bit/s", float64(MaxBitsPerSecond))
		}
		return nil
	})
}
