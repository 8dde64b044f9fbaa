package engine

import "syscall"

func sysFD(fd uintptr) syscall.Handle { return syscall.Handle(fd) }
