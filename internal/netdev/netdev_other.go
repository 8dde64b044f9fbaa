//go:build !linux

package netdev

import (
	"errors"

	"github.com/vishvananda/netns"
)

type client struct{}

func open(netns.NsHandle) (client, error) { return client{}, ErrUnsupported }

func (client) close() error                              { return nil }
func (client) driverInfo(string) (DriverInfo, error)     { return DriverInfo{}, ErrUnsupported }
func (client) linkMode(string) (LinkMode, error)         { return LinkMode{}, ErrUnsupported }
func (client) features(string) (Features, error)         { return nil, ErrUnsupported }
func (client) setFeatures(string, map[string]bool) error { return ErrUnsupported }
func isErrno(err, target error) bool                     { return errors.Is(err, target) }

func (client) wire(string, bool) (WireCounters, error)           { return WireCounters{}, ErrUnsupported }
func (client) qdisc(string) (*QdiscCounters, error)              { return nil, ErrUnsupported }
func (client) allEthtoolStats(string) (map[string]uint64, error) { return nil, ErrUnsupported }
