package report

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"wirespeed/internal/measure"
	"wirespeed/internal/result"
)

// warningCases are one or more warnings of each code with the words the
// code's sentence said before warnings had codes: those were made by the
// format strings result and limit had, with these figures, and read over
// by hand (62.5% is "62%": %.0f rounds half to even; 991.5 Mbit/s sent is
// "992", and 621 of it 62.63%).
var warningCases = []warningCase{
	{"no_sender_figures", result.WarnNoSenderFigures, map[string]string{"direction": "server_to_client", "side": "remote"}, nil, nil,
		"server_to_client: no sender figures from the remote side"},
	{"no_receiver_figures", result.WarnNoReceiverFigures, map[string]string{"direction": "client_to_server", "side": "remote"}, nil, nil,
		"client_to_server: no receiver figures from the remote side"},
	{"side_error", result.WarnSideError, map[string]string{"side": "remote", "message": "sampler: no such device"}, nil, nil,
		"remote side: sampler: no such device"},
	{"side_warning", result.WarnSideWarning, map[string]string{"side": "local", "message": "idle cpu baseline: open /proc/stat: permission denied"}, nil, nil,
		"local side: idle cpu baseline: open /proc/stat: permission denied"},
	{"checksum_errors", result.WarnChecksumErrors, map[string]string{"side": "remote"}, map[string]float64{"in_csum_errors": 7}, nil,
		"remote side: the kernel counted 7 segments or datagrams with a bad checksum (InCsumErrors) during the run: a NIC computing wrong checksums, often with offload and jumbo frames, shows up this way"},
	{"amount_no_sender", result.WarnAmountNoSender, map[string]string{"direction": "client_to_server"}, map[string]float64{"amount_bytes": 10000000, "received_bytes": 4000000}, nil,
		"client_to_server: the amount of 10000000 bytes was not reached: the receiver got 4000000 bytes (no sender figures)"},
	{"amount_length_ran_out", result.WarnAmountLengthOut, map[string]string{"direction": "client_to_server"}, map[string]float64{"amount_bytes": 10000000, "sent_bytes": 6000000, "length_s": 1.5}, nil,
		"client_to_server: the amount of 10000000 bytes was not reached: the sender sent 6000000 bytes before the length (-l 1.5s) ran out"},
	{"amount_lost", result.WarnAmountLost, map[string]string{"direction": "server_to_client"}, map[string]float64{"amount_bytes": 10000000, "sent_bytes": 10000000, "received_bytes": 9999000}, nil,
		"server_to_client: the amount of 10000000 bytes was not reached: the sender sent 10000000 bytes, the receiver got 9999000"},
	{"no_cpu_figures", result.WarnNoCPUFigures, map[string]string{"side": "remote", "reason": "read cpu times: open /x/stat: no such file"}, nil, nil,
		"remote side: no CPU figures: read cpu times: open /x/stat: no such file"},
	{"no_datapath_record", result.WarnNoDataPathRecord, map[string]string{"side": "remote", "options": "--fq-rate, -T"}, nil, nil,
		"remote side: no data path record: its wirespeed may predate --fq-rate, -T and have measured without them"},
	{"mptcp_fallback", result.WarnMPTCPFallback, map[string]string{"side": "remote"}, map[string]float64{"streams": 1, "of": 3}, nil,
		"remote side: 1 of 3 streams fell back to TCP: the peer or a middlebox between refused Multipath TCP (--mptcp)"},
	{"no_mptcp_record", result.WarnNoMPTCPRecord, map[string]string{"side": "remote"}, nil, nil,
		"remote side: no MPTCP record: its wirespeed may predate --mptcp and have used TCP"},
	{"zerocopy_refused", result.WarnZeroCopyRefused, map[string]string{"side": "local", "note": "MSG_ZEROCOPY refused: ENOBUFS"}, nil, nil,
		"local side: MSG_ZEROCOPY refused: ENOBUFS"},
	{"fq_rate_not_enforced", result.WarnFQRateUnenforced, map[string]string{"side": "local", "note": "UDP without fq: nothing paces it"}, nil, nil,
		"local side: --fq-rate is not enforced: UDP without fq: nothing paces it"},
	{"pacing_cap_exceeded", result.WarnPacingCapExceeded, map[string]string{"side": "remote"}, map[string]float64{"achieved_bps": 150e6, "asked_bps": 100e6}, nil,
		"remote side: a stream reached 150 Mbits/sec against a pacing cap of 100 Mbits/sec: the cap did not hold"},
	{"udp_batch", result.WarnUDPBatch, map[string]string{"side": "remote"}, map[string]float64{"stream": 3, "sends_per_call": 63.96, "send_batch": 1}, nil,
		"remote side: stream 3 made 64.0 sends per system call where the spec asks for 1 (--send-batch): its wirespeed may predate the option and batch by default"},
	{"udp_sender_short", result.WarnUDPSenderShort, map[string]string{"direction": "client_to_server", "sender": "local"}, map[string]float64{"sender_bps": 1063e6, "asked_bps": 8000e6, "sender_pct": 100 * 1063e6 / 8000e6}, nil,
		"client_to_server: the sender reached 1063 of 8000 Mbits/sec asked (13.3%): the local side was held back by its CPU, its socket buffer or the link it sends on"},
	{"udp_lost_after_send", result.WarnUDPLostAfterSend, map[string]string{"direction": "client_to_server", "sender": "local", "receiver": "remote"}, map[string]float64{"received_bps": 621e6, "sent_bps": 991.5e6, "received_pct": 100 * 621e6 / 991.5e6, "sender_kernel_dropped_datagrams": 3883}, nil,
		"client_to_server: the receiver got 621 of 992 Mbits/sec sent (62.63%): datagrams were lost after the sender's (local) socket took them, 3883 of them dropped by the sender's kernel at a full queue of its own host (Udp SndbufErrors beyond the refusals), the rest on the path or at the receiver (see the kernel lines, -v); the receiver is remote"},
	{"udp_lost_after_send/path", result.WarnUDPLostAfterSend, map[string]string{"direction": "server_to_client", "sender": "remote", "receiver": "local"}, map[string]float64{"received_bps": 40e6, "sent_bps": 50e6, "received_pct": 80, "sender_kernel_dropped_datagrams": 0}, nil,
		"server_to_client: the receiver got 40.0 of 50.0 Mbits/sec sent (80%): datagrams were lost after the sender's (remote) socket took them, on the path or at the receiver (see the kernel lines, -v); the receiver is local"},
	{"ipv4_fragmentation", result.WarnIPv4Fragmentation, map[string]string{"direction": "client_to_server", "sender": "local", "receiver": "remote"}, map[string]float64{"datagram_bytes": 9216, "frag_creates": 3668706, "frag_fails": 0, "reasm_oks": 19, "reasm_fails": 2700, "reasm_timeout": 31}, nil,
		"client_to_server: IPv4 fragmentation: datagrams of 9216 bytes are larger than the path MTU, and one lost fragment loses the whole datagram; use a smaller -m: the sender's kernel (local) cut datagrams into 3668706 fragments (Ip FragCreates) and could not cut 0 (FragFails); the receiver's (remote) reassembled 19 (ReasmOKs) and gave up on 2700 (ReasmFails, 31 of them timed out)"},
	{"device_rx_drops", result.WarnDeviceRxDrops, map[string]string{"side": "remote", "device": "eth1"}, map[string]float64{"dropped_packets": 3, "rx_dropped": 1, "rx_missed": 2, "rx_over_errors": 0}, nil,
		"remote side: its device eth1 dropped 3 received packets during the run (rx_dropped 1, rx_missed 2, rx_over_errors 0): its receive ring or the kernel's backlog was full; see docs/limits.md"},
	{"device_other_traffic", result.WarnDeviceOther, map[string]string{"side": "local", "device": "eth0"}, map[string]float64{"other_pct": 62.5}, nil,
		"local side: 62% of what its device eth0 carried was not this test's traffic: the device figures are mostly other traffic's, and the result may be held back by it"},
	{"udp_fragmented", result.WarnUDPFragmented, map[string]string{"direction": "client_to_server", "device": "wst-a"}, map[string]float64{"datagram_bytes": 4000, "mtu": 1500, "max_datagram_bytes": 1472, "packets_per_datagram": 3, "packets": 3000, "datagrams": 1000}, nil,
		"client_to_server: UDP datagrams of 4000 bytes are larger than the path MTU: the sender's device wst-a (MTU 1500) sent 3.00 packets per datagram (3000 packets for 1000 datagrams), so each went as fragments and one lost fragment loses the whole datagram; use -m 1472 or less"},
	{"udp_fragmented/nomtu", result.WarnUDPFragmented, map[string]string{"direction": "client_to_server", "device": "wst-a"}, map[string]float64{"datagram_bytes": 4000, "mtu": 0, "packets_per_datagram": 2.5, "packets": 2500, "datagrams": 1000}, nil,
		"client_to_server: UDP datagrams of 4000 bytes are larger than the path MTU: the sender's device wst-a (MTU 0) sent 2.50 packets per datagram (2500 packets for 1000 datagrams), so each went as fragments and one lost fragment loses the whole datagram"},
	{"udp_over_mtu", result.WarnUDPOverMTU, map[string]string{"direction": "server_to_client"}, map[string]float64{"datagram_bytes": 9000, "packet_bytes": 9048, "mtu": 1500, "max_datagram_bytes": 1452}, nil,
		"server_to_client: UDP datagrams of 9000 bytes (9048 with their IP and UDP headers) are larger than the sender's device MTU 1500: they leave as fragments, and one lost fragment loses the whole datagram; use -m 1452 or less"},
	{"no_direction", result.NoteNoDirection, nil, nil, nil,
		"no direction was measured"},
	{"both_directions", result.NoteBothDirections, nil, nil, nil,
		"both directions"},
	{"directions_differ", result.NoteDirectionsDiffer, map[string]string{"first_direction": "client_to_server", "first_kind": "link", "first_side": "local", "second_direction": "server_to_client", "second_kind": "congestion", "second_side": ""}, nil, nil,
		"the directions differ: client_to_server link (local), server_to_client congestion; see each direction"},
	{"others_busy", result.NoteOthersBusy, map[string]string{"side": "local"}, map[string]float64{"util_pct": 64.4}, []measure.TaskCPU{{Name: "make", ID: 31337, UtilPct: 52.2, LastCPU: 1}, {Name: "sh", ID: 13, UtilPct: 12, LastCPU: 0}},
		"other processes on the local host used 64% of a CPU (busiest: make, pid 31337, 52% (cpu1); sh, pid 13, 12% (cpu0))"},
	{"others_busy/none", result.NoteOthersBusy, map[string]string{"side": "remote"}, map[string]float64{"util_pct": 55}, nil,
		"other processes on the remote host used 55% of a CPU"},
	{"nothing_received", result.NoteNothingReceived, nil, nil, nil,
		"nothing was received in the window"},
	{"rate_not_in_force", result.NoteRateNotInForce, map[string]string{"source": "qdisc", "qdisc": "tbf", "interface": "wst-b"}, map[string]float64{"goodput_pct": 180.4, "rate_bps": 5e7}, nil,
		"the goodput is 180% of the tbf qdisc on wst-b's 5e+07 bit/s: that rate was not in force"},
	{"rate_not_in_force/speed", result.NoteRateNotInForce, map[string]string{"source": "interface_speed", "qdisc": "", "interface": "eth0"}, map[string]float64{"goodput_pct": 250, "rate_bps": 1e9}, nil,
		"the goodput is 250% of the eth0 interface speed's 1e+09 bit/s: that rate was not in force"},
	{"receiver_cpu_also", result.NoteReceiverCPUAlso, nil, map[string]float64{"load_pct": 115.3}, nil,
		"the receiver's CPU was also near saturation (115%: its busiest thread's time, wait and the softirq of its CPU)"},
	{"softirq_saturated", result.NoteSoftIRQSaturated, nil, nil, nil,
		"the receiver's busiest CPU was saturated by softirq and irq"},
	{"rwnd_without_receiver_cpu", result.NoteRwndWithoutCPU, map[string]string{"missing_sides": ""}, map[string]float64{"rwnd_limited_pct": 83}, nil,
		"rwnd_limited 83% of the window, but without the receiver's CPU figures a small window and a slow receiver look alike (run with --cpu)"},
	{"udp_loss_unexplained", result.NoteUDPLoss, nil, map[string]float64{"loss_pct": 2.345}, nil,
		"2.3% of the datagrams were lost with no rate reached and no CPU saturated"},
	{"receiver_device_overflow", result.NoteReceiverDeviceFull, map[string]string{"device": "eth1"}, map[string]float64{"drop_pct": 0.3}, nil,
		"the receiver's device eth1 dropped 0.30% of the packets it received (rx_dropped, rx_missed, rx_over_errors): its ring or the kernel's backlog overflowed"},
	{"no_cpu_to_tell", result.NoteNoCPUToTell, map[string]string{"missing_sides": "local and remote"}, nil, nil,
		"no CPU figures from both sides to tell a CPU limit (--cpu was on; none from the local and remote side: an iperf3 server or an older peer sends none, or the side could not read its CPU)"},
	{"no_cpu_saturated", result.NoteNoCPUSaturated, nil, map[string]float64{"sender_load_pct": 41.6, "receiver_load_pct": 12.4}, nil,
		"no CPU saturated: the sender's busiest thread used 42%, the receiver's 12%"},
	{"no_rate_known", result.NoteNoRateKnown, nil, nil, nil,
		"no rate known on the route (no shaping qdisc, no physical interface speed)"},
	{"no_transaction", result.NoteNoTransaction, nil, nil, nil,
		"no transaction completed in the window"},
	{"busy_polling", result.NoteBusyPolling, nil, map[string]float64{"busy_poll_us": 50}, nil,
		"busy polling (50 µs) keeps a CPU busy by design"},
	{"no_cpu_to_tell_latency", result.NoteNoCPUToTellLatency, map[string]string{"missing_sides": "remote"}, nil, nil,
		"no CPU figures from both sides to tell a CPU limit from the latency (--cpu was on; none from the remote side: an iperf3 server or an older peer sends none, or the side could not read its CPU)"},
	{"iterations_of", result.NoteIterationsOf, nil, map[string]float64{"iterations_with": 2, "iterations": 3}, nil,
		"2 of 3 iterations"},
	{"sender_device_packets", result.NoteSenderDevicePackets, map[string]string{"device": "wst-b"}, map[string]float64{"packets_per_s": 812000, "bytes_per_packet": 1514}, nil,
		"its device wst-b sent 812000 packets/s of 1514 bytes: the cost is per packet, and TSO/GSO or a larger MTU make fewer, larger ones"},
	{"receiver_device_packets", result.NoteReceiverDevicePacket, map[string]string{"device": "eth1"}, map[string]float64{"packets_per_s": 95000.4, "bytes_per_packet": 9014}, nil,
		"its device eth1 received 95000 packets/s of 9014 bytes: the cost is per packet, and GRO or a larger MTU make fewer, larger ones"},
	{"receiver_device_drops", result.NoteReceiverDeviceDrops, map[string]string{"device": "eth1"}, map[string]float64{"drop_pct": 0.125}, nil,
		"the receiver's device eth1 dropped 0.12% of the packets it received"},
	{"window_also_full", result.NoteWindowAlsoFull, nil, map[string]float64{"rwnd_limited_pct": 46.2}, nil,
		"the receive window set by the buffer asked for was also full 46% of the window (rwnd_limited)"},
}

