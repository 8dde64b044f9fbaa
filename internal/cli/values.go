package cli

import (
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

type sizeError string

func (e sizeError) Error() string { return string(e) }

const errTooLarge = sizeError("size is too large")
