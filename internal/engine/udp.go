package engine

import (
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"sync/atomic"
	"syscall"
	"time"
)

// A UDP_STREAM datagram starts with a header of its own: the sequence
// number (big-endian uint64, from 0) and the sender's send time in
// nanoseconds on its own monotonic clock (big-endian uint64), which the
// receiver needs for the RFC 3550 jitter. The rest is payload. When the
// sender is done it sends a few end-of-stream datagrams whose sequence
// field is finSeq and whose time field carries how many datagrams it sent.
const (
	udpHeaderLen = 16
	finSeq       = math.MaxUint64
	maxSeq       = 1 << 62 // sequence numbers stay below; larger ones are not data
)

// finSchedule is when the end-of-stream datagram is sent, after the last
// data datagram: repeated because datagrams get lost, most of all on the
// congested link a sender has just been flooding.
var finSchedule = []time.Duration{0, 5 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond}

// udpBatch is how many datagram buffers a UDP loop keeps, and so how many
// datagrams one sendmmsg/recvmmsg moves at most (MaxUDPBatch).
const udpBatch = 64

// MaxUDPBatch is the most datagrams a UDP_STREAM sender hands the kernel
// in one call (SetSendBatch), or a receiver takes (SetRecvBatch).
const MaxUDPBatch = udpBatch

// UDPSender sends datagrams of a fixed size on a connected UDP socket,
// paced to a rate or as fast as the socket takes them.
type UDPSender struct {
	base
	streamSocket
	conn    *net.UDPConn
	rc      syscall.RawConn
	payload *Payload
	size    int
	rate    float64 // payload bits per second; 0 for as fast as possible
	epoch   time.Time
	hdr     udpFormat // datagram header
	gso     int       // UDP_SEGMENT datagram size (SetGSO); 0 for one datagram per send
	// batch is how many sends one system call makes (SetSendBatch): 1,
	// the default, for one write(2) per datagram, as netperf's -m means;
	// more through sendmmsg(2).
	batch int
	limit uint64 // datagrams to send before Run returns by itself (SetLimit); 0 for no limit
}

// SetLimit makes Run return once datagrams have been sent; 0 or less
// sends until Stop. Call it before Run. With GSO the last send may make
// up to a send's datagrams more.
func (s *UDPSender) SetLimit(datagrams int64) { s.limit = uint64(max(datagrams, 0)) }

// capToLimit cuts n sends of per datagrams each, seq datagrams sent so
// far, to what the limit leaves; done when nothing is left.
func (s *UDPSender) capToLimit(n int, seq, per uint64) (int, bool) {
	if s.limit == 0 {
		return n, false
	}
	if seq >= s.limit {
		return 0, true
	}
	return int(min(uint64(n), (s.limit-seq+per-1)/per)), false
}

// nextSends waits until the pace allows a send, and returns how many
// sends of per datagrams each the loop makes now, seq datagrams sent so
// far: at most a batch, cut to the limit. It returns false when the loop
// is to end: stopped, or the limit sent. All three send loops take their
// step from it.
func (s *UDPSender) nextSends(start time.Time, seq, per uint64) (int, bool) {
	for !s.stopped() {
		n, next := s.due(start, seq/per)
		n, done := s.capToLimit(n, seq, per)
		if done {
			return 0, false
		}
		if n > 0 {
			return n, true
		}
		if !s.sleepUntil(next) {
			return 0, false
		}
	}
	return 0, false
}

// NewUDPSender returns the sending loop for the connected socket c.
// rateBPS is payload bits per second, 0 for unpaced. opts choose the
// datagram header (Iperf3Header); the default is wirespeed's.
func NewUDPSender(c *net.UDPConn, p *Payload, size int, rateBPS float64, opts ...UDPOption) (*UDPSender, error) {
	if size < udpHeaderLen || size > p.max {
		return nil, fmt.Errorf("datagram size %d outside %d..%d", size, udpHeaderLen, p.max)
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("data socket: %w", err)
	}
	u := &UDPSender{base: newBase(wakeConn(c)), conn: c, rc: rc, payload: p, size: size, rate: rateBPS, epoch: time.Now(), hdr: udpFormatOf(opts), batch: 1}
	u.streamSocket.init(c, rc)
	return u, nil
}

// datagramSize is the payload bytes of each datagram on the wire: the
// GSO size when the kernel cuts the sends.
func (s *UDPSender) datagramSize() int {
	if s.gso > 0 {
		return s.gso
	}
	return s.size
}

