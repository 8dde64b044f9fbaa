package nstest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"wirespeed/internal/lab"
	"wirespeed/internal/measure"
)

var staleMeshOnce sync.Once

// NewMesh makes a fresh mesh lab from cfg (three hosts on one bridge by
// default), with a unique name unless cfg.Name is set, and removes it when
// the test and its subtests end, pass or fail. It skips t when not root
// and fails it when the mesh cannot be made. Mesh labs left by a killed
// test process are removed by the next one that makes a mesh.
func NewMesh(t testing.TB, cfg lab.MeshConfig) *lab.Mesh {
	t.Helper()
	RequireRoot(t)
	staleMeshOnce.Do(func() { removeStaleMeshes(t) })
	if cfg.Name == "" {
		cfg.Name = fmt.Sprintf("t%d-%d", os.Getpid(), seq.Add(1))
	}
	ctx, cancel := context.WithTimeout(context.Background(), UpTimeout)
	defer cancel()
	m, err := lab.UpMesh(ctx, cfg)
	if err != nil {
		t.Fatalf("make mesh lab: %v", err)
	}
	t.Cleanup(func() {
		if err := m.Down(); err != nil {
			t.Errorf("remove mesh lab %s: %v", m.Name, err)
		}
		for _, ns := range append([]string{m.Switch}, hostNamespaces(m)...) {
			if _, err := os.Stat("/run/netns/" + ns); err == nil {
				t.Errorf("namespace %s is still there after removing the mesh lab", ns)
			}
		}
	})
	return m
}

func hostNamespaces(m *lab.Mesh) []string {
	var out []string
	for _, h := range m.Hosts {
		out = append(out, h.Netns)
	}
	return out
}

// removeStaleMeshes removes mesh labs named by test processes that no
// longer run.
func removeStaleMeshes(t testing.TB) {
	names, err := lab.ListMeshes()
	if err != nil {
		return
	}
	for _, name := range names {
		pid, ok := testPID(name)
		if !ok || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat(filepath.Join(measure.DefaultProcRoot, strconv.Itoa(pid))); err == nil {
			continue
		}
		if err := lab.RemoveMesh(name); err != nil {
			t.Logf("remove stale test mesh lab %s: %v", name, err)
		}
	}
}
