package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"wirespeed/internal/control"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// RelayGrace is how much longer than a relayed test's warm-up and window
// the client waits for its result: the relaying server's connect and
// handshake with the peer (5 s each at most), the run's own grace (20 s)
// and room for the result to travel.
const RelayGrace = 40 * time.Second

// relayAbortWait bounds the wait for the result of a relay the user
// interrupted: the relaying server stops its test and answers at once.
const relayAbortWait = 10 * time.Second

// Relay asks the server this client is connected to (A) to run req.Spec
// against req.Peer (B) as B's client, and returns the result A joined:
// Local is A, Remote is B. The server must allow it (serve
// --allow-relay, --relay-peers) and this client must have authenticated
// with the server's pre-shared key.
//
// A refusal (control.ErrRelayRefused, ErrAuth, ErrBusy, ErrLimit, ...)
// leaves the connection usable. When ctx is cancelled the client asks A
// to stop; A stops its test against B and still answers with what was
// measured, marked interrupted, which Relay returns with a nil error, as
// Run does. Relay always returns within the test's warm-up and length
// plus RelayGrace.
func (c *Client) Relay(ctx context.Context, req control.RelayRequest) (result.Result, error) {
	if c.broken {
		return result.Result{}, errors.New("control connection is unusable after an earlier failure")
	}
	if err := req.Spec.Validate(); err != nil {
		return result.Result{}, fmt.Errorf("%w: %v", control.ErrInvalid, err)
	}
	if req.Spec.Payload.Kind == spec.PayloadFile {
		return result.Result{}, fmt.Errorf("%w: a relayed test cannot send a --payload file (the relaying server has no copy): use random or zeros", control.ErrInvalid)
	}
	if err := control.CheckRelayPeer(req.Peer); err != nil {
		return result.Result{}, fmt.Errorf("%w: %v", control.ErrInvalid, err)
	}
	if err := c.cc.Send(control.TypeRelay, req); err != nil {
		c.broken = true
		return result.Result{}, err
	}
	type answer struct {
		res result.Result
		err error
	}
	ch := make(chan answer, 1)
	deadline := time.Now().Add(req.Spec.Omit + req.Spec.Duration + RelayGrace)
	go func() {
		var rr control.RelayResult
		err := c.cc.Expect(control.TypeRelayResult, &rr, time.Until(deadline))
		ch <- answer{rr.Result, err}
	}()
	var a answer
	select {
	case a = <-ch:
	case <-ctx.Done():
		c.cc.Send(control.TypeAbort, control.Abort{Reason: "interrupted by the user"})
		select {
		case a = <-ch:
		case <-time.After(relayAbortWait):
			c.cc.NetConn().SetReadDeadline(time.Unix(1, 0))
			a = <-ch
		}
	}
	if a.err != nil {
		var re *control.RemoteError
		if !errors.As(a.err, &re) {
			c.broken = true
		}
		return result.Result{}, c.explainRelay(req.Peer, a.err)
	}
	// The relaying server joined its figures and its peer's: neither is
	// this side's, so they are checked as a peer's are where they enter.
	if err := result.CheckJoined(a.res); err != nil {
		return result.Result{}, fmt.Errorf("server %s, relaying to %s: %w: the relayed result's figures cannot be measured: %w", c.cfg.Addr, req.Peer, control.ErrProtocol, err)
	}
	if ctx.Err() != nil {
		a.res.Interrupted = true
	}
	return a.res, nil
}

// explainRelay says which server an error of a relay came from.
func (c *Client) explainRelay(peer string, err error) error {
	var re *control.RemoteError
	if errors.As(err, &re) {
		// The relaying server's messages name the peer when it matters.
		return fmt.Errorf("server %s: %w", c.cfg.Addr, err)
	}
	return fmt.Errorf("server %s, relaying to %s: %w", c.cfg.Addr, peer, explainLost(err))
}
