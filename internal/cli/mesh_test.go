package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/archive"
	"wirespeed/internal/mesh"
	"wirespeed/internal/result"
	"wirespeed/internal/testkit"
)

// executeEnv runs the command line with e's resolver, as Main does.
func executeEnv(t *testing.T, ctx context.Context, r mesh.Resolver, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, log: slog.New(slog.DiscardHandler), hostname: "mesh-test", resolver: r}
	root := newRoot(e)
	root.SetArgs(args)
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	err := root.ExecuteContext(ctx)
	code := ExitOK
	var ue usageError
	switch {
	case errors.As(err, &ue):
		code = ExitUsage
	case err != nil:
		code = ExitRuntime
	}
	if err != nil {
		fmt.Fprintf(&stderr, "wirespeed: %v\n", err)
	}
	return code, stdout.String(), stderr.String()
}

// fakeResolver answers host names from a map, in the order given.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	addrs, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return append([]netip.Addr(nil), addrs...), nil
}

// meshServers starts a relaying server on each of 127.0.0.1, .2 and .3,
// all on one port, with the key in keyFile, and returns the port.
func meshServers(t *testing.T, keyFile string, extra ...string) string {
	t.Helper()
	_, port, _ := net.SplitHostPort(testkit.FreeAddr(t))
	for i := 1; i <= 3; i++ {
		args := append([]string{"--listen", fmt.Sprintf("127.0.0.%d:%s", i, port), "--psk-file", keyFile,
			"--allow-relay", "--relay-peers", "127.0.0.0/8", "--log-level", "debug"}, extra...)
		startServe(t, args...)
	}
	return port
}

func meshKey(t *testing.T) string {
	return writeFile(t, "key", []byte("0123456789abcdef0123456789abcdef\n"))
}

func decodeMesh(t *testing.T, b []byte) result.MeshDocument {
	t.Helper()
	var doc result.MeshDocument
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not a mesh document: %v\n%s", err, b)
	}
	return doc
}

// TestMesh: every ordered pair of three servers is measured, the local
// one's pairs from the mesh process and the others' through their
// servers; the matrix, the JSON document and the CSV agree.
func TestMesh(t *testing.T) {
	key := meshKey(t)
	port := meshServers(t, key)
	peers := []string{"127.0.0.1:" + port, "127.0.0.2:" + port, "127.0.0.3:" + port}
	dir := t.TempDir()
	code, out, errOut := execute(t, context.Background(), "mesh", "--peers", strings.Join(peers, ","), "--psk-file", key,
		"--local", peers[0], "-l", "0.3", "-i", "0", "--cpu=false", "--json", "-o", filepath.Join(dir, "mesh.csv"))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	doc := decodeMesh(t, []byte(out))
	if doc.Schema != result.MeshSchema || doc.Command != "mesh" || len(doc.Peers) != 3 || !doc.Peers[0].Local || doc.Peers[1].Local {
		t.Errorf("document head: %s %s peers %+v", doc.Schema, doc.Command, doc.Peers)
	}
	if len(doc.Pairs) != 6 {
		t.Fatalf("%d pairs, want 6", len(doc.Pairs))
	}
	seen := map[[2]string]bool{}
	for _, p := range doc.Pairs {
		seen[[2]string{p.Source, p.Destination}] = true
		wantVia := result.ViaRelay
		if p.Source == peers[0] {
			wantVia = result.ViaDirect
		}
		if p.Via != wantVia || p.Result == nil || p.Error != "" || p.Result.Summary.BitsPerSecond <= 0 {
			t.Errorf("pair %s -> %s via %s: error %q, result %v", p.Source, p.Destination, p.Via, p.Error, p.Result != nil)
			continue
		}
		if p.Result.Local.Address != p.Source || p.Result.Remote.Address != p.Destination {
			t.Errorf("pair %s -> %s: result measured %s -> %s", p.Source, p.Destination, p.Result.Local.Address, p.Result.Remote.Address)
		}
	}
	if len(seen) != 6 {
		t.Errorf("pairs %v: want every ordered pair once", seen)
	}
	m := doc.Matrix
	if m.Figure != result.MeshThroughput || m.Orientation != result.RowsSenders || len(m.Values) != 3 {
		t.Fatalf("matrix %+v", m)
	}
	for i := range 3 {
		for j := range 3 {
			if (i == j) != (m.Values[i][j] == nil) {
				t.Errorf("matrix cell %d,%d = %v", i, j, m.Values[i][j])
			}
		}
	}
	if !strings.Contains(errOut, "mesh: 6/6 ") {
		t.Errorf("no progress lines on stderr:\n%s", errOut)
	}

	f, err := os.Open(filepath.Join(dir, "mesh.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 7 || rows[0][0] != "source" || rows[1][2] != "direct" || rows[6][2] != "relay" {
		t.Errorf("CSV: %v %q", err, rows)
	}

	// The text form: the matrix with the names as given.
	code, out, errOut = execute(t, context.Background(), "mesh", "--peers", strings.Join(peers, ","), "--psk-file", key,
		"--pairs", peers[1]+":"+peers[2], "-l", "0.2", "-i", "0", "--cpu=false")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"TCP_STREAM mesh of 3 peers", "rows send, columns receive", "from \\ to", peers[2]} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(errOut, "mesh: "); n != 1 {
		t.Errorf("--pairs with one pair measured %d:\n%s", n, errOut)
	}
}

