//go:build linux

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"wirespeed/internal/lab"
	"wirespeed/internal/nstest"
	"wirespeed/internal/result"
)

// TestLabMeshExecAndRun: in a mesh lab of three hosts (10.77.1.1 to
// 10.77.1.3 by the default subnet), lab exec --side h2 runs a command in
// h2's namespace, which holds wst-h2 and h2's address alone; lab run mesh
// runs wirespeed mesh in h1 across the three servers: a table whose rows
// and columns are the hosts' addresses, every ordered pair measured,
// h1's directly and the others relayed by their source's server.
func TestLabMeshExecAndRun(t *testing.T) {
	nstest.RequireRoot(t)
	name := fmt.Sprintf("x%d", os.Getpid())
	t.Cleanup(func() { lab.RemoveMesh(name) })
	if code, _, stderr := runMain(t, "lab", "up", "--name", name, "--hosts", "3", "--port", "7612"); code != ExitOK {
		t.Fatalf("lab up --hosts 3: exit %d: %s", code, stderr)
	}

	// /proc/self/net is the reading process's namespace: cat's.
	code, out, stderr := runMain(t, "lab", "exec", "--name", name, "--side", "h2", "--", "cat", "/proc/self/net/dev", "/proc/self/net/fib_trie")
	if code != ExitOK {
		t.Fatalf("lab exec --side h2: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "wst-h2:") || strings.Contains(out, "wst-h1:") || strings.Contains(out, "wst-h3:") {
		t.Errorf("lab exec --side h2 saw other devices than h2's:\n%s", out)
	}
	if !strings.Contains(out, "|-- 10.77.1.2\n") || strings.Contains(out, "10.77.1.1\n") || strings.Contains(out, "10.77.1.3\n") {
		t.Errorf("lab exec --side h2: its local addresses are not h2's 10.77.1.2 alone:\n%s", out)
	}
	for _, tt := range []struct {
		args     []string
		inStderr string
	}{
		{[]string{"lab", "exec", "--name", name, "--side", "a", "--", "true"}, "no host \"a\": name one of h1 to h3"},
		{[]string{"lab", "exec", "--name", name, "--side", "h4", "--", "true"}, "name one of h1 to h3"},
		{[]string{"lab", "run", "--name", name, "mesh", "--to", "h2", "--", "-l", "1"}, "drop --to"},
		{[]string{"lab", "run", "--name", name, "mesh", "--", "--peers", "10.77.1.1"}, "drop --peers"},
		{[]string{"lab", "run", "--name", name, "--from", "h7", "mesh", "--", "-l", "1"}, "no host \"h7\""},
	} {
		code, _, stderr := runMain(t, tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.inStderr) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, ExitUsage, tt.inStderr)
		}
	}

	code, out, stderr = runMain(t, "lab", "run", "--name", name, "mesh", "--", "-l", "0.3", "-i", "0")
	if code != ExitOK {
		t.Fatalf("lab run mesh: exit %d: %s", code, stderr)
	}
	t.Logf("lab run mesh:\n%s", out)
	peers := []string{"10.77.1.1:7612", "10.77.1.2:7612", "10.77.1.3:7612"}
	if want := "from \\ to       " + strings.Join(peers, "  "); !strings.Contains(out, want) {
		t.Errorf("lab run mesh's table has no columns %q:\n%s", want, out)
	}
	for _, p := range peers {
		if !strings.Contains(out, "\n  "+p+" ") {
			t.Errorf("lab run mesh's table has no row of %s:\n%s", p, out)
		}
	}

	// 1 s a pair: at 0.3 s a relayed pair read 0 bit/s beside two yes.
	code, out, stderr = runMain(t, "lab", "run", "--name", name, "mesh", "--", "-l", "1", "-i", "0", "--json")
	if code != ExitOK {
		t.Fatalf("lab run mesh --json: exit %d: %s", code, stderr)
	}
	var doc result.MeshDocument
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("lab run mesh --json: %v\n%s", err, out)
	}
	if len(doc.Peers) != 3 || len(doc.Pairs) != 6 {
		t.Fatalf("%d peers and %d pairs, want 3 and 6: %+v", len(doc.Peers), len(doc.Pairs), doc.Peers)
	}
	for i, p := range doc.Peers {
		if p.Address != peers[i] || p.Local != (i == 0) {
			t.Errorf("peer %d: %+v, want %s, local only for h1's", i, p, peers[i])
		}
	}
	for _, p := range doc.Pairs {
		wantVia := result.ViaRelay
		if p.Source == peers[0] {
			wantVia = result.ViaDirect
		}
		if p.Via != wantVia || p.Result == nil || p.Result.Summary.BitsPerSecond <= 0 || p.Error != "" {
			t.Errorf("pair %s -> %s: via %s (want %s), error %q, result %v", p.Source, p.Destination, p.Via, wantVia, p.Error, p.Result != nil)
		}
	}
}

// TestLabExecSideNames: a side a two-host lab does not have is a usage
// error that names the sides it has, and says a mesh host's name needs a
// mesh lab.
func TestLabExecSideNames(t *testing.T) {
	code, _, stderr := runMain(t, "lab", "exec", "--name", "never", "--side", "h1", "--", "true")
	if code != ExitUsage || !strings.Contains(stderr, "use a or b") || !strings.Contains(stderr, "lab never is not a mesh lab") {
		t.Errorf("exit %d, stderr %q; want %d, the sides a and b, and that lab never is no mesh lab", code, stderr, ExitUsage)
	}
}
