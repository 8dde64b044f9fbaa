package cli

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRunRecordsSocketCongestionControl asks for a congestion control
// other than the system default, as the kernel lists them under
// /proc/sys, and checks that the env line, the JSON's streams and the CSV
// name the one the data sockets used, with the default beside it.
func TestRunRecordsSocketCongestionControl(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("/proc/sys/net/ipv4", name))
		if err != nil {
			t.Skipf("no %s: %v", name, err)
		}
		return strings.TrimSpace(string(b))
	}
	def := read("tcp_congestion_control")
	avail := strings.Fields(read("tcp_available_congestion_control"))
	i := slices.IndexFunc(avail, func(s string) bool { return s != def })
	if i < 0 {
		t.Skipf("the kernel offers only %q: no other congestion control to ask for", def)
	}
	cc := avail[i]
	csvPath := filepath.Join(t.TempDir(), "r.csv")
	code, out, errOut := execute(t, context.Background(), "run", "-l", "0.3", "-i", "0", "-v", "--cc", cc, "-o", csvPath)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "cc " + cc + " (default " + def + ")"
	if strings.Count(out, want) != 2 {
		t.Errorf("want %q on both env lines:\n%s", want, out)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("csv: %v, %d rows", err, len(rows))
	}
	col := slices.Index(rows[0], "congestion_control")
	if col < 0 || rows[1][col] != cc {
		t.Errorf("csv congestion_control column %d = %q, want %q", col, rows[1][min(max(col, 0), len(rows[1])-1)], cc)
	}

	// With no --cc the sockets use the default, and the CSV says which.
	code, _, errOut = execute(t, context.Background(), "run", "-l", "0.3", "-i", "0", "-o", csvPath)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, _ := os.ReadFile(csvPath)
	if rows, _ := csv.NewReader(strings.NewReader(string(b))).ReadAll(); len(rows) < 2 || rows[1][col] != def {
		t.Errorf("csv without --cc: %q, want the default %q in congestion_control", b, def)
	}
}
