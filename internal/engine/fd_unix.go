//go:build unix && !linux

package engine

func sysFD(fd uintptr) int { return int(fd) }
