package report

import (
	"bytes"
	"strings"
	"testing"

	"wirespeed/internal/netconf"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// matrixDoc is a recorded matrix over tx-checksumming and tso on a lab
// pair: the CPU fixture scaled per row, one row the kernel could not
// hold (skipped), one whose change moved TSO too, one whose interval was
// not reached.
func matrixDoc(t *testing.T) result.Document {
	base := load(t, "cpu.json")
	rep := spec.Repeat{MaxIterations: 5, MinIterations: 3, ConfidenceLevel: 0.99, ConfidenceWidthPct: 5}
	mx := &result.Matrix{
		Local:  &result.MatrixDevice{Dev: "wst-b", Via: "local"},
		Remote: &result.MatrixDevice{Dev: "wst-a", Netns: "wst-lab-a", Via: "netns"},
		Dimensions: []result.MatrixDimension{
			{Name: "tx-checksumming", Values: []string{"on", "off"}},
			{Name: "tso", Values: []string{"on", "off"}},
		},
	}
	point := func(scale float64, conf *result.Confidence) []result.Point {
		r := base.Result
		r.Summary.BitsPerSecond *= scale
		lc, rc := *r.Summary.LocalCPU, *r.Summary.RemoteCPU
		lc.ServiceDemandMicrosPerKB /= scale
		rc.ServiceDemandMicrosPerKB /= scale
		r.Summary.LocalCPU, r.Summary.RemoteCPU = &lc, &rc
		r.Summary.Confidence = conf
		return []result.Point{{MsgSize: r.Spec.SendSize, Result: r}}
	}
	reached := func(pct float64) *result.Confidence {
		return &result.Confidence{Level: 0.99, WidthPct: 5, Iterations: 3, Stop: "reached",
			FigureConfidence: result.FigureConfidence{AchievedPct: f64(pct), Reached: true},
			LocalCPU:         &result.FigureConfidence{AchievedPct: f64(1), Reached: true},
			RemoteCPU:        &result.FigureConfidence{AchievedPct: f64(1.5), Reached: true}}
	}
	settings := func(tx, tso string) []result.MatrixSetting {
		return []result.MatrixSetting{{Name: "tx-checksumming", Value: tx}, {Name: "tso", Value: tso}}
	}
	mx.Rows = []result.MatrixRow{
		{Index: 1, Label: "tx-checksumming=on tso=on", Settings: settings("on", "on"), Points: point(1, reached(1.2))},
		{Index: 2, Label: "tx-checksumming=on tso=off", Settings: settings("on", "off"), Points: point(0.6, reached(2.1)),
			Changes: []netconf.SettingChange{{Device: "wst-b", Setting: "tso", Before: "on", After: "off",
				Features: []netconf.FeatureChange{{Name: "tx-tcp-segmentation", Before: true}}}}},
		{Index: 3, Label: "tx-checksumming=off tso=on", Settings: settings("off", "on"), Points: []result.Point{},
			Skipped: "wst-b: tso is not on (tx-tcp-segmentation, tx-tcp6-segmentation): the kernel did not apply the setting",
			Changes: []netconf.SettingChange{{Device: "wst-b", Setting: "tx-checksumming", Before: "on", After: "off",
				Features: []netconf.FeatureChange{
					{Name: "tx-checksum-ip-generic", Before: true},
					{Name: "tx-tcp-segmentation", Before: true, Consequence: true},
					{Name: "tx-tcp6-segmentation", Before: true, Consequence: true},
				}}}},
		{Index: 4, Label: "tx-checksumming=off tso=off", Settings: settings("off", "off"), Points: point(0.45,
			&result.Confidence{Level: 0.99, WidthPct: 5, Iterations: 5, Stop: "max_hit",
				FigureConfidence: result.FigureConfidence{AchievedPct: f64(9.8)},
				LocalCPU:         &result.FigureConfidence{AchievedPct: f64(1), Reached: true}})},
	}
	// TSO on and off both at wire speed, the CPU saving beside it; the
	// last row (the fixture's limit) CPU-bound.
	for _, r := range mx.Rows[:2] {
		r.Points[0].Summary.Limit = &result.Limit{Kind: result.LimitLink}
	}
	local, remote := vethEnv(), vethEnv()
	local.Interface.Name = "wst-b"
	mx.Rows[0].Points[0].Local.Env, mx.Rows[0].Points[0].Remote.Env = &local, &remote
	doc := result.Document{Schema: result.Schema, Tool: base.Tool, Command: "matrix", Repeat: &rep, Matrix: mx}
	doc.Result = mx.Rows[0].Points[0].Result
	return doc
}

func TestMatrixTable(t *testing.T) {
	var buf bytes.Buffer
	MatrixTableOf(&buf, matrixDoc(t), false)
	testkit.Golden(t, "matrix.txt.golden", buf.String())
	buf.Reset()
	MatrixTableOf(&buf, matrixDoc(t), true)
	testkit.Golden(t, "matrix-v.txt.golden", buf.String())
}

func TestMatrixCSV(t *testing.T) {
	var buf bytes.Buffer
	if err := CSV(&buf, matrixDoc(t)); err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, "matrix.csv.golden", buf.String())
}

