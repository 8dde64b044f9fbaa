package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wirespeed/internal/lab"
	"wirespeed/internal/nstest"
	"wirespeed/internal/result"
	"wirespeed/internal/testkit"
)

// meshServer starts `wirespeed serve` in host i of m, relaying to the
// mesh's subnet with the key in keyFile, and waits until host from can
// connect to it. It is stopped when the test ends.
func meshServer(t *testing.T, m *lab.Mesh, i, from int, keyFile string) string {
	t.Helper()
	addr := netip.AddrPortFrom(m.Hosts[i].IPv4, 7575).String()
	srv := wirespeed("serve", "--listen", addr, "--log-level", "warn", "--psk-file", keyFile,
		"--allow-relay", "--relay-peers", lab.DefaultMeshIPv4.String())
	serveIn(t, "the server in "+string(m.Hosts[i].Name), srv, func(c *exec.Cmd) error { return m.Start(i, c) },
		func(f func() error) error { return m.Do(from, f) }, addr)
	return addr
}

// TestMeshOverLab runs `wirespeed mesh` from h1 over three hosts on one
// bridge, h3's link limited to 20 Mbit/s: every ordered pair is
// measured (h1's directly, the others relayed by their source's server),
// and exactly the four cells that cross h3's link are the slow ones.
func TestMeshOverLab(t *testing.T) {
	testkit.Serial(t)
	const rate = 20e6
	m := nstest.NewMesh(t, lab.MeshConfig{RateBitsPerSecond: map[string]uint64{"h3": rate}})
	key := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(key, []byte("mesh-lab-test-key-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var peers []string
	for i := range m.Hosts {
		meshServer(t, m, i, 0, key)
		peers = append(peers, m.Hosts[i].IPv4.String())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	text := filepath.Join(t.TempDir(), "mesh.txt")
	cmd := wirespeed("mesh", "--peers", strings.Join(peers, ","), "--psk-file", key,
		"-l", "0.5", "-i", "0", "--json", "-o", text)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := m.Start(0, cmd); err != nil {
		t.Fatal(err)
	}
	stop := context.AfterFunc(ctx, func() { cmd.Process.Kill() })
	defer stop()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wirespeed mesh: %v\n%s", err, stderr.String())
	}
	var doc result.MeshDocument
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("not a mesh document: %v\n%s", err, stdout.String())
	}
	matrix, _ := os.ReadFile(text)
	t.Logf("\n%s", matrix)

	if len(doc.Pairs) != 6 {
		t.Fatalf("%d pairs measured, want 6", len(doc.Pairs))
	}
	if !doc.Peers[0].Local || doc.Peers[1].Local || doc.Peers[2].Local {
		t.Errorf("local peers %+v: want h1 only, where the mesh ran", doc.Peers)
	}
	for _, p := range doc.Pairs {
		wantVia := result.ViaRelay
		if p.Source == peers[0] {
			wantVia = result.ViaDirect
		}
		if p.Result == nil || p.Error != "" || p.Via != wantVia {
			t.Errorf("pair %s -> %s via %s (want %s): %q", p.Source, p.Destination, p.Via, wantVia, p.Error)
		}
	}
	// The payload rate over a 20 Mbit/s link is a little under 20 Mbit/s;
	// an unlimited veth through a bridge carries far more, even on a
	// loaded machine.
	for i := range 3 {
		for j := range 3 {
			v := doc.Matrix.Values[i][j]
			switch {
			case i == j:
				if v != nil {
					t.Errorf("diagonal cell %d,%d = %v", i, j, *v)
				}
			case v == nil:
				t.Errorf("cell %s -> %s missing", peers[i], peers[j])
			case i == 2 || j == 2:
				if *v > rate || *v < 0.5*rate {
					t.Errorf("cell %s -> %s = %.1f Mbit/s, want the limited link's ~%.0f", peers[i], peers[j], *v/1e6, rate/1e6)
				}
			default:
				if *v < 5*rate {
					t.Errorf("cell %s -> %s = %.1f Mbit/s, want far more than the limited link's %.0f", peers[i], peers[j], *v/1e6, rate/1e6)
				}
			}
		}
	}
}
