//go:build !linux

package engine

// The data path options exist on Linux only; elsewhere they say so.

func notSupported(error) bool { return false }

// zeroCopy is the MSG_ZEROCOPY state, Linux only.
type zeroCopy struct{}

// UseSendfile is Linux only.
func (s *TCPSender) UseSendfile() error { return errNoPlatform }

// UseMsgZeroCopy is Linux only.
func (s *TCPSender) UseMsgZeroCopy() error { return errNoPlatform }

func (s *TCPSender) awaitCompletions() {}

// UseSplice is Linux only.
func (r *TCPReceiver) UseSplice() error { return errNoPlatform }

// UseDiscard is Linux only.
func (r *TCPReceiver) UseDiscard() error { return errNoPlatform }

// SetPacingRate is Linux only.
func SetPacingRate(Socket, uint64) (uint64, error) { return 0, errNoPlatform }

// SetBusyPoll is Linux only.
func SetBusyPoll(Socket, int) (int, error) { return 0, errNoPlatform }

// SetBusyPoll is Linux only.
func (sh *CRRShared) SetBusyPoll(int) (int, error) { return 0, errNoPlatform }

// NAPIID is Linux only.
func NAPIID(Socket) (int, error) { return 0, errNoPlatform }

// SetGSO is Linux only.
func (s *UDPSender) SetGSO(int) error { return errNoPlatform }

// EnableGRO is Linux only.
func (r *UDPReceiver) EnableGRO() error { return errNoPlatform }

// Pin is Linux only.
func Pin(int) (Pinning, func(), error) { return Pinning{}, nil, errNoPlatform }

// CheckCPU is Linux only.
func CheckCPU(int) error { return errNoPlatform }

// Support is what the kernel grants of the data path's socket options;
// elsewhere than Linux, none.
type Support struct {
	MsgZeroCopy bool
	UDPGSO      bool
	UDPGRO      bool
}

// ProbeSupport is Linux only: elsewhere the options do not exist.
func ProbeSupport() (Support, error) { return Support{}, nil }

// ProbeBusyPoll is Linux only.
func ProbeBusyPoll(int) (int, error) { return 0, errNoPlatform }
