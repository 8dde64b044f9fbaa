package control

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"unicode"
	"unicode/utf8"

	"wirespeed/internal/peertext"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// Third-party tests (docs/protocol.md, "Relay"): an authenticated client
// asks server A to run a test against server B, with A as B's client,
// and gets the joined result back.
//
//	client: relay{peer: "B:7575", spec, source?, destination?}
//	A:      (dials B, authenticates, runs the test as B's client)
//	A:      relay_result{result}   or error{relay_refused | relay_failed | busy | limit | auth | ...}
//
// A runs a relay only when it was started with --allow-relay, toward a
// peer its --relay-peers allows, for a client that proved the pre-shared
// key: an unauthenticated relay would make A an open proxy for traffic.

// Message types of a relay.
const (
	TypeRelay       = "relay"
	TypeRelayResult = "relay_result"
)

// Error codes of a relay.
const (
	// CodeRelayRefused: the server does not relay (no --allow-relay), or
	// not toward that peer (--relay-peers). The session goes on.
	CodeRelayRefused = "relay_refused"
	// CodeRelayFailed: the server could not reach the peer, or the test
	// against it failed; the message says why. A peer's own refusal (busy,
	// limit, auth, version, invalid_spec) is passed on with its code.
	CodeRelayFailed = "relay_failed"
)

// Sentinels for the relay codes.
var (
	ErrRelayRefused = errors.New("relay refused")
	ErrRelayFailed  = errors.New("relay failed")
)

// Bounds of a relay request's strings.
const (
	MaxPeerLen  = 261 // a 253-byte DNS name, a colon and a port, or [IPv6]:port
	MaxLabelLen = 128
)

// RelayRequest is the body of a relay message.
type RelayRequest struct {
	// Peer is the server to test against, HOST:PORT (IPv6 in brackets).
	Peer string `json:"peer"`
	// Spec is the test, every default filled in, as in a test message.
	// The relaying server is its client: "local" in the result is the
	// relaying server, "remote" the peer.
	Spec spec.Test `json:"spec"`
	// Source and Destination are the names the requester gives the two
	// servers (its --peers entries), used as the labels of the relaying
	// server's pair metrics. Optional; at most MaxLabelLen printable
	// characters each.
	Source      string `json:"source,omitempty"`
	Destination string `json:"destination,omitempty"`
}

// RelayResult is the body of a relay_result message: the result the
// relaying server's client joined from both sides, as `wirespeed run`
// would have made it there.
type RelayResult struct {
	Result result.Result `json:"result"`
}

// DecodeRelayRequest decodes and checks a relay message: the peer is a
// HOST:PORT, the labels are short and printable, the spec is valid. It
// does not decide whether the peer is allowed.
func DecodeRelayRequest(m Message) (RelayRequest, error) {
	var r RelayRequest
	// Raw: its checks refuse control characters in the peer and labels
	// rather than accept them escaped.
	if err := m.decodeRaw(&r); err != nil {
		return r, err
	}
	if err := CheckRelayPeer(r.Peer); err != nil {
		return r, fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	for _, l := range []string{r.Source, r.Destination} {
		if err := checkLabel(l); err != nil {
			return r, fmt.Errorf("%w: %v", ErrProtocol, err)
		}
	}
	if err := r.Spec.Validate(); err != nil {
		return r, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	peertext.Scrub(&r)
	return r, nil
}

// CheckRelayPeer checks that peer is HOST:PORT with a host and a port
// from 1 to 65535.
func CheckRelayPeer(peer string) error {
	if len(peer) > MaxPeerLen {
		return fmt.Errorf("relay peer is %d bytes long, at most %d", len(peer), MaxPeerLen)
	}
	h, p, err := net.SplitHostPort(peer)
	if err != nil {
		return fmt.Errorf("relay peer %q: %v", peer, err)
	}
	if h == "" {
		return fmt.Errorf("relay peer %q has no host", peer)
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("relay peer %q: port must be a number from 1 to 65535", peer)
	}
	for _, r := range h {
		if r > unicode.MaxASCII || !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '-' || r == ':' || r == '_' || r == '%') {
			return fmt.Errorf("relay peer %q: the host may hold only letters, digits, '.', '-', '_', ':' and '%%'", peer)
		}
	}
	return nil
}

func checkLabel(l string) error {
	if len(l) > MaxLabelLen {
		return fmt.Errorf("relay label is %d bytes long, at most %d", len(l), MaxLabelLen)
	}
	if !utf8.ValidString(l) {
		return fmt.Errorf("relay label %q is not UTF-8", l)
	}
	for _, r := range l {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("relay label %q holds a non-printable character", l)
		}
	}
	return nil
}
