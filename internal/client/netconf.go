package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"wirespeed/internal/control"
)

// netconfTimeout bounds a netconf request: a device change, its check and
// a fresh environment record. Some drivers reset the link on an MTU
// change, which takes seconds.
const netconfTimeout = 30 * time.Second

// ErrNoNetconf is returned by Netconf for a server that does not
// understand netconf requests (an older wirespeed).
var ErrNoNetconf = errors.New("the server does not understand netconf requests; run the same wirespeed release on both ends")

// Netconf asks the server to check, set, restore or keep settings of its
// device dev (see control.NetconfRequest). A refusal (the server was not
// started with --allow-netconf, or the session is not authenticated) is
// an error with code control.CodeForbidden; a change that failed, one
// with control.CodeNetconf. Both leave the session usable.
func (c *Client) Netconf(ctx context.Context, action, dev string, settings []string) (control.NetconfReply, error) {
	var reply control.NetconfReply
	if !c.server.Has(control.CapNetconf) {
		return reply, fmt.Errorf("server %s: %w", c.cfg.Addr, ErrNoNetconf)
	}
	if c.broken {
		return reply, errors.New("control connection is unusable after an earlier failure")
	}
	if err := ctx.Err(); err != nil {
		return reply, err
	}
	req := control.NetconfRequest{Action: action, Dev: dev, Settings: settings}
	if err := c.cc.Send(control.TypeNetconf, req); err != nil {
		c.broken = true
		return reply, err
	}
	// Once sent, the request is not cancelled with ctx: the server
	// answers within its own bounds, and an answer left unread would be
	// taken for the next message. To restore after an interrupt, pass
	// context.WithoutCancel.
	if err := c.cc.Expect(control.TypeNetconfDone, &reply, netconfTimeout); err != nil {
		var re *control.RemoteError
		if !errors.As(err, &re) {
			c.broken = true
		}
		return reply, fmt.Errorf("server %s: %s %s: %w", c.cfg.Addr, action, dev, err)
	}
	return reply, nil
}