type warningCase struct {
	name    string
	code    result.WarningCode
	names   map[string]string
	figures map[string]float64
	procs   []measure.TaskCPU
	want    string
}

func (c warningCase) warning() result.Warning {
	w := result.Coded(c.code, c.names, c.figures)
	w.Processes = c.procs
	return w
}

// TestWarningWords holds each code's words to those its sentence had
// before codes, and the JSON to carry them beside the code and figures.
func TestWarningWords(t *testing.T) {
	for _, c := range warningCases {
		w := c.warning()
		if got := WarningText(w); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var back struct {
			Code    result.WarningCode `json:"code"`
			Figures map[string]float64 `json:"figures"`
			Text    string             `json:"text"`
		}
		if err := json.Unmarshal(b, &back); err != nil || back.Code != c.code || back.Text != c.want || len(back.Figures) != len(c.figures) {
			t.Errorf("%s: JSON %s (%v): want code %s, %d figures and the words", c.name, b, err, c.code, len(c.figures))
		}
		var again result.Warning
		if err := json.Unmarshal(b, &again); err != nil || again.Key() != w.Key() {
			t.Errorf("%s: %s decoded as %+v, want %+v", c.name, b, again, w)
		}
	}
}

// TestWarningOfWordsAlone: a warning without a code is its words, a
// string in the JSON as every warning was before codes, and a string
// decodes as one.
func TestWarningOfWordsAlone(t *testing.T) {
	w := result.Words("server: no result from the server within 3s of the interrupt")
	b, err := json.Marshal([]result.Warning{w})
	if err != nil || string(b) != `["server: no result from the server within 3s of the interrupt"]` {
		t.Fatalf("JSON %s (%v), want the words as a string", b, err)
	}
	var back []result.Warning
	if err := json.Unmarshal(b, &back); err != nil || len(back) != 1 || back[0].Code != "" || WarningText(back[0]) != w.Text {
		t.Errorf("decoded %+v (%v)", back, err)
	}
}

