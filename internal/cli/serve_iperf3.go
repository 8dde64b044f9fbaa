package cli

import (
	"github.com/spf13/cobra"

	"wirespeed/internal/server"
)

// iperf3ServeFlags choose whether `serve` also speaks iperf3 on its port.
type iperf3ServeFlags struct {
	only bool
	none bool
}

func addIperf3ServeFlags(cmd *cobra.Command, f *iperf3ServeFlags) {
	fl := cmd.Flags()
	fl.BoolVar(&f.only, "iperf3-only", false, "serve only iperf3 clients (3.x) on the port, refusing wirespeed's")
	fl.BoolVar(&f.none, "no-iperf3", false, "serve only wirespeed clients, closing connections that start like iperf3's")
}

// speaks is the server's choice of protocols; both by default, told apart
// by the first bytes a client sends.
func (f iperf3ServeFlags) speaks() (server.Protocols, error) {
	switch {
	case f.only && f.none:
		return 0, usagef("--iperf3-only and --no-iperf3 exclude each other")
	case f.only:
		return server.Iperf3Only, nil
	case f.none:
		return server.WirespeedOnly, nil
	}
	return server.Both, nil
}
