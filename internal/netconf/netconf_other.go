//go:build !linux

package netconf

import "os"

func openDevice(Options) (device, error) { return nil, ErrUnsupported }

// raise is never reached here: Open fails, so no session handles a signal.
func raise(os.Signal) {}
