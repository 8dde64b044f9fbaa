package client

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"wirespeed/internal/control"
	"wirespeed/internal/endpoint"
	"wirespeed/internal/engine"
	"wirespeed/internal/spec"
)

// udpProveTimeout bounds the data header exchange of one UDP stream;
// udpProveRetry is how often the header is sent again meanwhile.
const (
	udpProveTimeout = 5 * time.Second
	udpProveRetry   = 100 * time.Millisecond
)

// dialUDP opens a connected UDP socket per stream and proves the test's
// token on it: it sends the data header until the server acknowledges.
// Only then does the server send anything to this socket.
func (c *Client) dialUDP(ctx context.Context, t spec.Test, acc control.Accepted) ([]endpoint.Conn, error) {
	streams := t.Streams()
	if len(acc.UDPPorts) != len(streams) {
		return nil, fmt.Errorf("%w: server gave %d UDP ports for %d streams", control.ErrProtocol, len(acc.UDPPorts), len(streams))
	}
	network := "udp"
	switch c.network {
	case "tcp4":
		network = "udp4"
	case "tcp6":
		network = "udp6"
	}
	var conns []endpoint.Conn
	for i, st := range streams {
		addr := net.JoinHostPort(c.serverIP(), strconv.Itoa(acc.UDPPorts[i]))
		uc, err := engine.DialUDP(ctx, network, addr, engine.ClientOptions(t, st))
		if err != nil {
			endpoint.CloseAll(conns)
			return nil, fmt.Errorf("UDP stream %d to %s: %w", st.ID, addr, err)
		}
		conns = append(conns, endpoint.Conn{ID: st.ID, Dir: st.Dir, Conn: uc})
		if err := proveUDP(ctx, uc, acc.Token, st.ID); err != nil {
			endpoint.CloseAll(conns)
			return nil, fmt.Errorf("UDP stream %d to %s: %w", st.ID, addr, err)
		}
	}
	return conns, nil
}

func proveUDP(ctx context.Context, uc *net.UDPConn, tok control.Token, id int) error {
	hdr := control.DataHeader(tok, id)
	buf := make([]byte, 64)
	deadline := time.Now().Add(udpProveTimeout)
	defer uc.SetDeadline(time.Time{})
	for time.Now().Before(deadline) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if _, err := uc.Write(hdr); err != nil {
			// An ICMP unreachable for an earlier try; try again.
			time.Sleep(udpProveRetry)
			continue
		}
		uc.SetReadDeadline(time.Now().Add(udpProveRetry))
		for {
			n, err := uc.Read(buf)
			if err != nil {
				break
			}
			if control.IsDataAck(buf[:n], tok, id) {
				return nil
			}
		}
	}
	return fmt.Errorf("no acknowledgement of the data header within %v: a firewall may drop UDP to the server's data ports", udpProveTimeout)
}
