package cli

import (
	"github.com/spf13/pflag"

	"wirespeed/internal/units"
)

// outputFlags say how run shows its result as text; the JSON document
// never changes with them.
type outputFlags struct {
	unit units.RateUnit // -f
}

func (o *outputFlags) register(fl *pflag.FlagSet) {
	fl.VarP(rateUnitValue{&o.unit}, "format", "f", "units of throughput in text tables and interval lines, as iperf3's and netperf's -f: k, m, g, t (10^3..10^12 bits/s) or K, M, G, T (KBytes/s..TBytes/s, 1024s); default 10^6bits/sec in tables, adaptive in interval lines; JSON is always bits/s")
}

// rateUnitValue is -f: one letter of k m g t K M G T.
type rateUnitValue struct{ u *units.RateUnit }

func (v rateUnitValue) String() string {
	if v.u == nil {
		return ""
	}
	return v.u.String()
}

func (v rateUnitValue) Set(s string) error {
	u, err := units.ParseRateUnit(s)
	if err != nil {
		return err
	}
	*v.u = u
	return nil
}

func (v rateUnitValue) Type() string { return "unit" }
