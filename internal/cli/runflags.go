package cli

import (
	"github.com/spf13/cobra"

	"wirespeed/internal/measure"
	"wirespeed/internal/server"
	"wirespeed/internal/spec"
)

// measureFlags are the run flags about how a measurement is taken rather
// than what runs: CPU sampling, iterations and confidence.
type measureFlags struct {
	procRoot string
}

// addRunFlags registers the flags of `wirespeed run` on cmd. `wirespeed
// sweep` registers the same ones, so the two commands cannot drift apart.
func addRunFlags(cmd *cobra.Command, f *runFlags) {
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVarP(&f.test, "test", "t", string(spec.TCPStream), "test to run: "+kindList())
	fl.BoolVarP(&f.reverse, "reverse", "R", false, "server sends (TCP_MAERTS)")
	fl.VarP(durationValue{&f.spec.Duration}, "length", "l", "measurement window: seconds (60) or a duration (2s, 500ms, 1m)")
	fl.VarP(bytesValue{&f.spec.SendSize}, "send-size", "m", "bytes per send call (131072, 128K)")
	fl.VarP(bytesValue{&f.spec.RecvSize}, "recv-size", "M", "bytes per receive call")
	fl.VarP(bytesValue{&f.spec.LocalSockBuf}, "local-sockbuf", "s", "SO_SNDBUF/SO_RCVBUF to ask for on the client's data sockets (0: system default)")
	fl.VarP(bytesValue{&f.spec.RemoteSockBuf}, "remote-sockbuf", "S", "SO_SNDBUF/SO_RCVBUF to ask for on the server's data sockets (0: system default)")
	fl.IntVarP(&f.spec.Parallel, "parallel", "P", 1, "streams per direction")
	fl.Var(durationValue{&f.spec.Omit}, "omit", "warm-up before the window, left out of the result")
	fl.VarP(durationValue{&f.spec.Interval}, "interval", "i", "interval report period (0: none)")
	fl.StringVar(&f.spec.CongestionControl, "cc", "", "TCP congestion control on both sides' data sockets, e.g. cubic (default: the system's)")
	fl.BoolVar(&f.spec.NoDelay, "nodelay", false, "set TCP_NODELAY (disable Nagle) on data sockets")
	fl.StringVar(&f.payload, "payload", spec.PayloadRandom, "what to send: random (incompressible), zeros, or a FILE's contents (up to 1 MiB, repeated)")
	fl.BoolVar(&f.tradeoff, "tradeoff", false, "run TCP_STREAM, then TCP_MAERTS, and show both directions side by side")
	f.spec.CPU = true
	fl.BoolVar(&f.spec.CPU, "cpu", true, "measure CPU utilization and service demand on both sides (--cpu=false to skip)")
	fl.StringVar(&f.measure.procRoot, "proc-root", measure.DefaultProcRoot, "where procfs is mounted on this host, for the local CPU figures")
	fl.IntVarP(&f.port, "port", "p", server.DefaultPort, "server port, when HOST does not give one")
	fl.BoolVarP(&f.ipv4, "ipv4", "4", false, "use IPv4 only")
	fl.BoolVarP(&f.ipv6, "ipv6", "6", false, "use IPv6 only")
	fl.BoolVar(&f.json, "json", false, "print the JSON results document instead of text")
	fl.StringVarP(&f.output, "output", "o", "", "also write the result to FILE: .json, .csv or .txt")
}
