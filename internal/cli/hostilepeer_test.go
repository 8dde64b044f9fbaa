package cli

import (
	"context"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"wirespeed/internal/archive"
	"wirespeed/internal/control"
	"wirespeed/internal/record"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// hostilePeer is a server on addr that speaks the control protocol well
// enough to run a TCP_STREAM test, then reports res (made from the
// test's spec) as its result: a peer whose figures no measurement gives.
// It serves every control connection until the test ends.
func hostilePeer(t *testing.T, addr string, res func(spec.Test) result.SideResult) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				servePlanted(t, control.NewConn(c, 0), res)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}

// servePlanted plays the server's part of one control connection: hello,
// then each test up to its result, which is res's.
func servePlanted(t *testing.T, cc *control.Conn, res func(spec.Test) result.SideResult) {
	if cc.ReadMagic(5*time.Second) != nil || cc.Expect(control.TypeHello, nil, 5*time.Second) != nil {
		return
	}
	cc.WriteMagic()
	cc.Send(control.TypeHello, control.NewHello("fake", "prod-db1"))
	for {
		var req control.TestRequest
		if err := cc.Expect(control.TypeTest, &req, 10*time.Second); err != nil {
			return // bye, or the client gave up
		}
		// Data goes to the address the control connection reached.
		host, _, _ := net.SplitHostPort(cc.NetConn().LocalAddr().String())
		dl, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Error(err)
			return
		}
		var data sync.WaitGroup
		data.Add(1)
		go func() {
			defer data.Done()
			for range req.Spec.Streams() {
				c, err := dl.Accept()
				if err != nil {
					return
				}
				data.Add(1)
				go func() {
					defer data.Done()
					defer c.Close()
					io.Copy(io.Discard, c)
				}()
			}
		}()
		cc.Send(control.TypeAccepted, control.Accepted{Token: control.NewToken(), DataPort: dl.Addr().(*net.TCPAddr).Port})
		cc.Send(control.TypeReady, struct{}{})
		if cc.Expect(control.TypeStart, nil, 5*time.Second) == nil {
			time.Sleep(req.Spec.Length())
			cc.Send(control.TypeResult, res(req.Spec))
		}
		dl.Close()
		data.Wait()
	}
}

// infiniteRate is issue 47 item 4's result: 9e18 bytes received in
// 1e-300 s, a rate of +Inf once joined.
func infiniteRate(sp spec.Test) result.SideResult {
	return result.SideResult{Side: result.Remote, Hostname: "prod-db1", Flows: []result.Flow{{
		Direction: spec.ClientToServer, Side: result.Remote, Role: result.Receiver, ElapsedS: 1e-300, Bytes: 9e18,
		Streams: []result.StreamSide{{ID: 1, Side: result.Remote, Role: result.Receiver, Bytes: 9e18, TotalBytes: 9e18}},
	}}}
}

// TestRunHostilePeerArchive: a server that reports 9e18 bytes in 1e-300 s
// made `run --archive -o` fail with "json: unsupported value: +Inf" and
// "not archived (<nil>)" (issue 47 item 4). Its figure is refused where
// it enters: the run fails with an error naming the server, the figure
// and its value, and nothing non-finite reaches -o or the archive.
func TestRunHostilePeerArchive(t *testing.T) {
	addr := hostilePeer(t, "127.0.0.1:0", infiniteRate)
	dir := t.TempDir()
	db, out := filepath.Join(dir, "x.db"), filepath.Join(dir, "x.json")
	code, stdout, stderr := execute(t, context.Background(), "run", addr, "-l", "0.3", "-i", "0", "--cpu=false",
		"--archive", db, "-o", out)
	if code != ExitRuntime {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitRuntime, stdout, stderr)
	}
	for _, want := range []string{"server " + addr, "result.flows[0].bytes is 9e+18: more than 1e+13 bit/s could move in its window of 1e-300 s"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for _, bad := range []string{"unsupported value", "<nil>", "Inf"} {
		if strings.Contains(stdout+stderr, bad) {
			t.Errorf("the output says %q:\nstdout:\n%s\nstderr:\n%s", bad, stdout, stderr)
		}
	}
	if b, err := os.ReadFile(out); err == nil && strings.Contains(string(b), "9e+18") {
		t.Errorf("-o holds the planted figure:\n%s", b)
	}
	// Nothing was measured: no row, not even the client's side with its
	// receiver's 0.
	if a, err := archive.Open(context.Background(), archive.Target{Backend: archive.SQLite, Path: db}); err == nil {
		defer a.Close()
		if rows, err := a.Results(context.Background(), archive.Filter{}); err != nil || len(rows) != 0 {
			t.Errorf("archive rows %+v (%v); want none", rows, err)
		}
	}
}