// Run sends until Stop or a failure. Counters.Packets is the number of
// datagrams sent, which is also the next sequence number.
func (s *UDPSender) Run() error {
	err := s.send()
	if s.stopped() {
		return nil
	}
	return err
}

// SetSendBatch makes the sender hand the kernel n sends per system call
// through sendmmsg(2), instead of the default one write(2) per datagram
// (n = 1). A batch is a different measurement: the cost per datagram
// drops by the system calls it saves, so it is a named option, recorded
// with the result. n is 1..MaxUDPBatch. Call before Run.
func (s *UDPSender) SetSendBatch(n int) error {
	switch {
	case n < 1 || n > MaxUDPBatch:
		return fmt.Errorf("send batch %d outside 1..%d datagrams per call", n, MaxUDPBatch)
	case n > 1 && !haveMmsg:
		return fmt.Errorf("send batch %d: %w", n, errNoPlatform)
	}
	s.batch = n
	return nil
}

// due returns how many sends the pace allows now, at most one batch,
// given sent so far, and when the next one is due if none is.
func (s *UDPSender) due(start time.Time, sent uint64) (int, time.Time) {
	if s.rate <= 0 {
		return s.batch, time.Time{}
	}
	perNs := s.rate / float64(s.size*8) / 1e9 // datagrams per nanosecond
	allowed := uint64(float64(time.Since(start))*perNs) + 1
	if allowed <= sent {
		return 0, start.Add(paceStep(float64(sent) / perNs))
	}
	return int(min(allowed-sent, uint64(s.batch))), time.Time{}
}

// segments is how many datagrams one send makes: 1, or with GSO the send
// size cut into datagrams of s.gso bytes, the last one shorter.
func (s *UDPSender) segments() int {
	if s.gso <= 0 {
		return 1
	}
	return (s.size + s.gso - 1) / s.gso
}

// Send times. RFC 3550's jitter is the variation of the transit time,
// arrival minus the packet's send timestamp. wirespeed measures the path,
// so a datagram's send time is when it was handed to the kernel, as
// iperf3's is (gettimeofday just before its write). By default that is one
// clock read per datagram, just before its own write(2). With a send batch
// (SetSendBatch) every datagram of one sendmmsg, and with GSO every
// segment of one send, gets the one clock read taken as the batch goes to
// the kernel, which hands them to the network together. Stamping them with
// the times the pacing schedule made them due instead would report the
// sender's own batching as path jitter: on a 100 Mbit/s tbf link at 50
// Mbit/s, 4.2 datagrams a call due 224 us apart read 0.33 ms of jitter
// where iperf3 read 0.01-0.02 ms. The spacing the issue asked to see is
// the receiver's: each datagram's kernel receive stamp (rxstamp_linux.go)
// shows how the path spread a batch out.

// stampBatch writes the headers of the sends bufs about to go out in one
// batch, the first numbered seq, each per datagrams long (GSO), all sent
// at now nanoseconds after s.epoch.
func (s *UDPSender) stampBatch(bufs [][]byte, seq, per uint64, now int64) {
	for i, buf := range bufs {
		s.stamp(buf, seq+uint64(i)*per, uint64(now))
	}
}

// stamp writes the header of every datagram of one send: sequence numbers
// from seq on, all sent at at nanoseconds after s.epoch.
func (s *UDPSender) stamp(buf []byte, seq, at uint64) {
	step := len(buf)
	if s.gso > 0 {
		step = s.gso
	}
	for off := 0; off < len(buf); off += step {
		s.hdr.stamp(buf[off:], seq, at)
		seq++
	}
}

// Finish sends the end-of-stream datagrams, telling the receiver how many
// datagrams were sent. iperf3's format has none.
func (s *UDPSender) Finish() error {
	if s.hdr != formatWirespeed {
		return nil
	}
	var b [udpHeaderLen]byte
	binary.BigEndian.PutUint64(b[:8], finSeq)
	binary.BigEndian.PutUint64(b[8:], uint64(s.ctr.packets.Load()))
	start := time.Now()
	for _, at := range finSchedule {
		sleepUntil(start.Add(at), nil)
		// The socket may be the loop's own now (takeRaw): write through
		// whichever is in use. A lost one is what the repeats are for.
		s.raw().Control(func(fd uintptr) { writeNonblocking(int(fd), b[:]) })
	}
	return nil
}

