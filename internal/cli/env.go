package cli

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/spf13/cobra"

	"wirespeed/internal/measure"
	"wirespeed/internal/report"
	"wirespeed/internal/sysinfo"
)

type envFlags struct {
	dev      string
	peer     string
	json     bool
	features bool
	procRoot string
	sysRoot  string
}

func newEnvCmd(e *env) *cobra.Command {
	f := &envFlags{}
	cmd := &cobra.Command{
		Use:   "env",
		Short: "Print this host's environment: kernel, CPU, governor, interface, offloads, qdisc, sysctls",
		Long: `Print the environment record every result carries for each side: hostname,
kernel release, CPU, each CPU's frequency governor (cpufreq's
scaling_governor; "none" where the kernel offers no cpufreq, as in many
virtual machines), TCP congestion control, the sysctls that change results
(tcp_rmem, tcp_wmem, rmem_max, wmem_max, tcp_mtu_probing, busy_poll,
busy_read), and for one interface its driver, MTU, link speed and duplex,
offload features (with ethtool's names, fixed or changeable) and root qdisc.

The interface is the one named by --dev, or the one the route to --peer
leaves by (only the route is looked up; nothing is sent). Anything the
kernel or driver does not report is left out with a warning on stderr.

With --json the record is printed as the JSON object results embed.`,
		Example: `  wirespeed env --peer host
  wirespeed env --dev eth0 --features
  wirespeed env --peer 127.0.0.1 --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := sysinfo.Options{ProcRoot: f.procRoot, SysRoot: f.sysRoot, Dev: f.dev}
			if f.peer != "" {
				if f.dev != "" {
					return usagef("--dev and --peer both choose the interface; give one")
				}
				addr, err := resolvePeer(cmd, f.peer)
				if err != nil {
					return err
				}
				opts.Peer = addr
			}
			rec, warnings, err := sysinfo.Collect(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if f.json {
				if err := report.EnvJSON(e.stdout, rec); err != nil {
					return err
				}
			} else {
				report.Env(e.stdout, rec, report.EnvOptions{AllFeatures: f.features})
			}
			for _, w := range warnings {
				fmt.Fprintf(e.stderr, "warning: %s\n", w)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.dev, "dev", "", "interface to describe (eth0)")
	fl.StringVar(&f.peer, "peer", "", "describe the interface that carries traffic to this address or host name")
	fl.BoolVar(&f.json, "json", false, "print the record as JSON")
	fl.BoolVar(&f.features, "features", false, "list every kernel feature of the interface, not only ethtool's groups")
	fl.StringVar(&f.procRoot, "proc-root", measure.DefaultProcRoot, "where procfs is mounted")
	fl.StringVar(&f.sysRoot, "sys-root", sysinfo.DefaultSysRoot, "where sysfs is mounted, for the CPU governors")
	// --proc was this flag's first name; it stays, hidden, for scripts.
	fl.StringVar(&f.procRoot, "proc", measure.DefaultProcRoot, "where procfs is mounted")
	fl.MarkDeprecated("proc", "use --proc-root, as run and serve do")
	return cmd
}

// resolvePeer turns an address or a host name into one address.
func resolvePeer(cmd *cobra.Command, s string) (netip.Addr, error) {
	h := strings.Trim(s, "[]")
	if addr, err := netip.ParseAddr(h); err == nil {
		return addr, nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(cmd.Context(), "ip", h)
	if err != nil || len(addrs) == 0 {
		return netip.Addr{}, usagef("--peer %q is neither an address nor a host name that resolves: %v", s, err)
	}
	return addrs[0].Unmap(), nil
}