// TestMatrixSweepAndRestoreFailure: a matrix of sweeps has a size column
// and a line per size; a device that could not be restored is shouted.
func TestMatrixSweepAndRestoreFailure(t *testing.T) {
	doc := matrixDoc(t)
	doc.Sizes = []int{1460, 131072}
	r := doc.Matrix.Rows[0]
	p2 := r.Points[0]
	p2.MsgSize = 1460
	r.Points = append(r.Points, p2)
	doc.Matrix.Rows = []result.MatrixRow{r}
	doc.Matrix.Remote = nil
	doc.Matrix.Dimensions = []result.MatrixDimension{{Name: "mtu", Values: []string{"1500", "9000"}}}
	doc.Matrix.Rows[0].Settings = []result.MatrixSetting{{Name: "mtu", Value: "1500"}}
	doc.Matrix.RestoreErrors = []string{"wst-b: restore mtu 1500 on wst-b: operation not permitted"}
	var buf bytes.Buffer
	MatrixTableOf(&buf, doc, true) // with the socket sizes
	out := buf.String()
	for _, want := range []string{
		"Message", "1500   131072  2626560   131072    2.00     51696.41", "1460    2.00     51696.41",
		"the MTU was changed on wst-b only",
		"RESTORE FAILED: wst-b: restore mtu 1500",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestMatrixColumnsWiden: a service demand of 10000 us/KB or more (a CPU
// bound by tiny messages) used to run into its neighbour
// ("99.8810590.94010479.985"). Every value keeps two spaces before it,
// and in a whole table every line's columns end where the header's do.
func TestMatrixColumnsWiden(t *testing.T) {
	doc := matrixDoc(t)
	p := &doc.Matrix.Rows[1].Points[0]
	lc, rc := *p.Summary.LocalCPU, *p.Summary.RemoteCPU
	lc.UtilPct, rc.UtilPct = 99.88, 99.88
	lc.ServiceDemandMicrosPerKB, rc.ServiceDemandMicrosPerKB = 10590.94, 10479.985
	p.Summary.LocalCPU, p.Summary.RemoteCPU = &lc, &rc
	p.Summary.BitsPerSecond = 123456789012345 // 123456789.01 10^6bits/sec
	var buf bytes.Buffer
	MatrixTableOf(&buf, doc, true)
	out := buf.String()
	for _, want := range []string{"99.88   99.88  10590.940  10479.985", "  123456789.01  "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The ends of the columns: every value of every row ends where a
	// word of the header does (each column has a word on some line of the
	// header).
	lines := strings.Split(out, "\n")
	// The header starts after the heading's blank line.
	for len(lines) > 0 && lines[0] != "" {
		lines = lines[1:]
	}
	lines = append([]string{"heading"}, lines...)
	ends := func(l string) []int {
		var e []int
		for i := 1; i <= len(l); i++ {
			if l[i-1] != ' ' && (i == len(l) || l[i] == ' ') {
				e = append(e, i)
			}
		}
		return e
	}
	head := map[int]bool{}
	for _, l := range lines[2:6] {
		for _, e := range ends(l) {
			head[e] = true
		}
	}
	rows := 0
	for _, l := range lines[7:] {
		if l == "" {
			break
		}
		if strings.Contains(l, "skipped") || strings.HasPrefix(l, splitIndent+"cpu ") {
			continue
		}
		rows++
		got := ends(strings.ReplaceAll(strings.TrimSuffix(l, "  not reached"), "snd CPU", "snd_CPU"))
		// Two settings, eleven figures, the sender's device's two, the limit.
		if len(got) != 15 {
			t.Errorf("%q has %d values, want 15", l, len(got))
		}
		for _, e := range got {
			if !head[e] {
				t.Errorf("a value of %q ends at %d, under no header word (%v)", l, e, head)
			}
		}
	}
	if rows != 3 {
		t.Errorf("%d rows checked, want 3:\n%s", rows, out)
	}
}

// TestMatrixDirections: a matrix of directions alone changes no device;
// a TCP_BIDIR row has the sum of both directions with a line for each
// under it: tx (client to server) 35169.64 and rx (server to client)
// 33785.29 10^6bits/sec, the fixture's per-direction throughput_bps.
func TestMatrixDirections(t *testing.T) {
	stream, bidir := load(t, "cpu.json"), load(t, "bidir_cpu.json")
	mx := &result.Matrix{Dimensions: []result.MatrixDimension{{Name: "direction", Values: []string{"TCP_STREAM", "TCP_BIDIR"}}}}
	for i, d := range []result.Document{stream, bidir} {
		kind := string(d.Spec.Kind)
		mx.Rows = append(mx.Rows, result.MatrixRow{Index: i + 1, Label: "direction=" + kind,
			Settings: []result.MatrixSetting{{Name: "direction", Value: kind}},
			Points:   []result.Point{{MsgSize: d.Spec.SendSize, Result: d.Result}}})
	}
	doc := result.Document{Schema: result.Schema, Tool: stream.Tool, Command: "matrix", Matrix: mx, Result: stream.Result}
	var buf bytes.Buffer
	MatrixTableOf(&buf, doc, true)
	out := buf.String()
	testkit.Golden(t, "matrix-directions-v.txt.golden", out)
	var def bytes.Buffer
	MatrixTableOf(&def, doc, false)
	testkit.Golden(t, "matrix-directions.txt.golden", def.String())
	var tx, rx, sum string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasSuffix(l, "tx client->server"):
			tx = l
		case strings.HasSuffix(l, "rx server->client"):
			rx = l
		case strings.Contains(l, "TCP_BIDIR"):
			sum = l
		}
	}
	if !strings.Contains(tx, " 35169.64 ") || !strings.Contains(rx, " 33785.29 ") || !strings.Contains(sum, "sum of both directions") {
		t.Errorf("tx %q, rx %q, sum %q:\n%s", tx, rx, sum, out)
	}
	if !strings.Contains(out, "matrix of direction TCP_STREAM,TCP_BIDIR (no device changed): 2 combinations") || strings.Contains(out, "restored") {
		t.Errorf("heading or restore line:\n%s", out)
	}
}
