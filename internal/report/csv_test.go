package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strings"
	"testing"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/sysinfo"
)

// csvRecords returns the rows of CSV(doc) as maps by column name.
func csvRecords(t *testing.T, doc result.Document) []map[string]string {
	t.Helper()
	var buf bytes.Buffer
	if err := CSV(&buf, doc); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// TestCSVHasTheTextsFigures: every CPU figure the text's cpu line shows
// is in the CSV, and agrees with it.
func TestCSVHasTheTextsFigures(t *testing.T) {
	doc := load(t, "cpu.json")
	var text bytes.Buffer
	TextIn(&text, doc.Result, TextOptions{Verbose: true}) // the CPU lines are -v's
	rec := csvRecords(t, doc)[0]
	for side, c := range map[string]*measure.CPU{"local": doc.Summary.LocalCPU, "remote": doc.Summary.RemoteCPU} {
		line := fmt.Sprintf("%.1f%%us %.1f%%sy %.1f%%hi %.1f%%si", c.UserPct, c.SystemPct, c.IRQPct, c.SoftIRQPct)
		for _, f := range strings.Fields(line) {
			if !strings.Contains(text.String(), " "+f+" ") {
				t.Fatalf("the text's %s cpu line has no %q", side, f)
			}
		}
		var us, sy, hi, si, util, sd, pu, ps float64
		fmt.Sscan(rec[side+"_user_pct"]+" "+rec[side+"_system_pct"]+" "+rec[side+"_irq_pct"]+" "+rec[side+"_softirq_pct"]+" "+
			rec[side+"_util_pct"]+" "+rec[side+"_service_demand_us_per_kb"]+" "+rec[side+"_process_user_s"]+" "+rec[side+"_process_system_s"],
			&us, &sy, &hi, &si, &util, &sd, &pu, &ps)
		if got := fmt.Sprintf("%.1f%%us %.1f%%sy %.1f%%hi %.1f%%si", us, sy, hi, si); got != line {
			t.Errorf("%s: CSV says %q, the text %q", side, got, line)
		}
		if util != c.UtilPct || sd != c.ServiceDemandMicrosPerKB || pu != c.ProcessUserS || ps != c.ProcessSystemS {
			t.Errorf("%s: CSV util %v sd %v process %v/%v, result %v %v %v/%v", side, util, sd, pu, ps,
				c.UtilPct, c.ServiceDemandMicrosPerKB, c.ProcessUserS, c.ProcessSystemS)
		}
	}
}

// TestCRRSocketSizes: TCP_CRR keeps no socket to read sizes back from;
// the table and the CSV show the sizes its sockets start with (this
// host's tcp_wmem and tcp_rmem defaults) or what -s asked, never 0.
func TestCRRSocketSizes(t *testing.T) {
	doc := load(t, "rr.json")
	doc.Spec.Kind = spec.TCPCRR
	for i := range doc.Directions[0].Streams {
		s := &doc.Directions[0].Streams[i]
		s.Sender.SndBuf, s.Sender.RcvBuf, s.Receiver.SndBuf, s.Receiver.RcvBuf = 0, 0, 0, 0
	}
	doc.Local.Env = &sysinfo.Env{Sysctls: map[string][]int64{"net.ipv4.tcp_wmem": {4096, 16384, 4194304}, "net.ipv4.tcp_rmem": {4096, 131072, 6291456}}}
	var text bytes.Buffer
	RRTable(&text, doc.Result)
	if !strings.Contains(text.String(), "16384*  131072*") || !strings.Contains(text.String(), "(tcp_wmem, tcp_rmem)") {
		t.Errorf("TCP_CRR table:\n%s", text.String())
	}
	rec := csvRecords(t, doc)[0]
	if rec["send_socket_size"] != "16384" || rec["recv_socket_size"] != "131072" || rec["socket_size_source"] != "default" {
		t.Errorf("CSV sizes %q %q %q", rec["send_socket_size"], rec["recv_socket_size"], rec["socket_size_source"])
	}
	doc.Spec.LocalSockBuf = 65536
	if rec := csvRecords(t, doc)[0]; rec["send_socket_size"] != "65536" || rec["socket_size_source"] != "asked" {
		t.Errorf("with -s 64K: CSV sizes %q %q", rec["send_socket_size"], rec["socket_size_source"])
	}
	doc.Spec.LocalSockBuf, doc.Local.Env = 0, nil
	text.Reset()
	RRTable(&text, doc.Result)
	if strings.Contains(text.String(), " 0  ") || !strings.Contains(text.String(), "-") {
		t.Errorf("TCP_CRR with nothing known shows a 0 size:\n%s", text.String())
	}
}
