package measure

// QdiscStats are a root queueing discipline's counters at one moment, as
// the kernel keeps them (tc -s qdisc): what it sent, what it holds now,
// and what it dropped and requeued so far.
type QdiscStats struct {
	Kind         string `json:"kind"`
	SentBytes    uint64 `json:"sent_bytes"`
	SentPackets  uint64 `json:"sent_packets"`
	BacklogBytes uint64 `json:"backlog_bytes"`
	QueueLen     uint64 `json:"qlen"`
	Drops        uint64 `json:"drops"`
	Requeues     uint64 `json:"requeues"`
}

// ReadQdisc reads the root qdisc of device dev in the calling thread's
// network namespace (netlink). Linux only; elsewhere ErrUnsupported.
func ReadQdisc(dev string) (QdiscStats, error) { return readQdisc(dev) }

// NetnsQdisc reads the root qdisc of one device in another network
// namespace, one bind-mounted by name as `ip netns` does (a lab's
// router's, say), through a netlink socket opened in that namespace once:
// no thread enters it after Open. Opening needs CAP_SYS_ADMIN. Linux
// only; elsewhere Open returns ErrUnsupported.
type NetnsQdisc struct {
	Netns, Dev string
	// RateBitsPerSecond and LimitBytes are a tbf's settings as Open found
	// them; 0 for other qdiscs.
	RateBitsPerSecond uint64
	LimitBytes        uint32
	Kind              string
	h                 netnsHandle
}

// OpenNetnsQdisc opens the root qdisc of dev in the namespace netns.
func OpenNetnsQdisc(netns, dev string) (*NetnsQdisc, error) { return openNetnsQdisc(netns, dev) }

// Read returns the qdisc's counters now.
func (q *NetnsQdisc) Read() (QdiscStats, error) { return q.read() }

// Close closes the netlink socket.
func (q *NetnsQdisc) Close() { q.close() }
