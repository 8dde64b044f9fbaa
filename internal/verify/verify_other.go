//go:build !linux

package verify

import (
	"context"
	"errors"
	"time"
)

// Run needs Linux: the labs are network namespaces.
func Run(ctx context.Context, cfg Config) (Report, error) {
	return Report{Started: time.Now()}, errors.New("verify builds labs of Linux network namespaces: run it on Linux, as root")
}
