//go:build !linux

package lab

import (
	"context"
	"os/exec"
)

// StartServer fails: labs need Linux network namespaces.
func (l *Lab) StartServer(context.Context, *exec.Cmd, string, string) (*Server, error) {
	return nil, ErrUnsupported
}

// Running is false: there are no labs without Linux network namespaces.
func (s *Server) Running(string) bool { return false }

// StopServer has nothing to stop.
func StopServer(string) error { return nil }
