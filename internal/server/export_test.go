package server

import (
	"net"

	"wirespeed/internal/engine"
)

// SetListenMPTCP replaces the --mptcp test listener (listenMPTCP) until
// the returned function restores it.
func SetListenMPTCP(f func(network, host string) (*net.TCPListener, error)) (restore func()) {
	old := listenMPTCP
	listenMPTCP = func(network, host string, _ engine.Options) (*net.TCPListener, error) { return f(network, host) }
	return func() { listenMPTCP = old }
}
