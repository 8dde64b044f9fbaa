package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"wirespeed/internal/record"
)

// Spool is a directory of documents an archive could not take, one
// directory per target (named by a digest of the target without its
// password), one file per document, the directories 0700 and the
// files 0600. A file is written atomically and
// removed once the archive has the document; since the archive adds a
// document once, two processes flushing one spool at once add each
// once.
type Spool struct {
	Dir string
}

// DefaultSpoolDir is where the spool is unless WIRESPEED_SPOOL says
// otherwise: $XDG_STATE_HOME/wirespeed/spool, else
// $HOME/.local/state/wirespeed/spool, else (no XDG_STATE_HOME, HOME
// unset or /, as for a system service) a directory of this user's own in
// the temporary directory, wirespeed-spool-UID, made 0700 and refused
// when it is a symbolic link or another user's: a spool shared by the
// users of a host let each read the others' results and plant documents
// in their archives. The variables count only when they are absolute
// paths, as the XDG specification says.
func DefaultSpoolDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "wirespeed", "spool"), nil
	}
	if h := getenv("HOME"); filepath.IsAbs(h) && filepath.Clean(h) != "/" {
		return filepath.Join(h, ".local", "state", "wirespeed", "spool"), nil
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("wirespeed-spool-%d", os.Getuid()))
	if err := privateDir(dir); err != nil {
		return "", fmt.Errorf("spool: neither XDG_STATE_HOME nor HOME names a directory, and %w; set %s to a directory of your own", err, "WIRESPEED_SPOOL")
	}
	return dir, nil
}

// privateDir makes dir, mode 0700, or checks that the one there is a
// directory of this user's (not a symbolic link to one), and no one
// else's to read or write.
func privateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err == nil || !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link, which anyone could have planted: remove it", dir)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory: remove it", dir)
	}
	if uid, ok := owner(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("%s belongs to another user (uid %d), who could read and plant results there: remove it", dir, uid)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(dir, 0o700)
	}
	return nil
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
	// The target, for `archive flush` to say whose documents wait; one
	// an older wirespeed wrote with a password in it is written again.
	name := filepath.Join(dir, "TARGET")
	if b, err := os.ReadFile(name); err != nil || string(b) != t.String()+"\n" {
		writePrivate(name, []byte(t.String()+"\n"))
	}
	sum := sha256.Sum256(doc)
	path := filepath.Join(dir, fmt.Sprintf("%d-%s.json", time.Now().UnixNano(), hex.EncodeToString(sum[:6])))
	if err := writePrivate(path, doc); err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	return path, nil
}

// writePrivate writes a spool file atomically (a temporary file renamed
// in), mode 0600: a document's environment and the target are the
// user's alone.
func writePrivate(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	werr := tmp.Chmod(0o600)
	if werr == nil {
		_, werr = tmp.Write(b)
	}
	werr = errors.Join(werr, tmp.Close())
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
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
		out[Redact(strings.TrimSpace(string(name)))] += len(files)
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
