//go:build !linux

package netconf

func openDevice(Options) (device, error) { return nil, ErrUnsupported }
