//go:build !linux

package sysinfo

import "wirespeed/internal/run"

// probeDataPath is Linux only: elsewhere the options do not exist.
func probeDataPath(s *run.DataPathSupport) error {
	*s = run.DataPathSupport{}
	return nil
}
