// Command wirespeed measures network throughput between two hosts; it is
// both the server (wirespeed serve) and the client (wirespeed run). See
// `wirespeed --help` and the README.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"wirespeed/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, a second one ends the process at once.
	go func() { <-ctx.Done(); stop() }()
	os.Exit(cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
