package mesh

import (
	"context"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/iterate"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// PairMeasure measures pairs over wirespeed's protocol with cfg (its
// Addr is set per pair): t repeated as rep asks, from this process when
// the source is this host (client.Iterate against the destination), or
// through the source's server otherwise (iterate.Run over client.Relay),
// so that iterations and confidence work the same through a relay.
func PairMeasure(cfg client.Config, t spec.Test, rep spec.Repeat) Measure {
	return func(ctx context.Context, src, dst result.MeshPeer) (result.Result, error) {
		cfg := cfg
		if src.Local {
			cfg.Addr = dst.Address
			c, err := client.Dial(ctx, cfg)
			if err != nil {
				return result.Result{}, err
			}
			defer c.Close()
			return c.Iterate(ctx, t, rep, nil)
		}
		cfg.Addr = src.Address
		cfg.RelayOnly = true // this host is not in the pair: no baseline of its own
		c, err := client.Dial(ctx, cfg)
		if err != nil {
			return result.Result{}, err
		}
		defer c.Close()
		req := control.RelayRequest{Peer: dst.Address, Spec: t, Source: src.Name, Destination: dst.Name}
		return iterate.Run(ctx, rep, func(ctx context.Context) (result.Result, error) {
			return c.Relay(ctx, req)
		}, nil)
	}
}
