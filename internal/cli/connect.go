package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/iterate"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// connection is a control connection to the server a command measures
// against: the HOST[:PORT] given, or an embedded server on loopback in
// this process when none is.
type connection struct {
	*client.Client
	addr  string // host:port dialled
	label string // how the heading names it
	stop  func() // stops the embedded server; nil without one
}

// Close says bye to the server and stops the embedded one.
func (c *connection) Close() {
	c.Client.Close()
	if c.stop != nil {
		c.stop()
	}
}

// connect resolves the command's target, starts the embedded server when
// no host is given, and dials it with the flags' security settings and
// proc root. onTick, when set, receives the interval lines.
func connect(ctx context.Context, e *env, f *runFlags, target string, portSet bool, ipVersion int, onTick func(result.Tick)) (*connection, error) {
	host, port, err := parseTarget(target, f.port, portSet)
	if err != nil {
		return nil, err
	}
	sec, err := f.sec.security(host == "")
	if err != nil {
		return nil, err
	}
	if f.logLevel != "" && f.logLevel != "warn" {
		if e.log, err = newLogger(e, "text", f.logLevel); err != nil {
			return nil, err
		}
	}
	conn := &connection{addr: net.JoinHostPort(host, strconv.Itoa(port))}
	conn.label = conn.addr
	e.procRoot = f.measure.procRoot
	if host == "" {
		a, stop, err := embeddedServer(ctx, e, ipVersion)
		if err != nil {
			return nil, err
		}
		conn.addr, conn.label, conn.stop = a, a+" (embedded server)", stop
	}
	cfg := client.Config{Addr: conn.addr, IPVersion: ipVersion, Tool: version(), Hostname: e.hostname, Logger: e.log,
		ProcRoot: f.measure.procRoot, OnInterval: onTick, ConnectTimeout: f.connectTimeout,
		BindAddr: f.spec.BindIP(), BindDev: f.spec.BindDev, // -B, --bind-dev
		RouterQueues: f.routerQueues}
	cfg.Security = sec
	if conn.Client, err = client.Dial(ctx, cfg); err != nil {
		if conn.stop != nil {
			conn.stop()
		}
		if errors.Is(err, control.ErrIperf3Server) {
			if k, kerr := spec.ParseKind(f.test); kerr == nil && (k == spec.RRUL || k.RR()) {
				// iperf3 has no latency probes nor request/response:
				// these tests need a wirespeed server there.
				return nil, fmt.Errorf("%w; iperf3 cannot run %s: start `wirespeed serve` on that host and run against it", err, k)
			}
			return nil, fmt.Errorf("%w; to measure against it, add --iperf3: wirespeed run --iperf3 %s", err, conn.addr)
		}
		return nil, err
	}
	return conn, nil
}

// iterate measures t as rep asks over this connection, with the address
// dialled as the remote side's: the Measure of a sweep's or a matrix's
// points.
func (c *connection) iterate(ctx context.Context, t spec.Test, rep spec.Repeat, progress func(iterate.Event)) (result.Result, error) {
	res, err := c.Iterate(ctx, t, rep, progress)
	res.Remote.Address = c.addr
	return res, err
}
