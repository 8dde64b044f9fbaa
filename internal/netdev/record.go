package netdev

// FeatureState is the state of one offload feature.
type FeatureState struct {
	Name string `json:"name"`
	On   bool   `json:"on"`
	// Fixed is set when the driver does not let the feature change.
	Fixed bool `json:"fixed"`
	// Requested is what was last asked for. It differs from On when the
	// kernel keeps a feature off because one it depends on is off (TSO
	// without scatter-gather), as ethtool's "[requested on]".
	Requested bool `json:"requested"`
}
