package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

func newManCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write the man pages (section 1) for every command into DIR",
		Long: `Write a man page for wirespeed and for each of its commands into DIR
(wirespeed.1, wirespeed-run.1, wirespeed-lab-up.1, ...), generated from the
same flag definitions as --help, so the two cannot disagree. DIR is made if
it does not exist. View one with man -l DIR/wirespeed-run.1, or install
them into a man path such as /usr/local/share/man/man1.`,
		Example: `  wirespeed man /usr/local/share/man/man1
  wirespeed man ./man && man -l ./man/wirespeed-run.1`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("man takes the directory to write the pages into, like: wirespeed man ./man")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("man: %w", err)
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true // the same pages from the same source, whenever made
			hdr := &doc.GenManHeader{Title: "WIRESPEED", Section: "1", Source: "wirespeed " + version(), Manual: "wirespeed manual"}
			if err := doc.GenManTree(root, hdr, dir); err != nil {
				return fmt.Errorf("man: write pages into %s: %w", dir, err)
			}
			fmt.Fprintf(e.stderr, "wrote the man pages into %s\n", dir)
			return nil
		},
	}
}
