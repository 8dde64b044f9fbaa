package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"wirespeed/internal/spec"
)

// addDataPathFlags registers the data path options of run and sweep:
// where the data-path threads run and where the copies go. Each one lands
// in the spec, so results, compare and plot show it like any other
// setting.
func addDataPathFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.VarP(cpusValue{&f.spec.LocalCPUs, &f.spec.RemoteCPUs}, "pin", "T",
		"pin each side's data-path threads to CPUs (netperf's -T); a side is a CPU or a list, 0:1 or 0-3, stream k on its k-th CPU; -T 0,1 pins the client to 0 and the server to 1, -T ,1 only the server")
	fl.Var(choiceValue{&f.spec.ZeroCopy, spec.ZeroCopyModes}, "zerocopy",
		"TCP senders: copy (write), sendfile (from a memfd) or msg (MSG_ZEROCOPY, completions counted)")
	fl.Var(choiceValue{&f.spec.Rx, spec.RxModes}, "rx",
		"TCP receivers: copy (read), splice (to /dev/null through a pipe) or discard (MSG_TRUNC): the last two never copy the payload to the program")
	fl.Var(rateValue{&f.spec.FQRateBitsPerSecond}, "fq-rate",
		"stream tests: cap each stream's sender at this many bits/s (SO_MAX_PACING_RATE, iperf3's --fq-rate)")
	fl.IntVar(&f.spec.BusyPollMicros, "busy-poll", 0,
		"request/response tests: SO_BUSY_POLL microseconds on both sides' sockets (raising it above net.core.busy_read needs CAP_NET_ADMIN)")
	fl.Var(bytesValue{&f.spec.GSOSize}, "gso",
		"UDP_STREAM: datagram size the kernel cuts each send into (UDP_SEGMENT); -m is then bytes per send")
	fl.BoolVar(&f.spec.GRO, "gro", false, "UDP_STREAM: UDP_GRO on the receiver (datagrams joined by the kernel, counted one by one)")
	// UDP batches.
	fl.IntVar(&f.spec.SendBatch, "send-batch", 1,
		fmt.Sprintf("UDP_STREAM: datagrams per send call (sendmmsg), up to %d; 1 is netperf's", spec.MaxUDPBatch))
	fl.IntVar(&f.spec.RecvBatch, "recv-batch", 1,
		fmt.Sprintf("UDP_STREAM: datagrams per receive call at most (recvmmsg), up to %d; 1 is netperf's and iperf3's", spec.MaxUDPBatch))
	fl.StringVar(&f.spec.RxTimestamp, "rx-timestamp", "",
		"UDP_STREAM: arrival times for the jitter: clock (per receive call, as iperf3) or kernel (SO_TIMESTAMPNS per datagram, the default with --recv-batch or --gro)")
}

// cpusValue is -T LOCAL[,REMOTE].
type cpusValue struct{ local, remote *spec.CPUList }

func (v cpusValue) String() string {
	if v.local == nil || *v.local == "" && *v.remote == "" {
		return ""
	}
	if *v.remote == "" {
		return string(*v.local)
	}
	return string(*v.local) + "," + string(*v.remote)
}

func (v cpusValue) Set(s string) error {
	l, r, err := spec.ParseCPUs(s)
	if err != nil {
		return err
	}
	*v.local, *v.remote = l, r
	return nil
}

func (v cpusValue) Type() string { return "LOCAL[,REMOTE]" }

// choiceValue is a flag that takes one of a few words.
type choiceValue struct {
	s       *string
	choices []string
}

func (v choiceValue) String() string {
	if v.s == nil {
		return ""
	}
	return *v.s
}

func (v choiceValue) Set(s string) error {
	if !slices.Contains(v.choices, s) {
		return fmt.Errorf("%q: use %s", s, strings.Join(v.choices, ", "))
	}
	*v.s = s
	return nil
}

func (v choiceValue) Type() string { return strings.Join(v.choices, "|") }
