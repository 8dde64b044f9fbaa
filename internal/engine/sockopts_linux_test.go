//go:build !wirespeed_portable

package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestTOSReceived sends a datagram from a socket DialUDP made with
// Options.TOS, over IPv4 and IPv6 loopback, and reads the TOS byte (the
// traffic class over IPv6) the receiver's kernel reports in a control
// message (IP_RECVTOS, IPV6_RECVTCLASS).
func TestTOSReceived(t *testing.T) {
	for _, tt := range []struct {
		network, host string
	}{{"udp4", "127.0.0.1"}, {"udp6", "::1"}} {
		for _, tos := range []int{0xb8, 0x28, 0} {
			t.Run(fmt.Sprintf("%s/tos=%#x", tt.network, tos), func(t *testing.T) {
				rc, err := net.ListenUDP(tt.network, &net.UDPAddr{IP: net.ParseIP(tt.host)})
				if err != nil {
					t.Skipf("no %s loopback: %v", tt.network, err)
				}
				defer rc.Close()
				raw, _ := rc.SyscallConn()
				v6 := tt.network == "udp6"
				raw.Control(func(fd uintptr) {
					if v6 {
						err = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVTCLASS, 1)
					} else {
						err = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1)
					}
				})
				if err != nil {
					t.Fatal(err)
				}
				c, err := DialUDP(context.Background(), tt.network, rc.LocalAddr().String(), Options{TOS: tos})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if _, err := c.Write([]byte("x")); err != nil {
					t.Fatal(err)
				}
				rc.SetReadDeadline(time.Now().Add(2 * time.Second))
				buf, oob := make([]byte, 16), make([]byte, 128)
				_, oobn, _, _, err := rc.ReadMsgUDP(buf, oob)
				if err != nil {
					t.Fatal(err)
				}
				got := -1
				msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range msgs {
					switch {
					case !v6 && m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_TOS && len(m.Data) >= 1:
						got = int(m.Data[0])
					case v6 && m.Header.Level == unix.IPPROTO_IPV6 && m.Header.Type == unix.IPV6_TCLASS && len(m.Data) >= 4:
						got = int(int32(binary.NativeEndian.Uint32(m.Data)))
					}
				}
				if got != tos {
					t.Errorf("receiver's kernel reports TOS %#x, want %#x", got, tos)
				}
			})
		}
	}
}

// TestDatagramTooBigMessage: the numbers a user needs, worked out by
// hand for a 1280-byte MTU: 1280-28 = 1252 over IPv4, 1280-48 = 1232
// over IPv6.
func TestDatagramTooBigMessage(t *testing.T) {
	e := &DatagramTooBigError{Size: 1400, PathMTU: 1280, Header: 28, DontFragment: true}
	for _, want := range []string{"1400 bytes", "path MTU of 1280 bytes", "-m 1252", "--dont-fragment"} {
		if !strings.Contains(e.Error(), want) {
			t.Errorf("%q lacks %q", e.Error(), want)
		}
	}
	if !errors.Is(e, syscall.EMSGSIZE) {
		t.Error("not an EMSGSIZE to errors.Is")
	}
	e6 := &DatagramTooBigError{Size: 1400, PathMTU: 1280, Header: 48}
	if !strings.Contains(e6.Error(), "-m 1232") || strings.Contains(e6.Error(), "--dont-fragment") {
		t.Errorf("IPv6 without the option: %q", e6.Error())
	}
}

// TestBindLocalPort: a socket Dial made with LocalAddr and LocalPort
// leaves from them, and the same port serves again at once.
func TestBindLocalPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	probe, err := net.Listen("tcp", "127.0.0.3:0")
	if err != nil {
		t.Skipf("cannot bind 127.0.0.3: %v", err)
	}
	port := probe.Addr().(*net.TCPAddr).Port
	probe.Close()
	want := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.3"), uint16(port))
	for i := range 2 {
		c, err := Dial(context.Background(), "tcp", ln.Addr().String(), Options{LocalAddr: want.Addr(), LocalPort: port})
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		if got := s.RemoteAddr().(*net.TCPAddr).AddrPort(); got != want {
			t.Errorf("dial %d: the listener saw %s, want %s", i, got, want)
		}
		// The client closes first: its end waits in TIME_WAIT.
		c.Close()
		time.Sleep(50 * time.Millisecond)
		s.Close()
	}
}
