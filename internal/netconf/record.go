package netconf

// SettingChange is one host setting that wirespeed changed for a run, so a
// result says what it was measured with and what it changed on the way.
type SettingChange struct {
	Device    string `json:"device"`
	Namespace string `json:"namespace,omitempty"` // empty for the host's own
	// Setting is "mtu" or the feature as it was asked for ("tso",
	// "tx-checksumming", "rx-gro").
	Setting string `json:"setting"`
	// Before and After are "on" or "off" for a feature, the number of
	// bytes for the MTU.
	Before string `json:"before"`
	After  string `json:"after"`
	// Features lists every kernel feature whose state the change moved,
	// including the ones the kernel turned off or on as a consequence
	// (turning tx-checksumming off also turns off TSO).
	Features []FeatureChange `json:"features,omitempty"`
}

// FeatureChange is one kernel feature that a setting change moved.
type FeatureChange struct {
	Name   string `json:"name"`
	Before bool   `json:"before"`
	After  bool   `json:"after"`
	// Consequence is set for a feature the setting did not ask for: the
	// kernel moved it because it depends on one that was (TSO needs tx
	// checksumming).
	Consequence bool `json:"consequence,omitempty"`
}
