package cli

import (
	"log/slog"

	"github.com/spf13/pflag"

	"wirespeed/internal/control"
	"wirespeed/internal/server"
)

// serveRelayFlags are the flags of `wirespeed serve` for third-party
// tests: whether the server runs tests against other servers for its
// clients, toward which, and with which key.
type serveRelayFlags struct {
	allow   bool
	peers   []string
	pskFile string
}

func (f *serveRelayFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&f.allow, "allow-relay", false, "run third-party tests: an authenticated client may ask this server to test against a peer in --relay-peers (needs --psk-file)")
	fl.StringSliceVar(&f.peers, "relay-peers", nil, "`PEERS` a relayed test may be toward: addresses, CIDR prefixes (10.0.0.0/8) and host names (a headless service), comma-separated or repeated")
	fl.StringVar(&f.pskFile, "relay-psk-file", "", "pre-shared key `FILE` to prove to relay peers (default: the --psk-file key)")
}

// config checks the flags against the security settings and returns the
// server's relay configuration. Every problem is a usage error.
func (f *serveRelayFlags) config(auth server.Auth) (server.RelayConfig, error) {
	var rc server.RelayConfig
	if !f.allow {
		if len(f.peers) > 0 || f.pskFile != "" {
			return rc, usagef("--relay-peers and --relay-psk-file need --allow-relay")
		}
		return rc, nil
	}
	if auth.PSK == nil {
		return rc, usagef("--allow-relay needs --psk-file: relaying for clients that did not prove a key would let anyone who reaches the port make this server send traffic")
	}
	peers, err := server.ParseRelayPeers(f.peers)
	if err != nil {
		return rc, usagef("--relay-peers: %v", err)
	}
	if peers.Empty() {
		return rc, usagef("--allow-relay needs --relay-peers: name the peers (addresses, CIDR prefixes or host names) a relayed test may be toward")
	}
	rc = server.RelayConfig{Allow: true, Peers: peers}
	if f.pskFile != "" {
		if rc.PSK, err = control.LoadKey(f.pskFile); err != nil {
			return rc, usagef("--relay-psk-file: %v", err)
		}
	}
	return rc, nil
}

// logStart says at start which peers the server relays to.
func (f *serveRelayFlags) logStart(log *slog.Logger, rc server.RelayConfig) {
	if rc.Allow {
		log.Info("third-party tests allowed for authenticated clients", "relay_peers", rc.Peers.String(), "relay_key", map[bool]string{true: "relay-psk-file", false: "psk-file"}[rc.PSK != nil])
	}
}
