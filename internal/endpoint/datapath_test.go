package endpoint

import (
	"strings"
	"testing"
)

func TestPacingVerdict(t *testing.T) {
	tests := []struct {
		name                     string
		tcp                      bool
		qdisc, deflt, release    string
		wantBy, wantNoteContains string
	}{
		{"tcp on noqueue", true, "noqueue", "fq_codel", "6.18.44-fc", "tcp", "internal pacing"},
		{"tcp on fq", true, "fq", "", "6.1.0", "fq", "fq qdisc"},
		{"tcp before 4.20", true, "pfifo_fast", "pfifo_fast", "4.19.0", "", "before Linux 4.20"},
		{"tcp 4.20", true, "pfifo_fast", "", "4.20.0", "tcp", "internal pacing"},
		{"udp on noqueue", false, "noqueue", "", "6.18.0", "", "only the fq qdisc paces UDP"},
		{"udp on mq of fq", false, "mq", "fq", "6.18.0", "fq", "mq"},
		{"udp on mq of fq_codel", false, "mq", "fq_codel", "6.18.0", "", "fq"},
		{"udp qdisc unknown", false, "", "", "", "", "unknown"},
	}
	for _, tt := range tests {
		by, note := pacingVerdict(tt.tcp, tt.qdisc, tt.deflt, tt.release)
		if by != tt.wantBy || !strings.Contains(note, tt.wantNoteContains) {
			t.Errorf("%s: %q, %q; want %q and a note about %q", tt.name, by, note, tt.wantBy, tt.wantNoteContains)
		}
	}
}
