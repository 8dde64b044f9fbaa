package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"wirespeed/internal/record"

	"wirespeed/internal/result"
)

// Spool is a directory of documents an archive could not take, one
// directory per target (named by a digest of the target without its
// password), one file per document. A file is written atomically and
// removed once the archive has the document; since the archive adds a
// document once, two processes flushing one spool at once add each
// once.
type Spool struct {
	Dir string
}

// DefaultSpoolDir is where the spool is unless WIRESPEED_SPOOL says
// otherwise: $XDG_STATE_HOME/wirespeed/spool, else
// ~/.local/state/wirespeed/spool, else the temporary directory's.
func DefaultSpoolDir(getenv func(string) string) string {
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "wirespeed", "spool")
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" && h != "/" {
		return filepath.Join(h, ".local", "state", "wirespeed", "spool")
	}
	return filepath.Join(os.TempDir(), "wirespeed-spool")
}

func (s Spool) dir(t Target) string {
	sum := sha256.Sum256([]byte(t.String()))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:8]))
}

// Save keeps a document for target, and returns the file it wrote.
func (s Spool) Save(t Target, doc []byte) (string, error) {
	dir := s.dir(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	// The target, for `archive flush` to say whose documents wait.
	name := filepath.Join(dir, "TARGET")
	if _, err := os.Stat(name); err != nil {
		result.WriteAtomic(name, []byte(t.String()+"\n"))
	}
	sum := sha256.Sum256(doc)
	path := filepath.Join(dir, fmt.Sprintf("%d-%s.json", time.Now().UnixNano(), hex.EncodeToString(sum[:6])))
	if err := result.WriteAtomic(path, doc); err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	return path, nil
}

// Pending lists the spooled documents of target, oldest first.
func (s Spool) Pending(t Target) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(s.dir(t), "*.json"))
	sort.Strings(files)
	return files, err
}

// Waiting lists the targets with spooled documents and how many each
// has, by the target's name (without a password).
func (s Spool) Waiting() (map[string]int, error) {
	dirs, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(s.Dir, d.Name(), "*.json"))
		if len(files) == 0 {
			continue
		}
		name, _ := os.ReadFile(filepath.Join(s.Dir, d.Name(), "TARGET"))
		out[strings.TrimSpace(string(name))] += len(files)
	}
	return out, nil
}

// Flushed says what Flush did.
type Flushed struct {
	Written int // documents the archive took (new or already there)
	// Rejected are files that are not documents the archive can take;
	// they are left in the spool, renamed to .rejected, with why.
	Rejected []string
}

// Flush writes the documents spooled for a's target to it, oldest
// first, in batches of a transaction each, and removes each file once
// its batch is committed; on SQLite that commit waits for the disk, so
// that a power loss cannot lose a document whose file is gone. It stops
// at the first error of the archive (the rest wait for the next flush).
func (s Spool) Flush(ctx context.Context, a *Archive) (Flushed, error) {
	var f Flushed
	files, err := s.Pending(a.Target())
	if err != nil {
		return f, err
	}
	var (
		ps    []*Prepared
		paths []string
		size  int
	)
	write := func() error {
		if len(ps) == 0 {
			return nil
		}
		if _, err := a.putPrepared(ctx, ps, true); err != nil {
			return err
		}
		for _, path := range paths {
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("spool: %w", err)
			}
		}
		f.Written += len(ps)
		ps, paths, size = ps[:0], paths[:0], 0
		return nil
	}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // another flush took it
		}
		if err != nil {
			return f, fmt.Errorf("spool: %w", err)
		}
		p, err := Prepare(bytes.TrimSpace(b))
		if err != nil {
			os.Rename(path, path+".rejected")
			f.Rejected = append(f.Rejected, fmt.Sprintf("%s: %v", path+".rejected", err))
			continue
		}
		ps, paths, size = append(ps, p), append(paths, path), size+len(b)
		if len(ps) >= BatchDocuments || size >= BatchBytes {
			if err := write(); err != nil {
				return f, err
			}
		}
	}
	return f, write()
}

// Keep archives a document, flushing the spool of the target first; when
// the archive cannot be opened or written, the document goes to the
// spool. It returns what happened for the user to be told: the file the
// document was spooled to (empty when archived) and the archive's error.
// err is set only when the document could not be kept at all.
func (s Spool) Keep(ctx context.Context, t Target, doc record.Doc) (k Kept, err error) {
	p, b, perr := PrepareDocument(doc)
	if b == nil {
		return k, perr
	}
	a, aerr := Open(ctx, t)
	if aerr == nil {
		defer a.Close()
		k.Flushed, aerr = s.Flush(ctx, a)
		if aerr == nil && perr == nil {
			var added []Added
			if added, aerr = a.PutPrepared(ctx, []*Prepared{p}); aerr == nil {
				k.Added = added[0]
			}
		}
	}
	if perr != nil {
		// Nothing measured: nothing to keep for later.
		k.ArchiveErr = perr
		return k, nil
	}
	if aerr == nil {
		return k, nil
	}
	k.ArchiveErr = aerr
	k.Spooled, err = s.Save(t, b)
	return k, err
}

// Kept is what Keep did with a document.
type Kept struct {
	Added   Added
	Flushed Flushed
	// ArchiveErr is why the archive did not take the document; Spooled
	// the file it was kept in instead.
	ArchiveErr error
	Spooled    string
}
