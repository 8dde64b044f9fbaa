package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"wirespeed/internal/client"
	"wirespeed/internal/iperf3"
	"wirespeed/internal/iterate"
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

	lv := f.newLive(e.stdout, rep)
	lv.label = addr + " (iperf3 server)"
	cfg := iperf3.ClientConfig{Addr: addr, IPVersion: t.IPVersion, Hostname: e.hostname, Logger: e.log, ProcRoot: f.measure.procRoot, Payload: payload,
		OnInterval: lv.tick(t)}
	measure := func(ctx context.Context, t spec.Test) (result.Result, error) {
		return iterate.Run(ctx, rep, func(ctx context.Context) (result.Result, error) { return iperf3.Run(ctx, cfg, t) }, lv.progress())
	}
	return f.measureRuns(ctx, lv, "run --iperf3", addr, t, rep, measure)
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
