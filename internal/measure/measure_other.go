//go:build !linux

package measure

// Every platform but Linux: no TCP_INFO, and no procfs for the CPU
// sampler.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

func tcpInfo(syscall.RawConn) (TCPInfo, error) { return TCPInfo{}, ErrUnsupported }

func readProcessCPU() (ProcessCPU, error) { return ProcessCPU{}, ErrUnsupported }

// statUnavailable maps an error opening /proc/stat to what callers check:
// without procfs the CPU sampler is not supported on this platform. A
// fixture tree given as the proc root still parses.
func statUnavailable(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	return err
}

func readQdisc(string) (QdiscStats, error) { return QdiscStats{}, ErrUnsupported }

// readSmall reads the file at path into buf, up to its length.
func readSmall(path string, buf []byte) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := io.ReadFull(f, buf)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

type netnsHandle = struct{}

func openNetnsQdisc(string, string) (*NetnsQdisc, error) { return nil, ErrUnsupported }
func (q *NetnsQdisc) read() (QdiscStats, error)          { return QdiscStats{}, ErrUnsupported }
func (q *NetnsQdisc) close()                             {}

func mptcpInfo(syscall.RawConn) (MPTCPInfo, error) { return MPTCPInfo{}, ErrUnsupported }
