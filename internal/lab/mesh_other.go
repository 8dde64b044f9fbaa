//go:build !linux

package lab

import (
	"context"
	"os/exec"
)

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
