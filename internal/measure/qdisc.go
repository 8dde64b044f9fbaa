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
