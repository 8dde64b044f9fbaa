package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"wirespeed/internal/archive"
)

// checkPaths is a usage error, before anything is measured, when a
// file the command would write at the end cannot be written: -o, the
// --logfile, a SQLite --archive. Found after the test, a directory
// given as -o or --archive cost the whole measurement (the archive's
// result went to the spool, exit 0, and archive flush failed the same
// way; -o failed on a hidden temporary name).
func (f *runFlags) checkPaths(t *archive.Target) error {
	if f.output != "" {
		if err := checkWritable("-o", f.output, "result.json", true); err != nil {
			return err
		}
	}
	if f.out.logfile != "" {
		if err := checkWritable("--logfile", f.out.logfile, "run.log", false); err != nil {
			return err
		}
	}
	if t != nil && t.Backend == archive.SQLite {
		// SQLite writes its journal beside the file: the directory too.
		if err := checkWritable("--archive", t.Path, "archive.db", true); err != nil {
			return err
		}
	}
	return nil
}

// checkWritable is a usage error naming flag and path, and what to do,
// when path cannot be written as a file: it is a directory, its
// directory is not there, or (dirToo, for a file replaced by renaming
// a new one in, or with files beside it) its directory cannot take a
// new file; an existing file must open for writing. It writes nothing
// to path: a probe file in the directory is made and removed.
func checkWritable(flag, path, example string, dirToo bool) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return usagef("%s %s is a directory: give a file name, such as %s", flag, path, filepath.Join(path, example))
	case err == nil:
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return usagef("%s %s cannot be written (%v): give a file you can write to", flag, path, unwrapPath(err))
		}
		f.Close()
		if !dirToo {
			return nil
		}
	case !errors.Is(err, fs.ErrNotExist):
		return usagef("%s %s: %v: give another path", flag, path, unwrapPath(err))
	}
	dir := filepath.Dir(path)
	if di, err := os.Stat(dir); err != nil || !di.IsDir() {
		return usagef("%s %s: the directory %s does not exist: create it (mkdir -p %s) or give another path", flag, path, dir, dir)
	}
	probe, err := os.CreateTemp(dir, ".wirespeed-probe-*")
	if err != nil {
		return usagef("%s %s: cannot create a file in %s (%v): give a path in a directory you can write to", flag, path, dir, unwrapPath(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// unwrapPath drops a PathError's repetition of the path, said already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
