package measure

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// NetCounters is one reading of the kernel's protocol counters, keyed by
// "Prefix.Name" as /proc/net/snmp and /proc/net/netstat name them:
// "Tcp.RetransSegs", "Udp.InErrors", "TcpExt.TCPTimeouts".
type NetCounters map[string]int64

// ReadNetCounters reads <procRoot>/net/snmp and <procRoot>/net/netstat.
//
// procRoot is "/proc" for the host. The files are per network namespace,
// and /proc/net is the namespace of the process's main thread: code that
// runs on a thread inside another namespace (lab.Do) must pass
// "/proc/thread-self" to read that namespace's counters.
func ReadNetCounters(procRoot string) (NetCounters, error) {
	c := NetCounters{}
	for _, name := range []string{"snmp", "netstat"} {
		path := filepath.Join(procRoot, "net", name)
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("read kernel counters: %w", err)
		}
		err = c.parse(f, path)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

// maxCounterLine bounds one line; the longest real one (TcpExt) is about
// 3 KB on current kernels.
const maxCounterLine = 1 << 20

// parse reads one file in the format of /proc/net/snmp and
// /proc/net/netstat into c: for each prefix a line of names and then a
// line of values, "Tcp: RtoAlgorithm RtoMin ..." then "Tcp: 1 200 ...".
// name is used in errors.
func (c NetCounters) parse(r io.Reader, name string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 8192), maxCounterLine)
	var (
		lineNo     int
		headerLine int // line number of a header waiting for its values; 0 when none
		header     []string
		prefix     string
		found      bool
		errMalform = func(line int, format string, a ...any) error {
			return fmt.Errorf("%s line %d: %s: is it a /proc/net/snmp or /proc/net/netstat file?", name, line, fmt.Sprintf(format, a...))
		}
	)
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		p, rest, ok := strings.Cut(line, ":")
		if !ok || p == "" || strings.ContainsAny(p, " \t") {
			return errMalform(lineNo, "no \"Prefix:\" at the start")
		}
		fields := strings.Fields(rest)
		if headerLine == 0 {
			if len(fields) == 0 {
				return errMalform(lineNo, "%s has no counter names", p)
			}
			headerLine, header, prefix = lineNo, fields, p
			continue
		}
		if p != prefix {
			return errMalform(lineNo, "names for %s on line %d are followed by values for %s", prefix, headerLine, p)
		}
		if len(fields) != len(header) {
			return errMalform(lineNo, "%s has %d names on line %d but %d values", prefix, len(header), headerLine, len(fields))
		}
		for i, f := range fields {
			v, err := parseCounter(f)
			if err != nil {
				return errMalform(lineNo, "%s.%s value %q is not an integer", prefix, header[i], f)
			}
			c[prefix+"."+header[i]] = v
		}
		headerLine, found = 0, true
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s line %d: longer than %d bytes: is it a /proc/net/snmp or /proc/net/netstat file?", name, lineNo+1, maxCounterLine)
		}
		return fmt.Errorf("read %s: %w", name, err)
	}
	if headerLine != 0 {
		return errMalform(headerLine, "names for %s have no line of values after them", prefix)
	}
	if !found {
		return fmt.Errorf("%s: no counters in it: is it a /proc/net/snmp or /proc/net/netstat file?", name)
	}
	return nil
}

// parseCounter parses a counter as the kernel prints it: unsigned 64-bit
// for counters, signed for a few gauges (Tcp.MaxConn is -1). Values above
// the int64 range wrap, which keeps Delta right across a wrap.
func parseCounter(s string) (int64, error) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	u, err := strconv.ParseUint(s, 10, 64)
	return int64(u), err
}

// Delta returns how much each counter changed from before to c. Counters
// that only one reading has are left out. Unsigned arithmetic keeps a
// counter that wrapped around 2^64 right.
func (c NetCounters) Delta(before NetCounters) Counters {
	all := make(map[string]int64, len(c))
	for k, v := range c {
		if b, ok := before[k]; ok {
			all[k] = int64(uint64(v) - uint64(b))
		}
	}
	return Counters{
		IP: IPCounters{
			OutDiscards:  all["Ip.OutDiscards"],
			FragOKs:      all["Ip.FragOKs"],
			FragFails:    all["Ip.FragFails"],
			FragCreates:  all["Ip.FragCreates"],
			ReasmReqds:   all["Ip.ReasmReqds"],
			ReasmOKs:     all["Ip.ReasmOKs"],
			ReasmFails:   all["Ip.ReasmFails"],
			ReasmTimeout: all["Ip.ReasmTimeout"],
		},
		TCP: TCPCounters{
			InSegs:       all["Tcp.InSegs"],
			OutSegs:      all["Tcp.OutSegs"],
			RetransSegs:  all["Tcp.RetransSegs"],
			InErrs:       all["Tcp.InErrs"],
			InCsumErrors: all["Tcp.InCsumErrors"],
		},
		UDP: UDPCounters{
			InDatagrams:  all["Udp.InDatagrams"],
			InErrors:     all["Udp.InErrors"],
			RcvbufErrors: all["Udp.RcvbufErrors"],
			SndbufErrors: all["Udp.SndbufErrors"],
			InCsumErrors: all["Udp.InCsumErrors"],
		},
		TCPExt: TCPExtCounters{
			LostRetransmit:   all["TcpExt.TCPLostRetransmit"],
			FastRetrans:      all["TcpExt.TCPFastRetrans"],
			SlowStartRetrans: all["TcpExt.TCPSlowStartRetrans"],
			Timeouts:         all["TcpExt.TCPTimeouts"],
			SACKRecovery:     all["TcpExt.TCPSackRecovery"],
		},
		All: all,
	}
}