// TestMeshPeersDNS: the peers are a name's addresses, in address order,
// looked up with the injected resolver; a request/response mesh shows
// the p50 latency.
func TestMeshPeersDNS(t *testing.T) {
	key := meshKey(t)
	port := meshServers(t, key)
	r := fakeResolver{"wirespeed.test": {
		netip.MustParseAddr("127.0.0.3"), netip.MustParseAddr("127.0.0.1"),
		netip.MustParseAddr("::ffff:127.0.0.2"), netip.MustParseAddr("127.0.0.1"),
	}}
	code, out, errOut := executeEnv(t, context.Background(), r, "mesh", "--peers-dns", "wirespeed.test:"+port, "--psk-file", key,
		"--local", "none", "-t", "TCP_RR", "-l", "0.2", "-i", "0", "--cpu=false", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	doc := decodeMesh(t, []byte(out))
	var names []string
	for _, p := range doc.Peers {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "127.0.0.1,127.0.0.2,127.0.0.3" {
		t.Errorf("peers %v, want the three addresses in order", names)
	}
	if doc.Matrix.Figure != result.MeshLatencyP50 || doc.Matrix.Orientation != result.RowsClients {
		t.Errorf("matrix %s rows %s", doc.Matrix.Figure, doc.Matrix.Orientation)
	}
	for _, p := range doc.Pairs {
		if p.Via != result.ViaRelay || p.Result == nil || p.Result.Summary.RRSummary == nil || p.Result.Summary.Latency.P50 <= 0 {
			t.Errorf("pair %s -> %s via %s: %q", p.Source, p.Destination, p.Via, p.Error)
		}
	}

	// A name without enough addresses is an error that says so.
	code, _, errOut = executeEnv(t, context.Background(), fakeResolver{"one.test": {netip.MustParseAddr("127.0.0.1")}},
		"mesh", "--peers-dns", "one.test", "--psk-file", key)
	if code != ExitRuntime || !strings.Contains(errOut, "1 address(es) found, a mesh needs at least 2") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// TestMeshEvery: --every repeats rounds until interrupted, then exits 0;
// each round's document is printed, the file holds the latest, and the
// archive (--archive) each round with a measured pair.
func TestMeshEvery(t *testing.T) {
	key := meshKey(t)
	port := meshServers(t, key)
	out := filepath.Join(t.TempDir(), "mesh.json")
	db := filepath.Join(t.TempDir(), "mesh.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	var code int
	var stdout, errOut string
	go func() {
		defer close(done)
		code, stdout, errOut = execute(t, ctx, "mesh", "--peers", "127.0.0.1:"+port+",127.0.0.2:"+port, "--psk-file", key,
			"-l", "0.2", "-i", "0", "--cpu=false", "--every", "300ms", "--json", "-o", out, "--archive", db)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if len(b) > 0 && decodeMesh(t, b).Round >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no second round within 30s: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("mesh --every did not stop on interrupt")
	}
	if code != ExitOK {
		t.Errorf("exit %d after an interrupt of --every: %s", code, errOut)
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	rounds, measured, pairs := 0, 0, 0
	for dec.More() {
		var doc result.MeshDocument
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		rounds++
		if doc.Round != rounds {
			t.Errorf("document %d says round %d", rounds, doc.Round)
		}
		n := 0
		for _, p := range doc.Pairs {
			if p.Result != nil && len(p.Result.Directions) > 0 {
				n++
			}
		}
		if n > 0 {
			measured++
			pairs += n
		}
	}
	if rounds < 2 {
		t.Errorf("%d rounds printed", rounds)
	}
	a, err := archive.Open(context.Background(), archive.Target{Backend: archive.SQLite, Path: db})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	c, err := a.Count(context.Background())
	if err != nil || c.Documents != int64(measured) || c.Results != int64(pairs) {
		t.Errorf("archive holds %+v (%v); the rounds printed had %d documents with %d measured pairs", c, err, measured, pairs)
	}
	rows, _ := a.Results(context.Background(), archive.Filter{Source: "127.0.0.1:" + port, Destination: "127.0.0.2:" + port})
	if len(rows) == 0 || rows[0].Command != "mesh" {
		t.Errorf("no mesh pair 127.0.0.1 -> 127.0.0.2 in the archive: %+v", rows)
	}
}

// TestMeshRelayRefused: a source whose server does not relay fails its
// pairs with the server's reason; the other pairs are still measured,
// and the exit status says some failed.
func TestMeshRelayRefused(t *testing.T) {
	key := meshKey(t)
	port := meshServers(t, key)
	plain, _, _ := startServe(t, "--listen", "127.0.0.4:0", "--psk-file", key)
	code, out, errOut := execute(t, context.Background(), "mesh", "--peers", "127.0.0.1:"+port+","+plain, "--psk-file", key,
		"--local", "none", "-l", "0.2", "-i", "0", "--cpu=false")
	if code != ExitRuntime || !strings.Contains(errOut, "1 of 2 pairs failed") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	// The refusal is wrapped to fit the terminal's width: its words in order.
	if words := strings.Join(strings.Fields(out), " "); !strings.Contains(words, "failed") || !strings.Contains(words, "does not run third-party tests: start it with --allow-relay") {
		t.Errorf("matrix does not show the refusal:\n%s", out)
	}
}

func TestMeshUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"mesh"}, "--peers HOST,HOST,... or --peers-dns NAME"},
		{[]string{"mesh", "--peers", "a,b", "--peers-dns", "x"}, "one of the two"},
		{[]string{"mesh", "--peers", "a"}, "at least 2 peers"},
		{[]string{"mesh", "--peers", "a,a"}, "names a twice"},
		{[]string{"mesh", "--peers", "a,b", "--tradeoff"}, "drop --tradeoff"},
		{[]string{"mesh", "--peers", "a,b", "--pairs", "a:c"}, "write SRC:DST"},
		{[]string{"mesh", "--peers", "a,b", "--pairs", "a:a"}, "two different names"},
		{[]string{"mesh", "--peers", "a,b", "--local", "c"}, "--local \"c\" is not one of the peers"},
		{[]string{"mesh", "--peers", "a,b", "--concurrency", "0"}, "--concurrency 0"},
		{[]string{"mesh", "--peers", "a,b", "extra"}, "takes no arguments"},
		{[]string{"serve", "--allow-relay"}, "--allow-relay needs --psk-file"},
		{[]string{"serve", "--relay-peers", "10.0.0.0/8"}, "need --allow-relay"},
	}
	key := meshKey(t)
	tests = append(tests,
		struct {
			args []string
			want string
		}{[]string{"serve", "--allow-relay", "--psk-file", key}, "--allow-relay needs --relay-peers"},
		struct {
			args []string
			want string
		}{[]string{"serve", "--allow-relay", "--psk-file", key, "--relay-peers", "bad peer!"}, "neither an address"},
	)
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, errOut := execute(t, context.Background(), tt.args...)
			if code != ExitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tt.want)
			}
		})
	}
}
