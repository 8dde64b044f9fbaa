//go:build !linux

package engine

import "syscall"

// Unsent returns ErrUnsupported: only Linux tells how much of a socket's
// sent data is unacknowledged.
func Unsent(c syscall.Conn) (int, error) { return 0, ErrUnsupported }
