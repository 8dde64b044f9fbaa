// Package measure owns the samplers and the records they fill: TCP_INFO of
// a socket (ReadTCPInfo, TCPInfo), CPU time system-wide and per CPU from
// /proc/stat and this process's from getrusage (CPU, ServiceDemand), the
// CPU time of this process's threads and of other processes from
// /proc/PID/stat and schedstat (TaskCPU, for what limited a run), and the
// kernel's protocol counters from /proc/net/snmp and /proc/net/netstat
// (Counters). It is the only package that knows procfs paths: samplers take
// the proc root as a parameter (DefaultProcRoot on a live host, a fixture
// tree under testdata/ in tests), as node_exporter's --path.procfs does.
package measure
