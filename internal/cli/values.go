package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"wirespeed/internal/units"
)

// durationValue is a flag that takes plain seconds ("60", netperf's -l) or
// a Go duration ("2s", "500ms").
type durationValue struct{ d *time.Duration }

func (v durationValue) String() string {
	if v.d == nil {
		return ""
	}
	return v.d.String()
}
func (v durationValue) Set(s string) error {
	d, err := units.ParseDuration(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}
func (v durationValue) Type() string { return "duration" }

// bytesValue is a size flag: "131072", "128K", "1M".
type bytesValue struct{ n *int }

func (v bytesValue) String() string {
	if v.n == nil {
		return ""
	}
	return units.FormatSize(int64(*v.n))
}
func (v bytesValue) Set(s string) error {
	n, err := units.ParseBytes(s)
	if err != nil {
		return err
	}
	if n > 1<<40 {
		return errTooLarge
	}
	*v.n = int(n)
	return nil
}
func (v bytesValue) Type() string { return "bytes" }

// amountValue is a count of bytes or blocks with an optional binary
// suffix, as iperf3 reads -n and -k: "100M" is 100*2^20.
type amountValue struct{ n *int64 }

func (v amountValue) String() string {
	if v.n == nil || *v.n == 0 {
		return "0"
	}
	return strconv.FormatInt(*v.n, 10)
}
func (v amountValue) Set(s string) error {
	n, err := units.ParseBytes(s)
	if err != nil {
		return err
	}
	*v.n = n
	return nil
}
func (v amountValue) Type() string { return "count" }

type sizeError string

func (e sizeError) Error() string { return string(e) }

const errTooLarge = sizeError("size is too large")

// rateValue is a rate flag in bits/s: "500M", "2G", "0".
type rateValue struct{ bps *float64 }

func (v rateValue) String() string {
	if v.bps == nil || *v.bps == 0 {
		return "0"
	}
	return strconv.FormatFloat(*v.bps, 'g', -1, 64)
}
func (v rateValue) Set(s string) error {
	r, err := units.ParseRate(s)
	if err != nil {
		return err
	}
	*v.bps = r
	return nil
}
func (v rateValue) Type() string { return "rate" }

// rrSizesValue is netperf's -r REQ,RESP (one size sets both).
type rrSizesValue struct{ req, resp *int }

func (v rrSizesValue) String() string {
	if v.req == nil {
		return ""
	}
	return fmt.Sprintf("%d,%d", *v.req, *v.resp)
}
func (v rrSizesValue) Set(s string) error {
	parts := strings.Split(s, ",")
	if len(parts) > 2 {
		return fmt.Errorf("%q: write REQ,RESP like 1,1 or 64,1K", s)
	}
	var sizes [2]int
	for i, p := range parts {
		n, err := units.ParseBytes(p)
		if err != nil {
			return err
		}
		if n > 1<<30 {
			return errTooLarge
		}
		sizes[i] = int(n)
	}
	if len(parts) == 1 {
		sizes[1] = sizes[0]
	}
	*v.req, *v.resp = sizes[0], sizes[1]
	return nil
}
func (v rrSizesValue) Type() string { return "REQ,RESP" }
