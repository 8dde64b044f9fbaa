package client

import (
	"context"

	"wirespeed/internal/iterate"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// Iterate runs t as rep asks, each iteration a full run over fresh data
// connections on this control connection, and returns the mean result
// (see iterate.Run).
func (c *Client) Iterate(ctx context.Context, t spec.Test, rep spec.Repeat, progress func(iterate.Event)) (result.Result, error) {
	return iterate.Run(ctx, rep, func(ctx context.Context) (result.Result, error) { return c.Run(ctx, t) }, progress)
}
