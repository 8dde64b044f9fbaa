package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"wirespeed/internal/record"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"wirespeed/internal/archive"
	"wirespeed/internal/report"
)

// Environment variables the archive reads.
const (
	// ArchiveEnv is the archive of every run, sweep, matrix and mesh
	// round when --archive is not given.
	ArchiveEnv = "WIRESPEED_ARCHIVE"
	// SpoolEnv is the spool directory (archive.DefaultSpoolDir).
	SpoolEnv = "WIRESPEED_SPOOL"
)

// archiveWriteTimeout bounds writing one document (and flushing the
// spool before it) after a measurement: past it the document is spooled.
const archiveWriteTimeout = 60 * time.Second

const archiveFlagUsage = "also keep the result in the archive `TARGET`: a SQLite FILE, or a postgres://USER:PASSWORD@HOST/DB URL (default $" + ArchiveEnv + ")"

// registerArchiveFlag registers --archive on a measuring command.
func registerArchiveFlag(fl *pflag.FlagSet, target *string) {
	fl.StringVar(target, "archive", "", archiveFlagUsage)
}

// archiveTarget is the archive flag's target, or WIRESPEED_ARCHIVE's;
// nil for none. A malformed one is a usage error, found before anything
// is measured.
func archiveTarget(e *env, flag string) (*archive.Target, error) {
	s := flag
	from := "--archive"
	if s == "" {
		s = e.getenv(ArchiveEnv)
		from = ArchiveEnv
	}
	if s == "" {
		return nil, nil
	}
	t, err := archive.ParseTarget(s)
	if err != nil {
		return nil, usagef("%s: %v", from, err)
	}
	return &t, nil
}

// spool is the spool directory: WIRESPEED_SPOOL's, else
// archive.DefaultSpoolDir's, whose error says why it has none.
func (e *env) spool() (archive.Spool, error) {
	dir := e.getenv(SpoolEnv)
	if dir == "" {
		var err error
		if dir, err = archive.DefaultSpoolDir(e.getenv); err != nil {
			return archive.Spool{}, err
		}
	}
	return archive.Spool{Dir: dir}, nil
}

// keepInArchive writes a results document or mesh round (doc) to the
// archive, after the measurement was shown and written: what was
// spooled for the archive before goes first. When the archive cannot
// take it, the document goes to the spool and the user is told on
// stderr; only when the spool cannot take it either is it an error. An
// interrupted measurement is archived too: what it measured is kept.
func keepInArchive(ctx context.Context, e *env, t *archive.Target, doc record.Doc) error {
	if t == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), archiveWriteTimeout)
	defer cancel()
	sp, err := e.spool()
	if err != nil {
		return fmt.Errorf("the result was not archived to %s: %w; it is in what was printed above, and in -o FILE if given", t, err)
	}
	k, err := sp.Keep(ctx, *t, doc)
	if k.Flushed.Written > 0 {
		fmt.Fprintf(e.stderr, "wirespeed: archive %s: wrote %d document(s) spooled earlier\n", t, k.Flushed.Written)
	}
	for _, r := range k.Flushed.Rejected {
		fmt.Fprintf(e.stderr, "wirespeed: archive %s: spool file %s\n", t, r)
	}
	switch {
	case err != nil && k.ArchiveErr == nil:
		// The document could not even be prepared: neither the archive
		// nor the spool was tried.
		return fmt.Errorf("the result was not archived nor spooled: %w; what was printed above holds it", err)
	case err != nil:
		return fmt.Errorf("the result was not archived (%v) and could not be spooled (%w); it is in what was printed above, and in -o FILE if given", k.ArchiveErr, err)
	case k.ArchiveErr != nil && errors.Is(k.ArchiveErr, archive.ErrNotResult):
		fmt.Fprintf(e.stderr, "wirespeed: archive %s: nothing archived: %v\n", t, k.ArchiveErr)
	case k.ArchiveErr != nil:
		fmt.Fprintf(e.stderr, "wirespeed: %v\nwirespeed: the result is kept in %s; `wirespeed archive flush --archive %s` (or the next run with this archive) writes it\n",
			k.ArchiveErr, k.Spooled, t)
	}
	return nil
}

// useArchive resolves --archive (or WIRESPEED_ARCHIVE) into the sink
// that sinks appends: a usage error, before anything is measured, when
// the target is malformed, or when it, -o or --logfile cannot be
// written (checkPaths).
func (f *runFlags) useArchive(ctx context.Context, e *env) error {
	t, err := archiveTarget(e, f.archive)
	if err != nil {
		return err
	}
	if err := f.checkPaths(t); err != nil {
		return err
	}
	if t == nil {
		return nil
	}
	f.archiveSink = &archiveSink{ctx: ctx, e: e, target: t}
	return nil
}

// archiveSink is the archive as one of the sinks of run, sweep, matrix
// and mesh (report.Sink): each complete document, each mesh round, is
// kept in the archive or, when it cannot be, in the spool.
type archiveSink struct {
	ctx    context.Context
	e      *env
	target *archive.Target
}

