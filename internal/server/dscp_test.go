package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

// TestMaxDSCP: a client may not have the server's packets carry a DSCP
// over serve --max-dscp; by default the network control classes (CS6,
// CS7) are refused and EF is not. Before (issue 32), any client set any
// DSCP on the server's packets (CS7 on 20 of 20).
func TestMaxDSCP(t *testing.T) {
	tests := []struct {
		name    string
		max     int
		tos     int
		refused bool
	}{
		{"default, CS7", 0, 0xe0, true},
		{"default, CS6", 0, 0xc0, true},
		{"default, EF", 0, 0xb8, false},
		{"default, EF with ECN bits", 0, 0xbb, false},
		{"none allowed, EF", server.NoDSCP, 0xb8, true},
		{"none allowed, ECN only", server.NoDSCP, 0x01, false},
		{"63 allowed, CS7", 63, 0xe0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t, server.Config{Admission: server.Admission{MaxDSCP: tt.max}})
			c := mustDial(t, client.Config{Addr: srv.addr})
			defer c.Close()
			sp := shortSpec(spec.TCPMaerts, 1)
			sp.TOS = tt.tos
			_, err := c.Run(context.Background(), sp)
			switch {
			case tt.refused && (!errors.Is(err, control.ErrLimit) || !strings.Contains(err.Error(), "--max-dscp")):
				t.Errorf("TOS %#x: got %v, want a refusal naming --max-dscp", tt.tos, err)
			case !tt.refused && err != nil:
				t.Errorf("TOS %#x: %v", tt.tos, err)
			}
			if tt.refused {
				srv.logs.waitLog(t, "test refused", "reason=max_dscp")
			}
		})
	}
}
