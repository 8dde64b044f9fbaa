//go:build !linux

package lab

// Every platform but Linux has no network namespaces: labs and mesh labs
// cannot be made, and there are none to list, remove or stop.

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

// StartServer fails: labs need Linux network namespaces.
func (l *Lab) StartServer(context.Context, *exec.Cmd, string, string) (*Server, error) {
	return nil, ErrUnsupported
}

// Running is false: there are no labs without Linux network namespaces.
func (s *Server) Running(string) bool { return false }

// StopServer has nothing to stop.
func StopServer(string) error { return nil }

// UpMesh fails: mesh labs need Linux network namespaces.
func UpMesh(context.Context, MeshConfig) (*Mesh, error) { return nil, ErrUnsupported }

// ListMeshes finds no mesh labs: there are none without Linux network
// namespaces.
func ListMeshes() ([]string, error) { return nil, nil }

// RemoveMesh has nothing to remove.
func RemoveMesh(string) error { return nil }

// Down has nothing to remove.
func (m *Mesh) Down() error { return nil }

// Do fails: mesh labs need Linux network namespaces.
func (m *Mesh) Do(int, func() error) error { return ErrUnsupported }

// Start fails: mesh labs need Linux network namespaces.
func (m *Mesh) Start(int, *exec.Cmd) error { return ErrUnsupported }
