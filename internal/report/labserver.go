package report

import (
	"fmt"
	"io"
)

// LabServer is the wirespeed server running in side a of a lab.
type LabServer struct {
	// Host is where it runs: "a" when empty, or a mesh host ("h3").
	Host    string
	PID     int
	Addr    string // HOST:PORT clients in side b connect to
	Running bool
	Log     string
	Key     string // the pre-shared key file clients must prove; "" for none
}

// labServer writes the server line of a lab's status.
func labServer(w io.Writer, s *LabServer) {
	if s == nil {
		return
	}
	state := "running"
	if !s.Running {
		state = "NOT RUNNING"
	}
	side := s.Host
	if side == "" {
		side = "a"
	}
	fmt.Fprintf(w, "  server: wirespeed serve on %s in %s, pid %d, %s (log %s)\n", s.Addr, side, s.PID, state, s.Log)
	if s.Key != "" {
		fmt.Fprintf(w, "  key:    %s (lab run passes it; other clients need --psk-file %s)\n", s.Key, s.Key)
	}
}