// TestFitWarningChoosesClauses: a coded warning too long for a line
// keeps the clauses that fit, never a part of one: what the cut of the
// sentences made before (the goldens of udp.txt and
// udp-fragmented.txt), now chosen; a peer's long words, which have no
// clauses, are still cut (brief).
func TestFitWarningChoosesClauses(t *testing.T) {
	byName := map[string]result.Warning{}
	for _, c := range warningCases {
		byName[c.name] = c.warning()
	}
	for _, tt := range []struct{ name, want string }{
		{"udp_sender_short", "warning: client_to_server: the sender reached 1063 of 8000 Mbits/sec asked (13.3%) (-v: more)"},
		{"udp_lost_after_send", "warning: client_to_server: the receiver got 621 of 992 Mbits/sec sent (62.63%) (-v: more)"},
		{"ipv4_fragmentation", "warning: client_to_server: IPv4 fragmentation (-v: more)"},
		{"device_rx_drops", "warning: remote side: its device eth1 dropped 3 received packets during the run (-v: more)"},
		{"no_sender_figures", "warning: server_to_client: no sender figures from the remote side"},
	} {
		if got := fitWarning("warning: ", byName[tt.name], Width); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
	// In 70 columns the cut of the sentence kept "client_to_server link"
	// of the first direction and left the second out; the clauses say
	// the directions differ and leave both to -v.
	if got, want := fitWarning("note: ", byName["directions_differ"], 70), "note: the directions differ (-v: more)"; got != want {
		t.Errorf("directions_differ in 70 columns:\n got %q\nwant %q", got, want)
	}
	long := result.Coded(result.WarnSideWarning, map[string]string{"side": "remote", "message": strings.Repeat("a peer's long words ", 8)}, nil)
	if got := fitWarning("warning: ", long, Width); cols(got) > Width || !strings.HasSuffix(got, moreMark) {
		t.Errorf("a peer's long words: %q (%d columns), want them cut to %d", got, cols(got), Width)
	}
}

// TestEveryWarningCodeHasWordsAndDocs: every code result and limit use
// has words here, a case above, and a line of docs/results.md's table
// that names each of its names and figures.
func TestEveryWarningCodeHasWordsAndDocs(t *testing.T) {
	b, err := os.ReadFile("../../docs/results.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if m := regexp.MustCompile("^\\| `([a-z0-9_]+)` \\|").FindStringSubmatch(l); m != nil {
			rows[m[1]] += l
		}
	}
	cased := map[result.WarningCode]bool{}
	for _, c := range warningCases {
		cased[c.code] = true
		row := rows[string(c.code)]
		for k := range c.names {
			if !strings.Contains(row, "`"+k+"`") {
				t.Errorf("%s: docs/results.md's row of %s does not name %q", c.name, c.code, k)
			}
		}
		for k := range c.figures {
			if !strings.Contains(row, "`"+k+"`") {
				t.Errorf("%s: docs/results.md's row of %s does not name the figure %q", c.name, c.code, k)
			}
		}
	}
	seen := map[result.WarningCode]bool{}
	for _, code := range result.WarningCodes {
		if seen[code] {
			t.Errorf("%s is listed twice in result.WarningCodes", code)
		}
		seen[code] = true
		if _, ok := warningWords[code]; !ok {
			t.Errorf("%s has no words (warningWords)", code)
		}
		if !cased[code] {
			t.Errorf("%s has no case in warningCases", code)
		}
		if rows[string(code)] == "" {
			t.Errorf("%s has no row in docs/results.md", code)
		}
	}
	for code := range warningWords {
		if !seen[code] {
			t.Errorf("words for %s, which result.WarningCodes does not list", code)
		}
	}
}

