package matrix

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"wirespeed/internal/netconf"
	"wirespeed/internal/result"
	"wirespeed/internal/spec"
)

// MaxCombinations bounds a matrix: every combination is at least one
// full measurement.
const MaxCombinations = 256

// Dimension is one setting a matrix varies: its values, on every device
// changed or on one side's.
type Dimension struct {
	// Name is "mtu" or a feature's name, lower case, as given, or
	// Direction.
	Name string
	// Side is result.Local or result.Remote for one side's device only; empty
	// for every device.
	Side   result.Side
	Values []netconf.Setting
	// Tests are the direction dimension's values (Values is empty): the
	// test each row runs instead of the plan's.
	Tests []spec.Kind
}

// Direction names the dimension that changes no device but the test's
// direction: --set direction=stream,maerts,bidir (TCP_STREAM, client to
// server; TCP_MAERTS, server to client; TCP_BIDIR, both at once).
const Direction = "direction"

// directions are the words of the direction dimension's values.
var directions = map[string]spec.Kind{
	"stream": spec.TCPStream, "tcp_stream": spec.TCPStream,
	"maerts": spec.TCPMaerts, "tcp_maerts": spec.TCPMaerts,
	"bidir": spec.TCPBidir, "tcp_bidir": spec.TCPBidir,
}

// Setting is one value of a row: a setting, and the side it is for
// (empty: every device); for the direction dimension, Name is Direction
// and Test the row's test.
type Setting struct {
	Side result.Side
	netconf.Setting
	Test spec.Kind
}

// Key names the dimension as --set does: "tso", "remote:mtu".
func (d Dimension) Key() string { return result.MatrixDimension{Name: d.Name, Side: d.Side}.Key() }

// record is the dimension as the document keeps it.
func (d Dimension) record() result.MatrixDimension {
	md := result.MatrixDimension{Name: d.Name, Side: d.Side}
	for _, v := range d.Values {
		md.Values = append(md.Values, valueWord(v))
	}
	for _, k := range d.Tests {
		md.Values = append(md.Values, string(k))
	}
	return md
}

// valueWord is a setting's value as the document writes it: "on", "off"
// or the MTU in bytes.
func valueWord(st netconf.Setting) string {
	if st.Name == "mtu" {
		return strconv.Itoa(st.MTU)
	}
	if st.On {
		return "on"
	}
	return "off"
}