func (s *archiveSink) Emit(d report.Doc) error {
	if d.Partial || d.Results == nil && d.Mesh == nil {
		return nil // a sweep or matrix in progress: the complete one comes
	}
	return keepInArchive(s.ctx, s.e, s.target, record.Doc{Results: d.Results, Mesh: d.Mesh})
}

func (s *archiveSink) Close() error { return nil }

type archiveCmdFlags struct {
	target string
}

func newArchiveCmd(e *env) *cobra.Command {
	f := &archiveCmdFlags{}
	cmd := &cobra.Command{
		Use:   "archive",
		Short: "Import, flush, prune and export the archive of results",
		Long: `The archive keeps every result document that run, sweep, matrix and mesh
write with --archive TARGET (or $` + ArchiveEnv + `): a SQLite file, or a
PostgreSQL database shared by several hosts (postgres://USER:PASSWORD@HOST/DB).
wirespeed history reads it.

What the archive cannot take (database down, wrong password, disk full,
locked) is kept in a spool directory ($` + SpoolEnv + `, default
~/.local/state/wirespeed/spool) and written by the next command that
archives to the same target, or by archive flush.`,
		Example: `  wirespeed archive import results/*.json --archive results.db
  wirespeed archive flush --archive postgres://wirespeed@db.example/wirespeed
  wirespeed archive prune --older-than 90d --archive results.db
  wirespeed archive export --since 30d --archive results.db -o recent.jsonl`,
		Args: noArgs,
	}
	cmd.PersistentFlags().StringVar(&f.target, "archive", "", "the archive `TARGET`: a SQLite FILE or a postgres:// URL (default $"+ArchiveEnv+")")
	cmd.AddCommand(newArchiveImportCmd(e, f), newArchiveFlushCmd(e, f), newArchivePruneCmd(e, f), newArchiveExportCmd(e, f))
	return cmd
}

// open opens the archive the flags name, which must be given.
func (f *archiveCmdFlags) open(ctx context.Context, e *env) (*archive.Archive, error) {
	return openArchive(ctx, e, f.target)
}

// openExisting opens the archive the flags name, which must be given
// and exist (openArchiveToRead).
func (f *archiveCmdFlags) openExisting(ctx context.Context, e *env) (*archive.Archive, error) {
	return openArchiveToRead(ctx, e, f.target)
}

// openArchive opens the archive that flag (or WIRESPEED_ARCHIVE) names
// for a command that reads it (archive, history, dashboard): one must be
// given.
func openArchive(ctx context.Context, e *env, flag string) (*archive.Archive, error) {
	t, err := archiveTarget(e, flag)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, usagef("no archive: give --archive FILE or postgres://URL, or set %s", ArchiveEnv)
	}
	return archive.Open(ctx, *t)
}

// openArchiveToRead is openArchive for a command that only reads
// (history, dashboard, archive export and prune): a SQLite file that is
// not there is a usage error naming it, never a new empty archive
// (history --archive /tmp/typo.db once made one and said no results
// matched).
func openArchiveToRead(ctx context.Context, e *env, flag string) (*archive.Archive, error) {
	t, err := archiveTarget(e, flag)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, usagef("no archive: give --archive FILE or postgres://URL, or set %s", ArchiveEnv)
	}
	t.MustExist = true
	a, err := archive.Open(ctx, *t)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usagef("%v", err)
	}
	return a, err
}

func newArchiveImportCmd(e *env, f *archiveCmdFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE...",
		Short: "Bring result and mesh documents written before into the archive",
		Long: `Import results documents (run, sweep, matrix; -o FILE.json or --json) and
mesh rounds into the archive, or files of several documents one after
another (what archive export writes). A document the archive already holds
is not added again, so importing a directory twice adds nothing the second
time. A file that is not a wirespeed document is named and skipped; the
exit status is then 1.`,
		Example: `  wirespeed archive import ~/results/*.json --archive results.db`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("archive import needs at least one FILE")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := f.open(cmd.Context(), e)
			if err != nil {
				return err
			}
			defer a.Close()
			var failed []string
			var docs, added, results int
			// The documents are written in batches, a transaction each (a
			// directory of files is written at the rate of a batch, not
			// of a commit a file); from begins the batch's files.
			var (
				batch []*archive.Prepared
				size  int
				from  string
			)
			write := func() error {
				ads, err := a.PutPrepared(cmd.Context(), batch)
				if err != nil {
					return fmt.Errorf("import %s and the files after it: %w; importing them again adds only what is missing", from, err)
				}
				for _, ad := range ads {
					docs++
					if ad.New {
						added++
						results += ad.Results
					}
				}
				batch, size = batch[:0], 0
				return nil
			}
			for _, file := range args {
				bs, err := archive.ReadDocumentFile(file)
				for _, b := range bs {
					p, perr := archive.Prepare(b)
					if perr != nil {
						err = errors.Join(err, perr)
						continue
					}
					if len(batch) == 0 {
						from = file
					}
					batch, size = append(batch, p), size+len(b)
					if len(batch) >= archive.BatchDocuments || size >= archive.BatchBytes {
						if err := write(); err != nil {
							return err
						}
					}
				}
				if err != nil {
					fmt.Fprintf(e.stderr, "wirespeed: import %s: %v; give result or mesh documents that wirespeed wrote\n", file, err)
					failed = append(failed, file)
				}
			}
			if err := write(); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%d documents read, %d new (%d results), %d already in %s\n", docs, added, results, docs-added, a.Target())
			if len(failed) > 0 {
				return fmt.Errorf("%d of %d files not imported: %s", len(failed), len(args), strings.Join(failed, ", "))
			}
			return nil
		},
	}
}

