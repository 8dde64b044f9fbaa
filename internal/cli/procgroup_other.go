//go:build !unix

package cli

import "os/exec"

// ownProcessGroup does nothing where there are no process groups (the
// lab that uses it is Linux only).
func ownProcessGroup(*exec.Cmd) {}
