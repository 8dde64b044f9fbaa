package lab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// StateDir is where labs keep what the kernel does not know about them:
// the server `wirespeed lab up` started in side a, and its log. Tests may
// point it elsewhere.
var StateDir = "/run/wirespeed/labs"

// Server is a wirespeed server running detached in side a of a lab,
// recorded so that another process (`lab run`, `lab down`) can find and
// stop it.
type Server struct {
	// PID is the server's process id. StopServer checks it is still the
	// process started (same start time, same network namespace) before
	// signalling it, so a recycled PID is never hit.
	PID int `json:"pid"`
	// StartTicks is the process's start time in clock ticks since boot
	// (/proc/PID/stat, field 22).
	StartTicks uint64 `json:"start_ticks"`
	// Addr is the HOST:PORT it listens on, in side a.
	Addr string `json:"addr"`
	// Key is the pre-shared key file the server requires clients to
	// prove (serve --psk-file); empty for a server started without one.
	Key string `json:"key,omitempty"`
	// Netns is the namespace the server runs in when it is not side a of
	// a two-host lab: a mesh host's.
	Netns   string    `json:"netns,omitempty"`
	Log     string    `json:"log"`
	Started time.Time `json:"started"`
	Args    []string  `json:"args"`
}

// statePath is the state file of the lab called name.
func statePath(name string) string { return filepath.Join(StateDir, name+".json") }

// LogPath is where the server of the lab called name writes its log.
func LogPath(name string) string { return filepath.Join(StateDir, name+"-server.log") }

// KeyPath is the lab's pre-shared key file: its server requires it, and
// lab run passes it to the clients.
func KeyPath(name string) string { return filepath.Join(StateDir, name+".key") }

// MakeKey writes a fresh random key to KeyPath(name), readable by root
// only, and returns its path.
func MakeKey(name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	return makeKeyAt(name, KeyPath(name))
}

// meshKeyPath is the key of the servers of the mesh lab called name.
func meshKeyPath(name string) string { return filepath.Join(StateDir, name+".mesh.key") }

// MakeMeshKey writes a fresh key for the servers of the mesh lab called
// name, as MakeKey does for a two-host lab, and returns its path.
func MakeMeshKey(name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	return makeKeyAt(name, meshKeyPath(name))
}

func makeKeyAt(name, path string) (string, error) {
	if err := os.MkdirAll(StateDir, 0o755); err != nil {
		return "", fmt.Errorf("lab %s: %w", name, err)
	}
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand contract since Go 1.24)
	if err := os.WriteFile(path, []byte(hex.EncodeToString(b[:])+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("lab %s: key: %w", name, err)
	}
	return path, nil
}

// LoadServer returns the server recorded for the lab called name, or nil
// when none is.
func LoadServer(name string) (*Server, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	return loadServer(name)
}

// loadServer reads the server recorded under the state name name: a
// lab's name or a mesh host's meshState.
func loadServer(name string) (*Server, error) {
	b, err := os.ReadFile(statePath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lab %s: %w", name, err)
	}
	var s Server
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("lab %s: state file %s: %w", name, statePath(name), err)
	}
	return &s, nil
}

// saveServer records the lab's server.
func saveServer(name string, s *Server) error {
	if err := saveState(statePath(name), s); err != nil {
		return fmt.Errorf("lab %s: %w", name, err)
	}
	return nil
}

// saveState writes v as indented JSON to path in StateDir, readable by
// every user, atomically: through a temporary file in the same directory
// and a rename, so that a reader never sees half a record and two
// writers never share a temporary file. (result.WriteAtomic does the
// same for results documents; lab sits below result in the import
// order.)
func saveState(path string, v any) error {
	if err := os.MkdirAll(StateDir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp.Chmod(0o644)
	_, werr := tmp.Write(append(b, '\n'))
	werr = errors.Join(werr, tmp.Close())
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}

// forgetServer removes the lab's state file; its log stays until the
// lab is removed.
func forgetServer(name string) error {
	if err := os.Remove(statePath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("lab %s: %w", name, err)
	}
	return nil
}

// StartServer starts cmd, a `wirespeed serve` listening on addr (HOST:PORT
// in side a) and requiring the pre-shared key in the file key (empty for
// none), detached inside side a: in a session of its own, with its
// output in LogPath(l.Name), so that it outlives this process. It records
// the server in the lab's state and waits until side b can connect to
// addr (at most 10 s, or until ctx ends); if it cannot, it stops the
// server and says why, with the end of its log. A lab runs one server:
// stop the one recorded first.
func (l *Lab) StartServer(ctx context.Context, cmd *exec.Cmd, addr, key string) (*Server, error) {
	return l.startServer(ctx, cmd, addr, key)
}

// Running reports whether the lab's recorded server is alive.
func (s *Server) Running(name string) bool { return s.running(name) }

// StopServer stops the server recorded for the lab called name, if it
// still runs: SIGTERM, then SIGKILL after 5 s. It forgets the server
// either way. A lab without a server is not an error.
func StopServer(name string) error { return stopServer(name) }
