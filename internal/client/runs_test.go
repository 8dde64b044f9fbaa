package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"wirespeed/internal/client"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// runsLog records what a RunObserver was told.
type runsLog struct{ events []string }

func (l *runsLog) Starting(i int, t spec.Test) {
	l.events = append(l.events, fmt.Sprintf("start %d %s", i, t.Kind))
}

func (l *runsLog) Measured(i int, r result.Result) {
	l.events = append(l.events, fmt.Sprintf("measured %d %s %g", i, r.Spec.Kind, r.Summary.BitsPerSecond))
}

// fakeRun is a result of t with one direction at bps.
func fakeRun(t spec.Test, bps float64) result.Result {
	return result.Result{Spec: t, Directions: []result.DirectionResult{{}}, Summary: result.Summary{BitsPerSecond: bps}}
}

// TestRuns: one test, the tradeoff's two, and where each way of failing
// stops, with the document they leave, against results made by hand.
func TestRuns(t *testing.T) {
	errDown := errors.New("server went away")
	for _, tc := range []struct {
		name     string
		kind     spec.Kind
		tradeoff bool
		measure  func(t spec.Test) (result.Result, error)
		want     []string // the observer's events
		wantKind result.DocumentKind
		wantErr  error
		wantRate float64 // the tradeoff's ratio, when there is one
	}{
		{name: "one test", kind: spec.TCPRR,
			measure:  func(t spec.Test) (result.Result, error) { return fakeRun(t, 5), nil },
			want:     []string{"start 0 TCP_RR", "measured 0 TCP_RR 5"},
			wantKind: result.KindRun},
		{name: "tradeoff", kind: spec.TCPStream, tradeoff: true,
			measure: func(t spec.Test) (result.Result, error) {
				if t.Kind == spec.TCPMaerts {
					return fakeRun(t, 50), nil
				}
				return fakeRun(t, 200), nil
			},
			want:     []string{"start 0 TCP_STREAM", "measured 0 TCP_STREAM 200", "start 1 TCP_MAERTS", "measured 1 TCP_MAERTS 50"},
			wantKind: result.KindTradeoff, wantRate: 0.25},
		{name: "the second run fails with nothing", kind: spec.TCPStream, tradeoff: true,
			measure: func(t spec.Test) (result.Result, error) {
				if t.Kind == spec.TCPMaerts {
					return result.Result{}, errDown
				}
				return fakeRun(t, 200), nil
			},
			want:     []string{"start 0 TCP_STREAM", "measured 0 TCP_STREAM 200", "start 1 TCP_MAERTS"},
			wantKind: result.KindRun, wantErr: errDown},
		{name: "the first run is interrupted", kind: spec.TCPStream, tradeoff: true,
			measure: func(t spec.Test) (result.Result, error) {
				r := fakeRun(t, 100)
				r.Interrupted = true
				return r, nil
			},
			want:     []string{"start 0 TCP_STREAM", "measured 0 TCP_STREAM 100"},
			wantKind: result.KindRun},
		{name: "a failure with a partial result keeps it", kind: spec.TCPStream, tradeoff: true,
			measure:  func(t spec.Test) (result.Result, error) { return fakeRun(t, 7), errDown },
			want:     []string{"start 0 TCP_STREAM", "measured 0 TCP_STREAM 7"},
			wantKind: result.KindRun, wantErr: errDown},
		{name: "nothing measured", kind: spec.UDPStream,
			measure:  func(t spec.Test) (result.Result, error) { return result.Result{}, errDown },
			want:     []string{"start 0 UDP_STREAM"},
			wantKind: result.KindEmpty, wantErr: errDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := spec.Default()
			sp.Kind = tc.kind
			var log runsLog
			var doc result.Document
			measure := func(_ context.Context, t spec.Test) (result.Result, error) { return tc.measure(t) }
			results, err := client.Runs(context.Background(), measure, sp, tc.tradeoff, &doc, &log)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
			if got, want := strings.Join(log.events, "; "), strings.Join(tc.want, "; "); got != want {
				t.Errorf("observer told:\n %s\nwant\n %s", got, want)
			}
			if k := doc.Kind(); k != tc.wantKind {
				t.Errorf("document kind %q, want %q", k, tc.wantKind)
			}
			n := map[result.DocumentKind]int{result.KindEmpty: 0, result.KindRun: 1, result.KindTradeoff: 2}[tc.wantKind]
			if len(results) != n {
				t.Errorf("%d results, want %d", len(results), n)
			}
			switch {
			case tc.wantRate != 0 && (doc.Tradeoff == nil || doc.Tradeoff.Ratio != tc.wantRate):
				t.Errorf("tradeoff %+v, want ratio %g", doc.Tradeoff, tc.wantRate)
			case tc.wantRate == 0 && doc.Tradeoff != nil:
				t.Errorf("tradeoff %+v of one run", doc.Tradeoff)
			}
			if n > 0 && doc.Result.Spec.Kind != results[0].Spec.Kind {
				t.Errorf("top-level result is %s, want the first run's %s", doc.Result.Spec.Kind, results[0].Spec.Kind)
			}
		})
	}
}
