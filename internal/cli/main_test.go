package cli

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// The test binary doubles as the wirespeed program, for the commands that
// start wirespeed as a child (lab up's server, lab run's client): started
// with WIRESPEED_MAIN=1 in its environment it runs Main with its
// arguments, as cmd/wirespeed's main does, before any test. It is an init
// function rather than TestMain, which process_test.go has.
func init() {
	if os.Getenv("WIRESPEED_MAIN") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		go func() { <-ctx.Done(); stop() }()
		os.Exit(Main(ctx, os.Args[1:], os.Stdout, os.Stderr))
	}
	selfCommand = func(args ...string) (*exec.Cmd, error) {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), "WIRESPEED_MAIN=1")
		return cmd, nil
	}
}