// ParseDimensions reads NAME=V1,V2,... with an optional local: or remote:
// prefix, one dimension each (--set). Every value is checked as a
// setting; the combinations are bounded by MaxCombinations.
func ParseDimensions(sets []string) ([]Dimension, error) {
	var dims []Dimension
	n := 1
	for _, s := range sets {
		var d Dimension
		body := strings.TrimSpace(s)
		if p, rest, ok := strings.Cut(body, ":"); ok && (p == "local" || p == "remote") {
			d.Side, body = result.Side(p), rest
		}
		name, vals, ok := strings.Cut(body, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !ok || name == "" || strings.TrimSpace(vals) == "" {
			return nil, fmt.Errorf("--set %q: write NAME=VALUE,VALUE..., like tso=on,off or mtu=1500,9000", s)
		}
		d.Name = name
		if name == Direction || name == "test" {
			if d.Side != "" {
				return nil, fmt.Errorf("--set %q: the direction is the test's, not one side's: drop the prefix %s", s, d.Side+":")
			}
			d.Name = Direction
			for _, v := range strings.Split(vals, ",") {
				k, ok := directions[strings.ToLower(strings.TrimSpace(v))]
				if !ok {
					return nil, fmt.Errorf("--set %q: %q is not a direction: use stream (TCP_STREAM), maerts (TCP_MAERTS) or bidir (TCP_BIDIR)", s, strings.TrimSpace(v))
				}
				if slices.Contains(d.Tests, k) {
					return nil, fmt.Errorf("--set %q names %s twice", s, k)
				}
				d.Tests = append(d.Tests, k)
			}
		}
		for _, v := range strings.Split(vals, ",") {
			if d.Name == Direction {
				break
			}
			st, err := netconf.ParseSetting(name + "=" + strings.TrimSpace(v))
			if err != nil {
				return nil, fmt.Errorf("--set %q: %v", s, err)
			}
			if slices.Contains(d.Values, st) {
				return nil, fmt.Errorf("--set %q names %s twice", s, valueWord(st))
			}
			d.Values = append(d.Values, st)
		}
		for _, o := range dims {
			if o.Name == d.Name && (o.Side == d.Side || o.Side == "" || d.Side == "") {
				return nil, fmt.Errorf("--set %q: %s is already varied by another --set", s, d.Key())
			}
		}
		n *= len(d.Values) + len(d.Tests)
		if n > MaxCombinations {
			return nil, fmt.Errorf("the --set flags make more than %d combinations; vary fewer settings at once", MaxCombinations)
		}
		dims = append(dims, d)
	}
	if len(dims) == 0 {
		return nil, errors.New("matrix needs at least one --set, like --set tso=on,off")
	}
	return dims, nil
}

// Combinations returns every combination of the dimensions' values, the
// last dimension varying fastest.
func Combinations(dims []Dimension) [][]Setting {
	out := [][]Setting{{}}
	for _, d := range dims {
		var next [][]Setting
		for _, c := range out {
			for _, v := range d.Values {
				next = append(next, append(slices.Clip(c), Setting{Side: d.Side, Setting: v}))
			}
			for _, k := range d.Tests {
				next = append(next, append(slices.Clip(c), Setting{Setting: netconf.Setting{Name: Direction}, Test: k}))
			}
		}
		out = next
	}
	return out
}

// rowRecord is a row's settings as the document keeps them.
func rowRecord(row []Setting) []result.MatrixSetting {
	out := make([]result.MatrixSetting, len(row))
	for i, s := range row {
		v := valueWord(s.Setting)
		if s.Name == Direction {
			v = string(s.Test)
		}
		out[i] = result.MatrixSetting{Name: s.Name, Side: s.Side, Value: v}
	}
	return out
}

// settingsFor returns the settings of a row that apply to side, in the
// order they are made: the MTU first, then features turned on, then
// features turned off. Turning features on first means a feature that
// another one depends on (tx checksumming, for TSO) is on before the
// dependent one is asked for.
func settingsFor(row []Setting, side result.Side) []netconf.Setting {
	var mtu, on, off []netconf.Setting
	for _, s := range row {
		if s.Side != "" && s.Side != side || s.Name == Direction {
			continue
		}
		switch {
		case s.Name == "mtu":
			mtu = append(mtu, s.Setting)
		case s.On:
			on = append(on, s.Setting)
		default:
			off = append(off, s.Setting)
		}
	}
	return append(append(mtu, on...), off...)
}

// allFor returns every value of every dimension that applies to side:
// what is checked before anything changes.
func allFor(dims []Dimension, side result.Side) []netconf.Setting {
	var all []netconf.Setting
	for _, d := range dims {
		if d.Side == "" || d.Side == side {
			all = append(all, d.Values...)
		}
	}
	return all
}

// testOf is the test a row runs: the plan's, in the direction of the
// row's direction setting when the matrix varies it.
func testOf(base spec.Test, row []Setting) spec.Test {
	for _, s := range row {
		if s.Name == Direction {
			base.Kind = s.Test
		}
	}
	return base
}

// ChangesDevices reports whether any dimension is a device's setting
// (not only the direction): whether the matrix needs a device to change.
func ChangesDevices(dims []Dimension) bool {
	for _, d := range dims {
		if d.Name != Direction {
			return true
		}
	}
	return false
}

// VariesDirection reports whether a dimension is the direction.
func VariesDirection(dims []Dimension) bool {
	for _, d := range dims {
		if d.Name == Direction {
			return true
		}
	}
	return false
}
