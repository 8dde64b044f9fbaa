package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
	"wirespeed/internal/testkit"
)

// scrape fetches the metrics page and returns its samples by name and
// labels, e.g. `wirespeed_tests_served_total{result="ok"}`.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %s: %s", url, resp.Status, b)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

func TestMetrics(t *testing.T) {
	m := server.NewMetrics()
	metricsAddr, stopMetrics := testkit.Serve(t, m.Serve)
	defer stopMetrics()
	url := "http://" + metricsAddr + "/metrics"

	srv := startServer(t, server.Config{StreamsTimeout: 300 * time.Millisecond,
		Auth: server.Auth{PSK: testKey}, Admission: server.Admission{MaxDuration: 5 * time.Second}, Metrics: m})
	c := mustDial(t, client.Config{Addr: srv.addr, Security: client.Security{PSK: testKey}})

	// One test served, scraped while it runs and after.
	sp := shortSpec(spec.TCPMaerts, 2)
	sp.Duration = time.Second
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(context.Background(), sp)
		done <- err
	}()
	time.Sleep(500 * time.Millisecond)
	during := scrape(t, url)
	if got := during["wirespeed_tests_active"]; got != 1 {
		t.Errorf("tests_active during a test = %v, want 1", got)
	}
	if got := during["wirespeed_control_connections_active"]; got != 1 {
		t.Errorf("control_connections_active during a test = %v, want 1", got)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// One refused over a limit.
	long := shortSpec(spec.TCPStream, 1)
	long.Duration = 10 * time.Second
	c.Run(context.Background(), long)
	// One authentication failure.
	dial(t, client.Config{Addr: srv.addr})
	// One that fails in its setup: its data connection never comes.
	raw := rawConn(t, srv.addr, "127.0.0.2", authHello(control.NewNonce()))
	h, err := helloBack(t, raw)
	if err != nil {
		t.Fatal(err)
	}
	raw.Send(control.TypeAuth, control.NewAuthProof(testKey, control.RoleClient, control.Version, h.Auth.Nonce, h.Auth.Nonce))
	// (a wrong proof: the client nonce is not the one offered)
	raw2 := rawConn(t, srv.addr, "127.0.0.3", control.NewHello("raw", ""))
	helloBack(t, raw2)
	srv.logs.waitLog(t, "authentication failed", "reason=bad_proof")
	srv.logs.waitLog(t, "authentication failed", "peer=127.0.0.3")

	// One that speaks another protocol.
	if junk, err := net.Dial("tcp", srv.addr); err == nil {
		junk.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
		closedByServer(junk, 5*time.Second)
		junk.Close()
	}
	c.Close() // free the test slot
	c2 := rawAuthed(t, srv.addr)
	c2.Send(control.TypeTest, control.TestRequest{Spec: shortSpec(spec.TCPStream, 1)})
	if err := c2.Expect(control.TypeAccepted, nil, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	srv.logs.waitLog(t, "test failed", "reason=setup")

	got := scrape(t, url)
	want := map[string]float64{
		`wirespeed_tests_served_total{result="ok"}`:                      1,
		`wirespeed_tests_refused_total{reason="max_duration"}`:           1,
		`wirespeed_tests_failed_total{reason="setup"}`:                   1,
		`wirespeed_auth_failures_total{reason="no_key"}`:                 2,
		`wirespeed_auth_failures_total{reason="bad_proof"}`:              1,
		`wirespeed_tests_active`:                                         0,
		`wirespeed_connections_refused_total{reason="unknown_protocol"}`: 1,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if got[`wirespeed_bytes_total{direction="sent"}`] <= 0 {
		t.Errorf("bytes sent = %v, want > 0", got[`wirespeed_bytes_total{direction="sent"}`])
	}
	if _, ok := got["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}
}

// rawAuthed opens an authenticated raw control connection with testKey.
func rawAuthed(t *testing.T, addr string) *control.Conn {
	t.Helper()
	nc := control.NewNonce()
	cc := rawConn(t, addr, "", authHello(nc))
	h, err := helloBack(t, cc)
	if err != nil {
		t.Fatal(err)
	}
	cc.Send(control.TypeAuth, control.NewAuthProof(testKey, control.RoleClient, control.Version, nc, h.Auth.Nonce))
	if err := cc.Expect(control.TypeAuthOK, nil, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	return cc
}

// TestMetricsIperf3Client: a test served to a real iperf3 client counts
// on /metrics as wirespeed's do: one test served, and the bytes received
// equal to what iperf3 shows as the receiver's (end.sum_received, from
// the server's results) and no more than the client sent (its own count,
// end.sum_sent; on a busy host iperf3's client ends the test while bytes
// it wrote are still on their way, and the server stops reading at
// TEST_END).
func TestMetricsIperf3Client(t *testing.T) {
	ip3, err := exec.LookPath("iperf3")
	if err != nil {
		t.Skip("no iperf3 on this machine (Debian package iperf3)")
	}
	m := server.NewMetrics()
	metricsAddr, stopMetrics := testkit.Serve(t, m.Serve)
	defer stopMetrics()
	srv := startServer(t, server.Config{Metrics: m})
	host, port, _ := net.SplitHostPort(srv.addr)
	out, err := exec.Command(ip3, "-c", host, "-p", port, "-t", "1", "-J").Output()
	if err != nil {
		t.Fatalf("iperf3 -c: %v\n%s", err, out)
	}
	var rep struct {
		End struct {
			SumSent struct {
				Bytes int64 `json:"bytes"`
			} `json:"sum_sent"`
			SumReceived struct {
				Bytes int64 `json:"bytes"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || rep.End.SumSent.Bytes == 0 {
		t.Fatalf("iperf3's JSON: %v\n%s", err, out)
	}
	// iperf3's client exits once it has the server's results; the
	// server counts the test when it has read IPERF_DONE and closed, a
	// moment later on a busy host: wait for it (10 s at most).
	var got map[string]float64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got = scrape(t, "http://"+metricsAddr+"/metrics")
		if got[`wirespeed_tests_active`] == 0 || time.Now().After(deadline) {
			break
		}
	}
	if v := got[`wirespeed_tests_served_total{result="ok"}`]; v != 1 {
		t.Errorf("tests_served_total{ok} = %v after one iperf3 test, want 1", v)
	}
	if v := int64(got[`wirespeed_bytes_total{direction="received"}`]); v != rep.End.SumReceived.Bytes || v > rep.End.SumSent.Bytes || v == 0 {
		t.Errorf("bytes_total{received} = %d; iperf3 shows the server received %d of the %d its client sent", v, rep.End.SumReceived.Bytes, rep.End.SumSent.Bytes)
	}
	if v := got[`wirespeed_tests_active`]; v != 0 {
		t.Errorf("tests_active = %v after the test", v)
	}
}
