package client

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"wirespeed/internal/control"
	"wirespeed/internal/measure"
	"wirespeed/internal/sysinfo"
)

// envTimeout bounds collecting the environment record: a few netlink and
// ethtool calls and /proc reads, well under a millisecond normally.
const envTimeout = 5 * time.Second

// envCache holds the client's environment record for its control
// connection: collected at the first run, kept for the next ones (it
// costs netlink and ethtool calls), and collected again after RefreshEnv.
type envCache struct {
	mu  sync.Mutex
	env *sysinfo.Env

	// baselineOnce takes the idle CPU baseline as the connection opens
	// (Dial), before any test; baseline is what it measured (nil
	// when it could not) and baselineErr why not.
	baselineOnce sync.Once
	baseline     *measure.CPUBaseline
	baselineErr  error
}

// takeBaseline is sysinfo.TakeBaseline; a test counts its calls.
var takeBaseline = sysinfo.TakeBaseline

// idleBaseline takes the client's idle CPU baseline once per control
// connection, as Dial ends: Dial waits sysinfo.BaselineWindow for it,
// the runs not at all.
func (c *Client) idleBaseline(ctx context.Context) {
	c.env.baselineOnce.Do(func() {
		c.env.baseline, c.env.baselineErr = takeBaseline(ctx, c.cfg.ProcRoot, sysinfo.BaselineWindow)
	})
}

// localEnv returns the client's record for the route to the server,
// collecting it when there is none. It never fails: what could not be
// read is in the record's warnings.
func (c *Client) localEnv(ctx context.Context) *sysinfo.Env {
	c.env.mu.Lock()
	defer c.env.mu.Unlock()
	if c.env.env == nil {
		env := c.collectEnv(ctx)
		c.env.env = &env
	}
	return c.env.env
}

func (c *Client) collectEnv(ctx context.Context) sysinfo.Env {
	// Collected after a run too, when ctx may be cancelled (Ctrl-C): the
	// record is still wanted for the partial result.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), envTimeout)
	defer cancel()
	opts := sysinfo.Options{ProcRoot: c.cfg.ProcRoot}
	if peer, err := netip.ParseAddr(c.serverIP()); err == nil {
		opts.Peer = peer.Unmap()
	}
	env, warnings, err := sysinfo.Collect(ctx, opts)
	if err != nil {
		warnings = append(warnings, err.Error())
	}
	if c.env.baselineErr != nil {
		warnings = append(warnings, fmt.Sprintf("idle cpu baseline: %v", c.env.baselineErr))
	}
	env.CPUBaseline = c.env.baseline
	env.Warnings = warnings
	if env.Hostname == "" {
		env.Hostname = c.cfg.Hostname
	}
	return env
}

// RefreshEnv forgets the client's environment record, so that the next
// run collects it again: call it after changing a setting the record
// shows (an MTU, an offload feature). When the server keeps a record too
// (it lists the env capability), RefreshEnv asks it for a fresh one,
// which it then sends with its next results, and returns it; otherwise it
// returns nil.
func (c *Client) RefreshEnv(ctx context.Context) (*sysinfo.Env, error) {
	c.env.mu.Lock()
	c.env.env = nil
	c.env.mu.Unlock()
	if !c.server.Has(control.CapEnv) {
		return nil, nil
	}
	if c.broken {
		return nil, errors.New("control connection is unusable after an earlier failure")
	}
	if err := c.cc.Send(control.TypeEnv, struct{}{}); err != nil {
		c.broken = true
		return nil, err
	}
	var reply control.EnvReply
	if err := c.cc.Expect(control.TypeEnv, &reply, envTimeout+5*time.Second); err != nil {
		var re *control.RemoteError
		if !errors.As(err, &re) {
			c.broken = true
		}
		return nil, fmt.Errorf("server %s: environment record: %w", c.cfg.Addr, err)
	}
	return &reply.Env, nil
}

// wireDevice is the device whose counters a run reads: the interface of
// the environment record, "" when it has none.
func wireDevice(env *sysinfo.Env) string {
	if env == nil || env.Interface == nil {
		return ""
	}
	return env.Interface.Name
}
