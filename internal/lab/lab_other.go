//go:build !linux

package lab

// Every platform but Linux has no network namespaces: labs and mesh labs
// cannot be made, and there are none to list, remove or stop.

import (
	"context"
	"os/exec"

	"wirespeed/internal/netdev"
)

func upLab(context.Context, Config) (*Lab, error)             { return nil, ErrUnsupported }
func loadLab(string) (*Lab, error)                            { return nil, ErrUnsupported }
func listLabs() ([]string, error)                             { return nil, nil }
func removeLab(string) error                                  { return nil }
func (l *Lab) do(HostName, func() error) error                { return ErrUnsupported }
func (l *Lab) start(HostName, *exec.Cmd) error                { return ErrUnsupported }
func upMeshLab(context.Context, MeshConfig) (*Mesh, error)    { return nil, ErrUnsupported }
func listMeshes() ([]string, error)                           { return nil, nil }
func removeMesh(string) error                                 { return nil }
func (m *Mesh) do(int, func() error) error                    { return ErrUnsupported }
func (m *Mesh) start(int, *exec.Cmd) error                    { return ErrUnsupported }
func upRouted(context.Context, RoutedConfig) (*Routed, error) { return nil, ErrUnsupported }
func (r *Routed) RouterQdisc() (uint64, uint64, error)        { return 0, 0, ErrUnsupported }
func hasRouter(string) (bool, error)                          { return false, nil }
func stopServer(string) error                                 { return nil }
func (s *Server) running(string) bool                         { return false }

func (l *Lab) startServer(context.Context, *exec.Cmd, string, string) (*Server, error) {
	return nil, ErrUnsupported
}

func loadMesh(string) (*Mesh, error) { return nil, ErrUnsupported }

func startServerAs(context.Context, *Lab, string, *exec.Cmd, string, string) (*Server, error) {
	return nil, ErrUnsupported
}

func (Host) Offloads() []netdev.FeatureState { return nil }
