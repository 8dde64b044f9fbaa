package cli

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"wirespeed/internal/control"
	"wirespeed/internal/result"
)

// Version is the tool's version; release builds may set it with
// -ldflags "-X wirespeed/internal/cli.Version=v1.2.3". Without it the
// version comes from the build information the Go toolchain embeds.
var Version = ""

// version returns the version a result and the control handshake carry:
// Version, else what buildVersion makes of the binary's build information.
func version() string {
	if Version != "" {
		return Version
	}
	bi, _ := debug.ReadBuildInfo()
	return buildVersion(bi)
}

// buildVersion names the build bi describes: the module version, which
// is a release's for `go install wirespeed/cmd/wirespeed@v1.2.3` and,
// since Go 1.24, a pseudo-version naming the commit for a build from a
// checkout; where the toolchain leaves it "(devel)", "devel" with the
// commit's first 12 hex digits and "-dirty" when the work tree had
// changes (vcs.revision and vcs.modified); "devel" alone when neither is
// known (go run, go test, -buildvcs=false, a git worktree).
func buildVersion(bi *debug.BuildInfo) string {
	if bi == nil {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "devel-" + rev
	if dirty {
		v += "-dirty"
	}
	return v
}

// versionText is what `wirespeed version` prints: the version, the
// commit and build details when the build information has them, and the
// protocol and document versions this binary speaks.
func versionText(v string, bi *debug.BuildInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "wirespeed %s\n", v)
	if bi != nil {
		set := map[string]string{}
		for _, s := range bi.Settings {
			set[s.Key] = s.Value
		}
		if rev := set["vcs.revision"]; rev != "" {
			state := "clean"
			if set["vcs.modified"] == "true" {
				state = "with uncommitted changes"
			}
			fmt.Fprintf(&b, "commit:           %s (%s", rev, state)
			if t := set["vcs.time"]; t != "" {
				fmt.Fprintf(&b, ", committed %s", t)
			}
			b.WriteString(")\n")
		}
		if bi.GoVersion != "" {
			fmt.Fprintf(&b, "built with:       %s", bi.GoVersion)
			if os, arch := set["GOOS"], set["GOARCH"]; os != "" && arch != "" {
				fmt.Fprintf(&b, " %s/%s", os, arch)
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "control protocol: %s version %d (accepts %d to %d)\n", control.ProtocolName, control.Version, control.MinVersion, control.Version)
	fmt.Fprintf(&b, "documents:        %s, %s\n", result.Schema, result.MeshSchema)
	return b.String()
}

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit it was built from and the protocol versions spoken",
		Long: `Print wirespeed's version: the module version of a released build; for a
build from a git checkout the version Go derives from the commit
(v0.0.0-TIME-COMMIT, "+dirty" when the work tree had changes; "devel-COMMIT"
from older toolchains), then the full commit, the Go toolchain, the control
protocol version this binary speaks and accepts, and the schema names of
the documents it writes. A bug report should include all of it.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi, _ := debug.ReadBuildInfo()
			fmt.Fprint(e.stdout, versionText(version(), bi))
			return nil
		},
	}
}
