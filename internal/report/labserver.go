package report

import (
	"fmt"
	"io"
)

// LabServer is the wirespeed server running in side a of a lab.
type LabServer struct {
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
	fmt.Fprintf(w, "  server: wirespeed serve on %s in a, pid %d, %s (log %s)\n", s.Addr, s.PID, state, s.Log)
	if s.Key != "" {
		fmt.Fprintf(w, "  key:    %s (lab run passes it; other clients need --psk-file %s)\n", s.Key, s.Key)
	}
}
