package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"wirespeed/internal/report"
	"wirespeed/internal/verify"
)

func newVerifyCmd(e *env) *cobra.Command {
	var asJSON bool
	var name string
	cmd := &cobra.Command{
		Use:   "verify [flags]",
		Short: "Check wirespeed's figures against ground truths on this machine's kernel (root)",
		Long: `Build labs of known truth on this machine (network namespaces; nothing
outside them changes), run wirespeed's own tests in them, and print each
figure beside its ground truth with the error and its tolerance:

  TCP goodput, one stream and four    the payload a tbf of 100 Mbit/s lets through
  bytes per packet, TSO and GSO off   a full frame at MTU 9000 (MSS + headers)
  frames on the wire, TSO on          the tbf's own packet count (netlink)
  UDP_RR transactions                 the client's device's tx_packets (netlink)
  host CPU                            /proc/stat read by verify during the run
  UDP goodput at twice the rate       the payload a router's tbf of 20 Mbit/s lets through
  UDP loss                            the router qdisc's own drop counter
  idle round trip                     irtt beside it, where irtt is installed
  RRUL loaded round trip, p99         the idle round trip plus the router's two queues

It exits 1 when a figure is out of its tolerance or could not be measured,
and takes about a minute. docs/verify.md lists each truth and why its
tolerance is what it is. The labs are wst-wsv-t, wst-wsv-o and wst-wsv-r
(a, b, r), removed when verify ends.`,
		Example: `  sudo wirespeed verify
  sudo wirespeed verify --json > verify.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("find the wirespeed binary to run in the labs: %w", err)
			}
			if err := checkVerifyName(name); err != nil {
				return err
			}
			rep, runErr := verify.Run(cmd.Context(), verify.Config{Exe: exe, Name: name, Progress: e.stderr})
			if len(rep.Checks) > 0 {
				if asJSON {
					enc := json.NewEncoder(e.stdout)
					enc.SetIndent("", "  ")
					if err := enc.Encode(rep); err != nil {
						return err
					}
				} else if err := report.VerifyText(e.stdout, rep); err != nil {
					return err
				}
			}
			if runErr != nil {
				return runErr
			}
			if bad := rep.Failed(); len(bad) > 0 {
				names := make([]string, len(bad))
				for i, c := range bad {
					names[i] = c.Name
				}
				return fmt.Errorf("%d of %d checks out of their tolerance or not measured: %s", len(bad), len(rep.Checks), strings.Join(names, ", "))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print the checks as JSON")
	fl.StringVar(&name, "name", "wsv", "prefix of the labs' names (wst-NAME-t-a and so on)")
	return cmd
}

// checkVerifyName refuses a lab prefix that would make a bad lab name.
func checkVerifyName(name string) error {
	if name == "" || len(name) > 20 {
		return usagef("--name %q: give 1 to 20 lowercase letters, digits or dashes", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return usagef("--name %q: give 1 to 20 lowercase letters, digits or dashes", name)
		}
	}
	return nil
}