// Info reads the socket's buffer sizes.
func (s *UDPSender) Info() (SocketInfo, error) { return rawInfo(s.raw(), false) }

// UDPReceiver receives datagrams on a connected UDP socket, tracking their
// sequence numbers (loss, reordering, duplicates) and the jitter, until
// the sender's end-of-stream datagram.
type UDPReceiver struct {
	base
	follow
	streamSocket
	conn  *net.UDPConn
	rc    syscall.RawConn
	size  int
	epoch time.Time
	// epochWall is epoch on the wall clock, in ns since 1970: the kernel's
	// receive timestamps are on that clock (rxstamp_linux.go).
	epochWall int64
	// stamps is whether the kernel stamps each datagram's arrival
	// (SO_TIMESTAMPNS); without, one clock read per receive batch.
	stamps bool
	mark   atomic.Bool // MarkWindow asked the loop to note the window's first sequence number
	tr     seqTracker
	fin    int64 // datagrams the sender says it sent; -1 until its end of stream
	// hdr is the datagram header format.
	hdr udpFormat
	gro bool // UDP_GRO is on (EnableGRO)
	// batch is how many datagrams one receive call may take
	// (SetRecvBatch): 1 for one datagram per call, as netperf and iperf3
	// receive; more through recvmmsg(2).
	batch int
	// calls and bytes are the loop's own counts of receive calls and of
	// bytes received: they are published once a call (publish), each
	// only when it changed, since every store is a locked instruction.
	calls, bytes int64
}

// NewUDPReceiver returns the receiving loop for the connected socket c,
// for datagrams of up to size bytes. opts choose the datagram header
// (Iperf3Header); the default is wirespeed's.
func NewUDPReceiver(c *net.UDPConn, size int, opts ...UDPOption) (*UDPReceiver, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("data socket: %w", err)
	}
	r := &UDPReceiver{base: newBase(wakeConn(c)), follow: newFollow(), conn: c, rc: rc, size: max(size, udpHeaderLen), epoch: time.Now(), tr: newSeqTracker(), fin: -1, hdr: udpFormatOf(opts), batch: DefaultRecvBatch}
	r.epochWall = r.epoch.UnixNano()
	r.streamSocket.init(c, rc)
	// Now, not when Run starts: datagrams that arrive before then are
	// stamped when they arrive too. Without the option (not Linux) the
	// loop reads the clock per batch instead.
	r.stamps = r.enableRxStamps() == nil
	return r, nil
}

// SetKernelStamps chooses how the receiver times each datagram's arrival:
// on (the default where the kernel has SO_TIMESTAMPNS), by the kernel's
// receive timestamp, taken as the datagram entered the host's receive
// path, whenever the loop reads it; off, by one clock read per receive
// call, as the loop gets the datagram, which with one datagram per call
// (the default batch) is one read per datagram and then also receives
// with recvfrom(2), without the control messages. Call before Run.
func (r *UDPReceiver) SetKernelStamps(on bool) error {
	if on == r.stamps {
		return nil
	}
	if on {
		if err := r.enableRxStamps(); err != nil {
			return fmt.Errorf("kernel receive timestamps: %w", err)
		}
	} else if err := r.disableRxStamps(); err != nil {
		return fmt.Errorf("kernel receive timestamps off: %w", err)
	}
	r.stamps = on
	return nil
}

// KernelStamps reports whether the receiver times datagrams by the
// kernel's receive timestamps (SetKernelStamps).
func (r *UDPReceiver) KernelStamps() bool { return r.stamps }

// DefaultRecvBatch is how many datagrams a UDP_STREAM receiver takes per
// call unless told otherwise (SetRecvBatch).
const DefaultRecvBatch = 1

// SetRecvBatch makes the receiver take up to n datagrams per system call
// (recvmmsg(2) with MSG_WAITFORONE: it waits for the first and takes what
// else has arrived), n in 1..MaxUDPBatch. Call before Run.
func (r *UDPReceiver) SetRecvBatch(n int) error {
	switch {
	case n < 1 || n > MaxUDPBatch:
		return fmt.Errorf("receive batch %d outside 1..%d datagrams per call", n, MaxUDPBatch)
	case n > 1 && !haveMmsg:
		return fmt.Errorf("receive batch %d: %w", n, errNoPlatform)
	}
	r.batch = n
	return nil
}

