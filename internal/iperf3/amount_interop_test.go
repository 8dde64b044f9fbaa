package iperf3_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// TestIperf3ClientAmountAgainstWirespeedServer: the real iperf3 client's
// -n and -k, with the wirespeed server sending (-R) or receiving, move
// exactly the amount by iperf3's own count of what it received or sent.
func TestIperf3ClientAmountAgainstWirespeedServer(t *testing.T) {
	bin := requireIperf3(t)
	addr := startServer(t)
	_, port, _ := net.SplitHostPort(addr)
	for _, tt := range []struct {
		args []string
		want int64
		// early: iperf3's receiving client counts its reads as blocks
		// (-k), and a 64 KiB block comes in two reads on loopback (the
		// MSS is 65483), so it may end the test (TEST_END) before the
		// server has sent every block, and the server then stops where
		// it is: what it sent is at most the amount, and what the client
		// received at most that. Against iperf3's own server it is the
		// same race.
		early bool
	}{
		{args: []string{"-n", "10M"}, want: 10 << 20},
		{args: []string{"-R", "-n", "10M"}, want: 10 << 20},
		{args: []string{"-R", "-P", "3", "-n", "10M"}, want: 10 << 20},
		{args: []string{"-R", "-k", "100", "-l", "64K"}, want: 100 << 16, early: true},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			j := runIperf3Client(t, bin, port, tt.args...)
			s, r := j.End.SumSent.Bytes, j.End.SumReceived.Bytes
			switch {
			case tt.early && (s > tt.want || r > s || r == 0):
				t.Errorf("iperf3 counted %d sent, %d received; want at most %d sent and no more received than sent", s, r, tt.want)
			case !tt.early && (s != tt.want || r != s):
				t.Errorf("iperf3 counted %d sent, %d received; want %d", s, r, tt.want)
			}
		})
	}
}

// TestIperf3ClientPacedAgainstWirespeedServer: the real iperf3 client's
// -b on TCP with -R has the wirespeed server pace its stream: iperf3's
// receiver counts 200 Mbit/s within 2% over 3 s.
func TestIperf3ClientPacedAgainstWirespeedServer(t *testing.T) {
	testkit.Serial(t)
	bin := requireIperf3(t)
	addr := startServer(t)
	_, port, _ := net.SplitHostPort(addr)
	testkit.RetryRate(t, 3, func(int) testkit.RateAttempt {
		j := runIperf3Client(t, bin, port, "-R", "-b", "200M", "-t", "3")
		return testkit.RateAttempt{Got: j.End.SumReceived.BitsPerSecond, Want: 200e6, Tol: 0.02, Detail: "iperf3's receiver"}
	})
}

type iperfRateJSON struct {
	End struct {
		SumSent     struct{ Bytes int64 } `json:"sum_sent"`
		SumReceived struct {
			Bytes         int64   `json:"bytes"`
			BitsPerSecond float64 `json:"bits_per_second"`
		} `json:"sum_received"`
	} `json:"end"`
	Error string `json:"error"`
}

func runIperf3Client(t *testing.T, bin, port string, args ...string) iperfRateJSON {
	t.Helper()
	out := iperf3Output(t, bin, append([]string{"-c", "127.0.0.1", "-p", port, "-J"}, args...)...)
	var j iperfRateJSON
	if err := json.Unmarshal(out, &j); err != nil || j.Error != "" {
		t.Fatalf("iperf3 -J: %v %s\n%s", err, j.Error, out)
	}
	return j
}

// iperf3Output runs the iperf3 client with args and returns its standard
// output; a failure (a non-zero exit status) fails t. The wirespeed
// server has one test slot, freed a moment after the previous client is
// done, as iperf3's own server: a client that finds it busy is run again.
func iperf3Output(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []byte
	var err error
	var stderr bytes.Buffer
	for try := 0; try < 10; try++ {
		stderr.Reset()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Stderr = &stderr
		out, err = cmd.Output()
		// With -J iperf3 3.12 reports the refusal in its JSON, and may
		// exit 0 with it.
		if !strings.Contains(string(out)+stderr.String(), "server is busy") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("iperf3 %s: %v (exit status must be 0)\n%s\n%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

// TestWirespeedClientAmountAgainstIperf3Server: wirespeed's -n against the
// real iperf3 server sends exactly the amount, by iperf3's count.
func TestWirespeedClientAmountAgainstIperf3Server(t *testing.T) {
	requireIperf3(t)
	for _, kind := range []spec.Kind{spec.TCPStream, spec.TCPMaerts, spec.TCPBidir} {
		t.Run(string(kind), func(t *testing.T) { amountAgainstIperf3(t, kind) })
	}
}

func amountAgainstIperf3(t *testing.T, kind spec.Kind) {
	sp := spec.Default()
	sp.Kind = kind
	sp.AmountBytes = 10<<20 + 3
	sp.Duration = 20 * time.Second
	sp.CPU = false
	start := time.Now()
	res, out := runAgainstIperf3Server(t, sp)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the run took %v with -l %v: it did not end with the amount", took, sp.Duration)
	}
	var j iperfRateJSON
	if err := json.Unmarshal(out, &j); err != nil {
		t.Fatal(err)
	}
	if j.Error != "" {
		t.Errorf("iperf3's server reported an error: %s", j.Error)
	}
	if kind != spec.TCPMaerts {
		if got := j.End.SumReceived.Bytes; got != sp.AmountBytes {
			t.Errorf("iperf3's server received %d bytes, want %d", got, sp.AmountBytes)
		}
	}
	for _, d := range res.Directions {
		want := sp.AmountBytes
		if d.Direction == spec.ServerToClient {
			// iperf3 sends whole blocks until it has sent the amount.
			size := int64(sp.SendSize)
			want = (sp.AmountBytes + size - 1) / size * size
		}
		if d.Amount == nil || !d.Amount.Reached || d.Summary.Bytes != want {
			t.Errorf("%s: amount %+v, %d bytes received; want %d, reached", d.Direction, d.Amount, d.Summary.Bytes, want)
		}
		// What wirespeed received is what iperf3's server counted sent.
		if kind == spec.TCPMaerts && d.Summary.Bytes != j.End.SumSent.Bytes {
			t.Errorf("%s: %d bytes received, iperf3's server sent %d", d.Direction, d.Summary.Bytes, j.End.SumSent.Bytes)
		}
	}
	t.Logf("%s: %v", kind, time.Since(start).Round(time.Millisecond))
}

// TestIperf3ClientReverseSentCoversReceived: with -R the wirespeed
// server's count of what it sent is never below what iperf3's client
// read before TEST_END. Small socket buffers (-w 16K) and 1 MiB writes
// keep a write in progress, part of it already delivered, whenever
// TEST_END comes: a count taken from the loop's finished writes left
// that part out.
func TestIperf3ClientReverseSentCoversReceived(t *testing.T) {
	bin := requireIperf3(t)
	addr := startServer(t)
	_, port, _ := net.SplitHostPort(addr)
	for i := range 3 {
		j := runIperf3Client(t, bin, port, "-R", "-w", "16K", "-l", "1M", "-t", "1")
		s, r := j.End.SumSent.Bytes, j.End.SumReceived.Bytes
		if r == 0 || r > s {
			t.Fatalf("run %d: iperf3 counted %d sent, %d received; want no more received than sent, and some", i+1, s, r)
		}
		t.Logf("run %d: sent %d, received %d", i+1, s, r)
	}
}
