package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"wirespeed/internal/spec"
)

// addSockOptFlags registers the socket options of run and sweep (issue
// 19): where the client's packets leave from and how both sides' data
// packets are marked and sized. Each one lands in the spec, so results,
// compare and plot show it like any other setting.
func addSockOptFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringVarP(&f.spec.BindAddr, "bind", "B", "",
		"local `ADDR` the client's control and data sockets bind to (iperf3's -B, netperf's -L): the interface under test on a multi-homed host")
	fl.StringVar(&f.spec.BindDev, "bind-dev", "",
		"bind the client's control and data sockets to network device `DEV` (SO_BINDTODEVICE, iperf3's --bind-dev; needs CAP_NET_RAW before Linux 5.7)")
	fl.IntVar(&f.spec.ClientPort, "cport", 0,
		"client data `PORT` (iperf3's --cport): stream i of the test uses PORT+i-1, so -P 4 takes PORT to PORT+3 (not with TCP_CRR)")
	tos := &tosFlags{t: &f.spec}
	fl.Var(tosValue{tos}, "tos",
		"TOS byte of both sides' data packets, 0-255, decimal or 0x hex (IP_TOS, IPV6_TCLASS; iperf3's -S, which here is the remote socket buffer)")
	fl.Var(dscpValue{tos}, "dscp",
		"DiffServ code point of both sides' data packets: EF, AF11..AF43, CS0..CS7, LE or 0-63 (the TOS byte is DSCP*4); not with --tos")
	fl.IntVar(&f.spec.MSS, "mss", 0,
		"TCP maximum segment size `N` on both sides' data sockets, 88-32767, set on the client's before connect (TCP_MAXSEG, iperf3's -M; -M here is the receive size)")
	fl.BoolVar(&f.spec.DontFragment, "dont-fragment", false,
		"UDP tests: never fragment a datagram (IP_PMTUDISC_DO); one larger than the path MTU fails the run, naming the MTU (iperf3's --dont-fragment)")
}

// tosFlags remembers which of --tos and --dscp set the TOS byte: they
// exclude each other.
type tosFlags struct {
	t    *spec.Test
	by   string // the flag that set it, "" for none
	dscp int
}

func (f *tosFlags) set(name string, tos int) error {
	if f.by != "" && f.by != name {
		return fmt.Errorf("--tos and --dscp both set the TOS byte: give one (--dscp N is --tos N*4)")
	}
	f.by, f.t.TOS = name, tos
	return nil
}

type tosValue struct{ f *tosFlags }

func (v tosValue) String() string {
	if v.f == nil || v.f.by != "tos" {
		return ""
	}
	return fmt.Sprintf("%#x", v.f.t.TOS)
}

func (v tosValue) Set(s string) error {
	n, err := spec.ParseTOS(s)
	if err != nil {
		return err
	}
	return v.f.set("tos", n)
}

func (v tosValue) Type() string { return "N" }

type dscpValue struct{ f *tosFlags }

func (v dscpValue) String() string {
	if v.f == nil || v.f.by != "dscp" {
		return ""
	}
	return strconv.Itoa(v.f.dscp)
}

func (v dscpValue) Set(s string) error {
	d, err := spec.ParseDSCP(s)
	if err != nil {
		return err
	}
	v.f.dscp = d
	return v.f.set("dscp", d<<2)
}

func (v dscpValue) Type() string { return "NAME|N" }
