package control

import (
	"slices"

	"wirespeed/internal/run"
)

// TypeEnv asks the server for its environment record, collected afresh;
// the server answers with an env message carrying EnvReply (see
// docs/protocol.md, "The server's host").
const TypeEnv = "env"

// Capabilities a hello lists: what a side understands beyond the test
// sequence. A client sends env messages only to a server that lists
// env; an older server would end the session on a message it does not
// know.
const CapEnv = "env"

// capabilities are this build's, listed in its hello.
var capabilities = []string{CapEnv}

// Has reports whether the hello lists the capability.
func (h Hello) Has(capability string) bool { return slices.Contains(h.Capabilities, capability) }

// EnvReply is the body of the server's env message.
type EnvReply struct {
	Env run.Env `json:"env"`
}