// Run receives until the sender's end of stream, Stop or a failure.
func (r *UDPReceiver) Run() error {
	err := r.receive()
	if r.stopped() || r.Ended() {
		return nil
	}
	return err
}

// UDPWindowLoop is a loop that counts datagrams against the sequence
// numbers of the measurement window (UDPReceiver).
type UDPWindowLoop interface {
	Loop
	WindowMarker
	// Window is what it counted; valid after Run returned.
	Window() UDPWindow
	// WholeStream is what it counted over the whole stream, whatever
	// the window; valid after Run returned.
	WholeStream() UDPWindow
}

// MarkWindow makes the loop note, at its next datagram, the sequence
// number the measurement window starts from. Datagrams with a lower one
// that arrive later are not counted as the window's.
func (r *UDPReceiver) MarkWindow() { r.mark.Store(true) }

// UDPWindow is what a receiver counted against the sequence numbers of the
// window, valid after Run returned.
type UDPWindow struct {
	// First is the first sequence number of the window: the next one
	// expected when it opened.
	First uint64
	// Unique is how many distinct datagrams numbered First or later
	// arrived, up to the end of stream: late ones included.
	Unique int64
	// SenderTotal is how many datagrams the sender said it sent; -1 when
	// its end of stream never arrived.
	SenderTotal int64
}

// Window returns the window's sequence accounting; call after Run.
func (r *UDPReceiver) Window() UDPWindow {
	return UDPWindow{First: r.tr.winFirst, Unique: r.tr.winUnique, SenderTotal: r.fin}
}

// WholeStream returns the sequence accounting of every datagram of the
// stream, from the sender's first (number 0): for a window that opened
// only after the stream had ended and so holds none of it; call after Run.
func (r *UDPReceiver) WholeStream() UDPWindow {
	return UDPWindow{First: 0, Unique: r.tr.unique, SenderTotal: r.fin}
}

// handle processes one received datagram that arrived at now (ns on this
// side's clock). timed is false for a datagram with no arrival time of its
// own (the second and later of a buffer UDP_GRO joined): it is counted but
// gives the jitter no sample. It returns false at the end-of-stream
// datagram.
func (r *UDPReceiver) handle(b []byte, now int64, timed bool) bool {
	if r.hdr != formatWirespeed {
		return r.handleIperf3(b, now, timed)
	}
	if len(b) < udpHeaderLen {
		return true // not ours: the socket is connected, so only a broken sender sends these
	}
	seq := binary.BigEndian.Uint64(b[:8])
	sent := binary.BigEndian.Uint64(b[8:16])
	if seq == finSeq {
		r.fin = int64(sent)
		return false
	}
	if seq >= maxSeq {
		// Not a data datagram: a late copy of the stream's data header,
		// whose first bytes read as an enormous sequence number.
		return true
	}
	r.bytes += int64(len(b))
	if timed {
		r.tr.add(seq, now-int64(sent))
	} else {
		r.tr.addUntimed(seq)
	}
	return true
}

// publish copies the loop's counts and the tracker's to the atomic
// counters, those that changed since the last time: a datagram in order
// changes the calls, bytes, datagrams and, mostly, the jitter, not the
// loss, reordering or duplicates. Only this loop stores to them, so what
// they hold is what it stored last.
func (r *UDPReceiver) publish() {
	t := &r.tr
	pubInt(&r.ctr.calls, r.calls)
	pubInt(&r.ctr.bytes, r.bytes)
	pubInt(&r.ctr.packets, t.unique)
	pubInt(&r.ctr.lost, t.lost)
	pubInt(&r.ctr.ooo, t.ooo)
	pubInt(&r.ctr.dup, t.dup)
	pubUint(&r.ctr.jitter, math.Float64bits(t.jitter))
}

// pubInt stores v in c unless c holds it already: a load is a plain
// read, a store a locked instruction.
func pubInt(c *atomic.Int64, v int64) {
	if c.Load() != v {
		c.Store(v)
	}
}

// pubUint is pubInt for an atomic.Uint64 (the jitter's float64 bits).
func pubUint(c *atomic.Uint64, v uint64) {
	if c.Load() != v {
		c.Store(v)
	}
}

// Ended reports whether the receiver got the sender's end-of-stream
// datagram.
func (r *UDPReceiver) Ended() bool { return r.ended.Load() }

