package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"

	"github.com/spf13/cobra"

	"wirespeed/internal/client"
	"wirespeed/internal/iperf3"
	"wirespeed/internal/iterate"
	"wirespeed/internal/report"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// addIperf3Flags registers `run --iperf3`.
func addIperf3Flags(cmd *cobra.Command, f *runFlags) {
	cmd.Flags().BoolVar(&f.iperf3, "iperf3", false,
		fmt.Sprintf("HOST is an iperf3 server (3.x): run TCP_STREAM, TCP_MAERTS (-R), TCP_BIDIR or UDP_STREAM (-b) against it; port %d unless HOST:PORT or -p names one", iperf3.DefaultPort))
}

// runIperf3 is `wirespeed run --iperf3 HOST[:PORT]`: the same spec, the
// same result and reports, against an unmodified iperf3 server.
func runIperf3(ctx context.Context, e *env, f *runFlags, target string, portSet bool) error {
	t, err := f.buildSpec()
	if err != nil {
		return err
	}
	if f.tradeoff {
		return usagef("--tradeoff is not available with --iperf3: run -t TCP_STREAM and -t TCP_MAERTS one after the other")
	}
	if err := iperf3.CheckTest(t); err != nil {
		return usageError{err}
	}
	rep, err := f.measure.repeat()
	if err != nil {
		return err
	}
	if target == "" {
		return usagef("--iperf3 needs the iperf3 server's HOST[:PORT]")
	}
	port := f.port
	if !portSet {
		port = iperf3.DefaultPort
	}
	host, port, err := parseTarget(target, port, portSet)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	var payload []byte
	if t.Payload.Kind == spec.PayloadFile {
		if payload, err = readPayload(t.Payload.Path); err != nil {
			return err
		}
	}

	stream := f.out.jsonStream
	text := !f.json && !stream && f.out.fields == nil
	var mu sync.Mutex
	headerShown := false
	cfg := iperf3.ClientConfig{Addr: addr, IPVersion: t.IPVersion, Hostname: e.hostname, Logger: e.log, ProcRoot: f.measure.procRoot, Payload: payload}
	if stream && t.Interval > 0 {
		cfg.OnInterval = streamTick(e.stdout, &mu)
	}
	if text && t.Interval > 0 {
		cfg.OnInterval = func(tk result.Tick) {
			mu.Lock()
			defer mu.Unlock()
			if !headerShown {
				report.IntervalHeader(e.stdout)
				headerShown = true
			}
			report.TickIn(f.out.tickWriter(e.stdout), tk, f.out.unit)
		}
	}
	label := addr + " (iperf3 server)"
	if text {
		report.Heading(e.stdout, t, label)
	}
	if stream {
		report.Stream(e.stdout, "start", report.StreamStart{Server: addr, Spec: t})
	}
	res, runErr := iterate.Run(ctx, rep, func(ctx context.Context) (result.Result, error) { return iperf3.Run(ctx, cfg, t) },
		iterationLines(e.stdout, text && rep.Repeats(), &mu, func() { headerShown = false }))
	if runErr != nil && len(res.Directions) == 0 {
		if stream {
			streamEnd(e.stdout, nil, runErr)
		}
		return runErr
	}
	doc := result.Document{Schema: result.Schema, Tool: tool(), Command: "run --iperf3", Result: res}
	f.record.apply(&doc)
	if rep.Repeats() {
		doc.Repeat = &rep
	}
	if text {
		fmt.Fprintln(e.stdout)
		report.TextIn(e.stdout, res, f.out.unit)
	}
	switch {
	case f.out.fields != nil:
		if err := report.Fields(e.stdout, doc, f.out.fields, f.out.fieldStyle); err != nil {
			return err
		}
	case stream:
		if err := streamEnd(e.stdout, &doc, nil); err != nil {
			return err
		}
	case f.json:
		if err := report.JSON(e.stdout, doc); err != nil {
			return err
		}
	}
	if f.output != "" {
		if err := report.WriteFile(f.output, doc, func(w io.Writer) { report.TextIn(w, res, f.out.unit) }); err != nil {
			return err
		}
	}
	if runErr != nil {
		return runErr
	}
	if res.Interrupted {
		return errInterrupted
	}
	return nil
}

// readPayload reads a --payload file, bounded as the wirespeed client
// bounds it.
func readPayload(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("payload file: %w", err)
	}
	if fi.Size() > client.MaxPayloadFile {
		return nil, fmt.Errorf("payload file %s is larger than %d bytes; use a smaller sample of the data", path, client.MaxPayloadFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("payload file: %w", err)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("payload file %s is empty", path)
	}
	return b, nil
}