// TestNoWordsOutsideReport: result and limit say their warnings and
// notes as codes and figures; a call that formats text for people there
// (fmt.Sprint*, units.Format*, or result.Words, a warning of words
// alone) fails this test, which names it.
func TestNoWordsOutsideReport(t *testing.T) {
	for _, dir := range []string{"../result", "../limit"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		if len(files) == 0 {
			t.Fatalf("no sources in %s", dir)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			af, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(af, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				var name string
				switch fn := call.Fun.(type) {
				case *ast.SelectorExpr:
					if x, ok := fn.X.(*ast.Ident); ok {
						name = x.Name + "." + fn.Sel.Name
					}
				case *ast.Ident:
					name = fn.Name
				}
				switch {
				case strings.HasPrefix(name, "fmt.Sprint"), strings.HasPrefix(name, "units.Format"), name == "result.Words", name == "Words" && dir == "../result":
					t.Errorf("%s: %s builds words for people; give a warning a code and its figures (result.Coded), and its words in report/warning.go", fset.Position(call.Pos()), name)
				}
				return true
			})
		}
	}
}

// TestWarningLeavesOutNaN: a figure that is not a number (a share of
// nothing) is left out, so the document still encodes; the words show 0.
func TestWarningLeavesOutNaN(t *testing.T) {
	w := result.Coded(result.NoteUDPLoss, nil, map[string]float64{"loss_pct": math.NaN()})
	b, err := json.Marshal(w)
	if err != nil || strings.Contains(string(b), "loss_pct") {
		t.Fatalf("JSON %s (%v), want it without the NaN", b, err)
	}
	if got, want := WarningText(w), "0.0% of the datagrams were lost with no rate reached and no CPU saturated"; got != want {
		t.Errorf("words %q, want %q", got, want)
	}
}
