package control

import (
	"errors"
	"slices"
	"wirespeed/internal/netconf"
	"wirespeed/internal/sysinfo"
)

// Messages about the server's host, sent between tests (see
// docs/protocol.md, "The server's host: env and netconf").
const (
	// TypeEnv asks the server for its environment record, collected
	// afresh; the server answers with an env message carrying EnvReply.
	TypeEnv = "env"
	// TypeNetconf asks the server to check, change, restore or keep the
	// settings of one of its devices (NetconfRequest); it answers with
	// TypeNetconfDone (NetconfReply) or an error.
	TypeNetconf     = "netconf"
	TypeNetconfDone = "netconf_done"
)

// Error codes of the netconf messages.
const (
	// CodeForbidden: the server does not let this session change its
	// devices: it was not started with --allow-netconf, or the session is
	// not authenticated.
	CodeForbidden = "forbidden"
	// CodeNetconf: the change could not be made or checked; the message
	// says why (no such device, a fixed feature, a setting the kernel
	// would not take).
	CodeNetconf = "netconf_failed"
)

// Capabilities a hello lists: what a side understands beyond the test
// sequence. A client sends env and netconf messages only to a server that
// lists them; an older server would end the session on a message it does
// not know.
const (
	CapEnv     = "env"
	CapNetconf = "netconf"
)

// capabilities are this build's, listed in its hello.
var capabilities = []string{CapEnv, CapNetconf}

// Has reports whether the hello lists the capability.
func (h Hello) Has(capability string) bool { return slices.Contains(h.Capabilities, capability) }

// EnvReply is the body of the server's env message.
type EnvReply struct {
	Env sysinfo.Env `json:"env"`
}

// Actions of a netconf request.
const (
	// NetconfCheck checks that the settings could be made on the device
	// (it exists, it has those features, they are not fixed) and changes
	// nothing.
	NetconfCheck = "check"
	// NetconfSet makes the settings, in order, and checks that each took
	// effect. The server remembers the device's state from before its
	// first change in this session.
	NetconfSet = "set"
	// NetconfRestore puts the device back as it was before the session's
	// first change to it.
	NetconfRestore = "restore"
	// NetconfKeep leaves the device as it is now and forgets its original
	// state: the session's end will not restore it.
	NetconfKeep = "keep"
)

// NetconfRequest is the body of a netconf message.
type NetconfRequest struct {
	Action string `json:"action"`
	Dev    string `json:"dev"`
	// Settings are "NAME=VALUE" pairs: "tso=off", "mtu=9000" (check and
	// set only).
	Settings []string `json:"settings,omitempty"`
}

// NetconfReply is the body of a netconf_done message.
type NetconfReply struct {
	Action string `json:"action"`
	Dev    string `json:"dev"`
	// Changes are the settings this request changed, with every kernel
	// feature each one moved.
	Changes []netconf.SettingChange `json:"changes,omitempty"`
	// Env is the server's environment record after the request.
	Env *sysinfo.Env `json:"env,omitempty"`
}

// HasCode reports whether err is an error message from the peer with
// that code.
func HasCode(err error, code string) bool {
	var re *RemoteError
	return errors.As(err, &re) && re.Code == code
}