func newArchiveFlushCmd(e *env, f *archiveCmdFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "flush",
		Short: "Write the results spooled while the archive could not take them",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sp, err := e.spool()
			if err != nil {
				return err
			}
			a, err := f.open(cmd.Context(), e)
			if err != nil {
				return err
			}
			defer a.Close()
			fl, err := sp.Flush(cmd.Context(), a)
			fmt.Fprintf(e.stdout, "wrote %d spooled documents to %s\n", fl.Written, a.Target())
			for _, r := range fl.Rejected {
				fmt.Fprintf(e.stderr, "wirespeed: spool file %s\n", r)
			}
			if err != nil {
				return err
			}
			waiting, _ := sp.Waiting()
			var others []string
			for t, n := range waiting {
				others = append(others, fmt.Sprintf("%d for %s", n, t))
			}
			sort.Strings(others)
			if len(others) > 0 {
				fmt.Fprintf(e.stdout, "still spooled in %s: %s (flush each with its --archive)\n", sp.Dir, strings.Join(others, ", "))
			}
			return nil
		},
	}
}

func newArchivePruneCmd(e *env, f *archiveCmdFlags) *cobra.Command {
	var olderThan string
	cmd := &cobra.Command{
		Use:     "prune --older-than AGE",
		Short:   "Remove the results older than an age",
		Example: `  wirespeed archive prune --older-than 90d --archive results.db`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if olderThan == "" {
				return usagef("archive prune needs --older-than AGE, such as 90d")
			}
			age, err := parseAge(olderThan)
			if err != nil {
				return usagef("--older-than: %v", err)
			}
			a, err := f.openExisting(cmd.Context(), e)
			if err != nil {
				return err
			}
			defer a.Close()
			p, err := a.Prune(cmd.Context(), e.now().Add(-age))
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "removed %d documents (%d results) older than %s from %s\n", p.Documents, p.Results, olderThan, a.Target())
			return nil
		},
	}
	cmd.Flags().StringVar(&olderThan, "older-than", "", "remove documents that started longer ago than `AGE`: 90d, 12h, 2w, or a Go duration")
	return cmd
}

func newArchiveExportCmd(e *env, f *archiveCmdFlags) *cobra.Command {
	var since, output string
	cmd := &cobra.Command{
		Use:   "export [--since AGE|DATE] [-o FILE]",
		Short: "Write the archive's documents back out as JSON",
		Long: `Write the archived documents, oldest first, as JSON: one document per line
(JSON Lines), each exactly as it was archived. archive import reads such a
file back.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var from time.Time
			if since != "" {
				var err error
				if from, err = parseSince(since, e.now()); err != nil {
					return usagef("--since: %v", err)
				}
			}
			a, err := f.openExisting(cmd.Context(), e)
			if err != nil {
				return err
			}
			defer a.Close()
			w := bufio.NewWriter(e.stdout)
			var file *os.File
			if output != "" {
				if file, err = os.Create(output); err != nil {
					return err
				}
				defer file.Close()
				w = bufio.NewWriter(file)
			}
			n := 0
			err = a.Documents(cmd.Context(), from, time.Time{}, func(d archive.Document) error {
				n++
				w.Write(d.JSON)
				return w.WriteByte('\n')
			})
			if err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if file != nil {
				fmt.Fprintf(e.stderr, "wrote %d documents to %s\n", n, output)
				return file.Close()
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "only documents since `AGE` ago (30d, 12h) or a DATE (2026-12-01, RFC 3339)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to `FILE` instead of standard output")
	return cmd
}

// parseAge reads an age: a number with d (days), w (weeks), h, m or s,
// or a Go duration.
func parseAge(s string) (time.Duration, error) {
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil || v < 0 {
				return 0, fmt.Errorf("%q is not an age: use 90d, 2w, 12h or 30m", s)
			}
			return time.Duration(v * float64(unit)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not an age: use 90d, 2w, 12h or 30m", s)
	}
	return d, nil
}

// parseSince reads a start: an age before now, or a date.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := parseAge(s); err == nil {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither an age (30d, 12h) nor a date (2026-12-01, 2026-12-01T14:00:00Z)", s)
}