// Info reads the socket's buffer sizes.
func (r *UDPReceiver) Info() (SocketInfo, error) { return rawInfo(r.raw(), false) }

// seqWindow is how many sequence numbers behind the highest seen a
// receiver still tells a late datagram from a duplicate.
const seqWindow = 1 << 20

// seqTracker counts datagrams by sequence number: missing ones (a gap
// counts as lost until the late datagram fills it), out-of-order and
// duplicate ones, and the RFC 3550 jitter of their transit times.
type seqTracker struct {
	next   uint64   // the next sequence number expected
	seen   []uint64 // bit per sequence number in [next-seqWindow, next), as a ring
	unique int64
	lost   int64
	ooo    int64
	dup    int64

	jitter      float64 // nanoseconds
	lastTransit int64
	haveTransit bool

	marked    bool
	winFirst  uint64
	winUnique int64
}

func newSeqTracker() seqTracker { return seqTracker{seen: make([]uint64, seqWindow/64)} }

func (t *seqTracker) bit(seq uint64) (int, uint64) {
	i := seq % seqWindow
	return int(i / 64), 1 << (i % 64)
}

// markWindow opens the window at the next expected sequence number.
func (t *seqTracker) markWindow() {
	t.marked = true
	t.winFirst = t.next
	t.winUnique = 0
}

// add counts datagram seq whose transit time (arrival minus send, on two
// unrelated clocks) was transit nanoseconds.
func (t *seqTracker) add(seq uint64, transit int64) {
	if !t.place(seq) {
		return
	}
	// RFC 3550 section 6.4.1: J += (|D| - J) / 16, D the change in transit
	// from the datagram that arrived before, whatever its number.
	if t.haveTransit {
		d := float64(transit - t.lastTransit)
		t.jitter += (math.Abs(d) - t.jitter) / 16
	}
	t.lastTransit, t.haveTransit = transit, true
}

// addUntimed counts datagram seq, which has no arrival time of its own:
// the jitter's next sample is taken against the last timed datagram.
func (t *seqTracker) addUntimed(seq uint64) { t.place(seq) }

// place counts datagram seq by its number and reports whether it is a
// sample for the jitter: not a duplicate, nor too old to place.
func (t *seqTracker) place(seq uint64) bool {
	switch {
	case seq >= t.next:
		// Forget what the ring held for the numbers now skipped over.
		if gap := seq - t.next; gap >= seqWindow {
			clear(t.seen)
		} else {
			t.forget(t.next, seq)
		}
		t.lost += int64(seq - t.next)
		t.next = seq + 1
	case t.next-seq > seqWindow:
		// Too old to tell from a duplicate: take it as a late arrival.
		t.ooo++
		t.lost--
		t.count(seq)
		return false
	default:
		w, m := t.bit(seq)
		if t.seen[w]&m != 0 {
			t.dup++
			return false
		}
		t.ooo++
		t.lost--
	}
	w, m := t.bit(seq)
	t.seen[w] |= m
	t.count(seq)
	return true
}

// forget clears the ring's bits for the sequence numbers from..to-1,
// fewer than seqWindow of them. A hostile peer can make every datagram
// skip seqWindow-1 numbers, so the whole words in between are cleared at
// once, and only the words at the two ends bit by bit: at most one
// memset of the ring per datagram.
func (t *seqTracker) forget(from, to uint64) {
	a := from % seqWindow
	b := a + (to - from)
	if b <= seqWindow {
		t.clearBits(a, b)
		return
	}
	// The range wraps past the end of the ring.
	t.clearBits(a, seqWindow)
	t.clearBits(0, b-seqWindow)
}

// clearBits clears the ring's bits a..b-1, 0 <= a <= b <= seqWindow.
func (t *seqTracker) clearBits(a, b uint64) {
	if a >= b {
		return
	}
	wa, wb := a/64, b/64
	lo := ^uint64(0) << (a % 64) // bits a%64..63 of word wa
	hi := uint64(1)<<(b%64) - 1  // bits 0..b%64-1 of word wb
	if wa == wb {
		t.seen[wa] &^= lo & hi
		return
	}
	t.seen[wa] &^= lo
	clear(t.seen[wa+1 : wb])
	if hi != 0 {
		t.seen[wb] &^= hi
	}
}

func (t *seqTracker) count(seq uint64) {
	t.unique++
	if t.marked && seq >= t.winFirst {
		t.winUnique++
	}
}