// TestMeshHostilePeerArchive: in a mesh round with an honest and a
// hostile destination, the hostile pair fails with an error naming the
// figure and the honest pair is archived (issue 47 item 4: the whole
// round was lost).
func TestMeshHostilePeerArchive(t *testing.T) {
	honest, _, _ := startServe(t, "--listen", "127.0.0.2:0")
	hostile := hostilePeer(t, "127.0.0.3:0", infiniteRate)
	local := "127.0.0.1:1" // this process: the source of both pairs
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	code, stdout, stderr := execute(t, context.Background(), "mesh", "--peers", strings.Join([]string{local, honest, hostile}, ","),
		"--local", local, "--pairs", local+":"+honest+","+local+":"+hostile,
		"-l", "0.3", "-i", "0", "--cpu=false", "--json", "--archive", db)
	t.Logf("exit %d\nstderr:\n%s", code, stderr)
	doc := decodeMesh(t, []byte(stdout))
	var sawHonest, sawHostile bool
	for _, p := range doc.Pairs {
		switch p.Destination {
		case honest:
			sawHonest = p.Result != nil && p.Error == ""
		case hostile:
			sawHostile = p.Result == nil && strings.Contains(p.Error, "result.flows[0].bytes is 9e+18")
		}
	}
	if !sawHonest || !sawHostile {
		t.Errorf("pairs %+v: want the honest one measured, the hostile one failed naming its figure", doc.Pairs)
	}
	a, err := archive.Open(context.Background(), archive.Target{Backend: archive.SQLite, Path: db})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rows, err := a.Results(context.Background(), archive.Filter{})
	if err != nil || len(rows) != 1 || rows[0].Destination != honest {
		t.Errorf("archive rows %+v (%v); want the honest pair's alone", rows, err)
	}
}

// TestKeepInArchiveNonFinite: a document that cannot be encoded is
// neither archived nor spooled, and the error says why, naming the
// figure ("not archived (<nil>)" said nothing).
func TestKeepInArchiveNonFinite(t *testing.T) {
	dir := t.TempDir()
	var stderr strings.Builder
	e := &env{stderr: &stderr, environ: func(k string) string {
		if k == SpoolEnv {
			return filepath.Join(dir, "spool")
		}
		return ""
	}}
	doc := &result.Document{Schema: result.Schema, Command: "run", Result: result.Result{Spec: spec.Default(),
		Summary:    result.Summary{BitsPerSecond: math.Inf(1)},
		Directions: []result.DirectionResult{{Direction: spec.ClientToServer}}}}
	err := keepInArchive(context.Background(), e, &archive.Target{Backend: archive.SQLite, Path: filepath.Join(dir, "x.db")}, record.Doc{Results: doc})
	if err == nil || strings.Contains(err.Error(), "<nil>") || !strings.Contains(err.Error(), "summary.throughput_bps is +Inf") {
		t.Errorf("keepInArchive: %v; want an error naming summary.throughput_bps, without <nil>", err)
	}
}

// TestRunSeriesAddressed: a server that reports another host's name
// ("prod-db1") does not choose the series its result lands in: the
// archive's destination is the address the run was given; the server's
// own name stays beside it, in the document (issue 47 item 11).
func TestRunSeriesAddressed(t *testing.T) {
	addr := hostilePeer(t, "127.0.0.1:0", func(sp spec.Test) result.SideResult {
		const bytes = 1 << 20
		return result.SideResult{Side: result.Remote, Hostname: "prod-db1", Flows: []result.Flow{{
			Direction: spec.ClientToServer, Side: result.Remote, Role: result.Receiver, ElapsedS: sp.Duration.Seconds(), Bytes: bytes,
			Streams: []result.StreamSide{{ID: 1, Side: result.Remote, Role: result.Receiver, Bytes: bytes, TotalBytes: bytes}},
		}}}
	})
	db := filepath.Join(t.TempDir(), "x.db")
	code, stdout, stderr := execute(t, context.Background(), "run", addr, "-l", "0.3", "-i", "0", "--cpu=false", "--json", "--archive", db)
	if code != ExitOK {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
	}
	a, err := archive.Open(context.Background(), archive.Target{Backend: archive.SQLite, Path: db})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rows, err := a.Results(context.Background(), archive.Filter{})
	if err != nil || len(rows) != 1 {
		t.Fatalf("archive rows %+v (%v); want one", rows, err)
	}
	if r := rows[0]; r.Destination != "127.0.0.1" || strings.Contains(r.Series, "prod-db1") {
		t.Errorf("row destination %q, series %q; want the address run was given, 127.0.0.1", r.Destination, r.Series)
	}
	if !strings.Contains(stdout, `"hostname": "prod-db1"`) {
		t.Errorf("the document lacks the server's own name:\n%s", stdout)
	}
}
