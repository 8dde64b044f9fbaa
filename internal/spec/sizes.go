package spec

import (
	"fmt"
	"strconv"
	"strings"

	"wirespeed/internal/units"
)

// MaxSweepSizes bounds the points of one sweep.
const MaxSweepSizes = 1000

// ParseSizes reads a sweep's message sizes: a comma-separated list of
// sizes ("1,64,1460,8K") and ranges, "FROM..TOxF" for FROM, FROM*F, ...
// up to TO (F at least 2: "64..65536x2") or "FROM..TO+STEP" for FROM,
// FROM+STEP, ... up to TO. Sizes take units.ParseBytes suffixes. The
// order is kept; a size given twice is an error, since a sweep's points
// are told apart by their size.
func ParseSizes(s string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	add := func(n int64) error {
		if n < 1 || n > MaxMessageSize {
			return fmt.Errorf("size %d must be between 1 and %d bytes", n, MaxMessageSize)
		}
		if seen[int(n)] {
			return fmt.Errorf("size %d is listed twice", n)
		}
		if len(out) == MaxSweepSizes {
			return fmt.Errorf("more than %d sizes", MaxSweepSizes)
		}
		seen[int(n)] = true
		out = append(out, int(n))
		return nil
	}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("sizes %q: empty item; write 1,64,1460 or 64..65536x2", s)
		}
		from, rest, isRange := strings.Cut(item, "..")
		if !isRange {
			n, err := units.ParseBytes(item)
			if err != nil {
				return nil, fmt.Errorf("sizes: %q: %w", item, err)
			}
			if err := add(n); err != nil {
				return nil, fmt.Errorf("sizes: %w", err)
			}
			continue
		}
		op := strings.IndexAny(rest, "x+")
		if op < 0 {
			return nil, fmt.Errorf("sizes: range %q needs a factor or a step: FROM..TOxF (64..65536x2) or FROM..TO+STEP (1000..9000+1000)", item)
		}
		lo, err1 := units.ParseBytes(from)
		hi, err2 := units.ParseBytes(rest[:op])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("sizes: range %q: FROM and TO must be sizes", item)
		}
		if lo > hi {
			return nil, fmt.Errorf("sizes: range %q goes down: FROM is more than TO", item)
		}
		if rest[op] == 'x' {
			f, err := strconv.Atoi(rest[op+1:])
			if err != nil || f < 2 {
				return nil, fmt.Errorf("sizes: range %q: the factor after x must be a whole number of 2 or more", item)
			}
			for n := lo; n <= hi; n *= int64(f) {
				if err := add(n); err != nil {
					return nil, fmt.Errorf("sizes: range %q: %w", item, err)
				}
			}
			continue
		}
		step, err := units.ParseBytes(rest[op+1:])
		if err != nil || step < 1 {
			return nil, fmt.Errorf("sizes: range %q: the step after + must be a size of 1 or more", item)
		}
		for n := lo; n <= hi; n += step {
			if err := add(n); err != nil {
				return nil, fmt.Errorf("sizes: range %q: %w", item, err)
			}
		}
	}
	return out, nil
}
