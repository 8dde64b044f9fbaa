package control

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
)

// Authentication: HMAC-SHA256 challenge-response with a pre-shared key,
// mutual, over the hello exchange (docs/protocol.md, "Authentication").
//
//	client: hello{..., auth{scheme, nonce: Nc}}
//	server: hello{..., auth{scheme, nonce: Ns}}   or error{code: "auth"}
//	client: auth{mac: HMAC(K, transcript("client", v, Nc, Ns))}
//	server: auth_ok{mac: HMAC(K, transcript("server", v, Nc, Ns))}   or error{code: "auth"}
//
// The key never travels; each side proves it with a MAC over a transcript
// that binds both fresh nonces, the negotiated protocol version and the
// role, so a recorded proof is useless on another connection and one
// side's proof cannot be reflected as the other's.

// AuthScheme names the only authentication scheme.
const AuthScheme = "hmac-sha256"

// Message types of the authentication exchange.
const (
	TypeAuth   = "auth"
	TypeAuthOK = "auth_ok"
)

// Error codes added with authentication and limits.
const (
	CodeAuth  = "auth"  // authentication required, failed or refused
	CodeLimit = "limit" // the request is over one of the server's limits
)

// Sentinels for CodeAuth and CodeLimit.
var (
	ErrAuth  = errors.New("authentication failed")
	ErrLimit = errors.New("over a server limit")
)

// NonceLen is the length of an authentication nonce in bytes.
const NonceLen = 32

// MinKeyLen is the shortest pre-shared key accepted, in bytes.
const MinKeyLen = 16

// HandshakeMaxFrame bounds the frames a server reads before the client has
// authenticated: a hello or an auth message is a few hundred bytes (the
// longest fields are the tool's version and a host name of at most 253),
// so 4 KiB leaves ample margin, and an unauthenticated peer cannot make
// the server set aside more than that per connection.
const HandshakeMaxFrame = 4 << 10

// Nonce is one side's fresh random challenge.
type Nonce [NonceLen]byte

// NewNonce returns a fresh random nonce.
func NewNonce() Nonce {
	var n Nonce
	rand.Read(n[:]) // never fails (crypto/rand contract since Go 1.24)
	return n
}

func (n Nonce) String() string { return hex.EncodeToString(n[:]) }

// MarshalText writes the nonce in hex.
func (n Nonce) MarshalText() ([]byte, error) { return []byte(n.String()), nil }

// UnmarshalText reads a hex nonce of exactly NonceLen bytes.
func (n *Nonce) UnmarshalText(b []byte) error {
	if len(b) != 2*NonceLen {
		return fmt.Errorf("nonce must be %d hex digits", 2*NonceLen)
	}
	_, err := hex.Decode(n[:], b)
	return err
}

// AuthHello is the optional auth field of a hello: the scheme the side
// speaks and its nonce.
type AuthHello struct {
	Scheme string `json:"scheme"`
	Nonce  Nonce  `json:"nonce"`
}

// AuthProof is the body of auth and auth_ok: a MAC in hex.
type AuthProof struct {
	MAC string `json:"mac"`
}

// Roles in the authentication transcript.
const (
	RoleClient = "client"
	RoleServer = "server"
)

// transcript is what a MAC covers: a fixed label, the role, the negotiated
// version and both nonces, each of fixed length, so no two different
// inputs encode alike.
func transcript(role string, version int, client, server Nonce) []byte {
	var b bytes.Buffer
	b.WriteString("wirespeed auth v1\x00")
	b.WriteString(role)
	b.WriteByte(0)
	binary.Write(&b, binary.BigEndian, uint32(version))
	b.Write(client[:])
	b.Write(server[:])
	return b.Bytes()
}

// AuthMAC returns the proof that role knows key, for one connection.
func AuthMAC(key []byte, role string, version int, client, server Nonce) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(transcript(role, version, client, server))
	return m.Sum(nil)
}

// NewAuthProof returns role's proof as the body of an auth or auth_ok
// message.
func NewAuthProof(key []byte, role string, version int, client, server Nonce) AuthProof {
	return AuthProof{MAC: hex.EncodeToString(AuthMAC(key, role, version, client, server))}
}

// VerifyAuth checks role's proof in constant time. It returns ErrAuth when
// the proof is malformed or does not match.
func VerifyAuth(key []byte, role string, version int, client, server Nonce, p AuthProof) error {
	got, err := hex.DecodeString(p.MAC)
	if err != nil || len(got) != sha256.Size {
		return fmt.Errorf("%w: the %s's proof is not a %d-byte hex MAC", ErrAuth, role, sha256.Size)
	}
	if !hmac.Equal(got, AuthMAC(key, role, version, client, server)) {
		return fmt.Errorf("%w: the %s's proof does not match this side's pre-shared key", ErrAuth, role)
	}
	return nil
}

// CheckAuthHello reports what is wrong with a peer's auth offer.
func CheckAuthHello(a *AuthHello) error {
	switch {
	case a == nil:
		return fmt.Errorf("%w: the peer offers no authentication", ErrAuth)
	case a.Scheme != AuthScheme:
		return fmt.Errorf("%w: the peer offers scheme %q, this side speaks %s", ErrAuth, a.Scheme, AuthScheme)
	case a.Nonce == Nonce{}:
		return fmt.Errorf("%w: the peer's nonce is all zeros", ErrAuth)
	}
	return nil
}

// ParseKey turns the content of a key file into a key: surrounding
// whitespace (a trailing newline) is not part of it, and it must be at
// least MinKeyLen bytes.
func ParseKey(b []byte) ([]byte, error) {
	k := bytes.TrimSpace(b)
	if len(k) < MinKeyLen {
		return nil, fmt.Errorf("pre-shared key is %d bytes, want at least %d: make one with `openssl rand -hex 32 > FILE`", len(k), MinKeyLen)
	}
	return k, nil
}

// LoadKey reads a pre-shared key file (see ParseKey).
func LoadKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pre-shared key: %w", err)
	}
	k, err := ParseKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// SetMaxFrame changes the bound on frames read and sent from now on; 0 means
// DefaultMaxFrame. A server reads with HandshakeMaxFrame until the peer
// authenticated, then with its configured bound. Call it only while no
// other goroutine uses c.
func (c *Conn) SetMaxFrame(n int) {
	if n <= 0 {
		n = DefaultMaxFrame
	}
	c.maxFrame = n
}

// MaxFrame returns the current bound on frames read.
func (c *Conn) MaxFrame() int { return c.maxFrame }
