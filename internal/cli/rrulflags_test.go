package cli

import (
	"io"
	"strings"
	"testing"
)

// TestRouterQueueFlag: run's --router-queue, lab run's way of naming a
// routed lab's router egresses, takes NETNS/DEV once per egress, keeps
// them in order, refuses anything else with the form it wants, and is
// not in run's help.
func TestRouterQueueFlag(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		want    string
		wantErr string
	}{
		{args: nil, want: ""},
		{args: []string{"--router-queue", "wst-lab-r/wst-ra", "--router-queue", "wst-lab-r/wst-rb"}, want: "wst-lab-r/wst-ra,wst-lab-r/wst-rb"},
		{args: []string{"--router-queue", "wst-rb"}, wantErr: "want NETNS/DEV"},
		{args: []string{"--router-queue", "/wst-rb"}, wantErr: "want NETNS/DEV"},
		{args: []string{"--router-queue", "wst-lab-r/"}, wantErr: "want NETNS/DEV"},
		{args: []string{"--router-queue", "a/b/c"}, wantErr: "want NETNS/DEV"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd := newRunCmd(&env{stdout: io.Discard, stderr: io.Discard})
			err := cmd.ParseFlags(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cmd.Flags().Lookup("router-queue").Value.String(); got != tt.want {
				t.Errorf("router queues %q, want %q", got, tt.want)
			}
		})
	}
	cmd := newRunCmd(&env{stdout: io.Discard, stderr: io.Discard})
	if strings.Contains(cmd.Flags().FlagUsages(), "router-queue") {
		t.Error("run's help lists --router-queue, lab run's plumbing")
	}
}
