//go:build !linux

package lab

import (
	"context"
	"os/exec"
)

// Up fails: labs need Linux network namespaces.
func Up(context.Context, Config) (*Lab, error) { return nil, ErrUnsupported }

// Load fails: labs need Linux network namespaces.
func Load(string) (*Lab, error) { return nil, ErrUnsupported }

// List finds no labs: there are none without Linux network namespaces.
func List() ([]string, error) { return nil, nil }

// Remove has nothing to remove.
func Remove(string) error { return nil }

// Down has nothing to remove.
func (l *Lab) Down() error { return nil }

// Do fails: labs need Linux network namespaces.
func (l *Lab) Do(Side, func() error) error { return ErrUnsupported }

// Start fails: labs need Linux network namespaces.
func (l *Lab) Start(Side, *exec.Cmd) error { return ErrUnsupported }
