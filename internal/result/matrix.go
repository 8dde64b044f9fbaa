package result

import (
	"strings"
	"wirespeed/internal/netconf"
)

// Matrix is what `wirespeed matrix` measured: the host settings it varied
// (Dimensions), the devices it changed, and one row per combination of
// the settings, in the order run, each with its full result.
type Matrix struct {
	// Local and Remote are the devices changed on each side; nil for a
	// side left alone.
	Local  *MatrixDevice `json:"local,omitempty"`
	Remote *MatrixDevice `json:"remote,omitempty"`
	// Dimensions are the settings varied, in the order given; the last
	// one varies fastest from row to row.
	Dimensions []MatrixDimension `json:"dimensions"`
	Rows       []MatrixRow       `json:"rows"`
	// Keep is set when the last row's settings were left in place on
	// purpose (--keep); otherwise every device was restored at the end.
	Keep bool `json:"keep,omitempty"`
	// RestoreErrors says what could not be put back as it was. Empty when
	// every device is as it was before the matrix (or Keep).
	RestoreErrors []string `json:"restore_errors,omitempty"`
}

// MatrixDevice is a device a matrix changed.
type MatrixDevice struct {
	Dev string `json:"dev"`
	// Netns is the named network namespace the device is in, when the
	// matrix reached it directly (a lab's server side); empty otherwise.
	Netns string `json:"netns,omitempty"`
	// Via says how it was changed: "local" (in the client's own network
	// namespace), "netns" (in Netns on the client's host) or "server"
	// (by the server, over the control connection).
	Via string `json:"via"`
}

// MatrixDimension is one setting a matrix varies.
type MatrixDimension struct {
	// Name is "mtu" or an offload feature as given ("tso",
	// "tx-checksumming").
	Name string `json:"name"`
	// Side is "local" or "remote" when the setting applies to one side's
	// device only; empty for both devices changed.
	Side Side `json:"side,omitempty"`
	// Values are "on" or "off" for a feature, bytes for the MTU.
	Values []string `json:"values"`
}

// Key is how the dimension reads in a row's label: "tso", or
// "remote:tso" for one side's.
func (d MatrixDimension) Key() string {
	if d.Side == "" {
		return d.Name
	}
	return string(d.Side) + ":" + d.Name
}

// MatrixSetting is the value of one dimension in one row.
type MatrixSetting struct {
	Name  string `json:"name"`
	Side  Side   `json:"side,omitempty"`
	Value string `json:"value"`
}

// MatrixRow is one combination of settings and its measurement: one point
// for a run, one per message size for a sweep.
type MatrixRow struct {
	// Index is 1-based, in the order run.
	Index int `json:"index"`
	// Label names the combination: "tso=off mtu=9000".
	Label    string          `json:"label"`
	Settings []MatrixSetting `json:"settings"`
	// Changes are the settings changed to reach this row from the one
	// before (from the original state for the first), with every kernel
	// feature each change moved, on every device.
	Changes []netconf.SettingChange `json:"changes,omitempty"`
	// Skipped says why the row was not measured: the kernel would not
	// take the combination (TSO on with tx checksumming off), or a
	// setting failed.
	Skipped     string  `json:"skipped,omitempty"`
	Interrupted bool    `json:"interrupted,omitempty"`
	Points      []Point `json:"points"`
}

// RowLabel writes settings as a row's label: "tso=off mtu=9000", with a
// side prefix on a setting that applies to one side only.
func RowLabel(settings []MatrixSetting) string {
	parts := make([]string, len(settings))
	for i, s := range settings {
		parts[i] = MatrixDimension{Name: s.Name, Side: s.Side}.Key() + "=" + s.Value
	}
	return strings.Join(parts, " ")
}
