//go:build unix

package cli

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts c in a process group of its own, out of the
// terminal's: a Ctrl-C there reaches this process only.
func ownProcessGroup(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
