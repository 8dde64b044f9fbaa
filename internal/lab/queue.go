package lab

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"
)

// Queue sizes the queue and bucket of a lab's tbf, as tc-tbf's latency,
// limit and burst do. The zero Queue takes TBF's sizes: a short queue,
// so that a rate limit shows as drops. A long one (a latency of 100 ms,
// a home router's) makes the queue a test such as RRUL fills: bufferbloat.
type Queue struct {
	// Latency is tc-tbf's latency: the queue holds what the rate sends
	// in that time beyond the bucket, limit = rate × Latency + burst.
	// 0 leaves the limit to LimitBytes or TBF.
	Latency time.Duration
	// LimitBytes is tc-tbf's limit, the queue in bytes; not with Latency.
	// 0 leaves it to Latency or TBF.
	LimitBytes uint32
	// BurstBytes is tc-tbf's burst, the bucket in bytes; 0 takes TBF's.
	BurstBytes uint32
}

// IsZero reports whether q asks for nothing of its own.
func (q Queue) IsZero() bool { return q == Queue{} }

// Size returns the rate in bytes/s, the bucket and the queue, in bytes,
// of a tbf at bitsPerSecond with this queue on a link of that MTU (0:
// 1500): TBF's, with q's burst and limit in their place, or the limit
// tc-tbf makes of a latency, rate × latency + burst (rounded down to a
// byte, as tc's is). It fails for a queue or bucket smaller than one
// full frame, which tbf could never send, and for a limit beyond tbf's
// 32 bits.
func (q Queue) Size(bitsPerSecond uint64, mtu int) (rateBytes uint64, burst, limit uint32, err error) {
	if mtu <= 0 {
		mtu = 1500
	}
	rateBytes, burst, limit = TBF(bitsPerSecond, mtu)
	if q.Latency > 0 && q.LimitBytes > 0 {
		return 0, 0, 0, fmt.Errorf("a tbf's queue is a latency (%v) or a size (%d bytes), not both", q.Latency, q.LimitBytes)
	}
	frame := uint32(mtu + 64)
	if q.BurstBytes > 0 {
		if q.BurstBytes < frame {
			return 0, 0, 0, fmt.Errorf("a tbf bucket of %d bytes holds no full frame of a %d-byte MTU: use %d bytes or more", q.BurstBytes, mtu, frame)
		}
		burst = q.BurstBytes
		if q.LimitBytes == 0 && q.Latency == 0 {
			// TBF's queue is the bucket and 5 ms more: keep the 5 ms.
			if l := uint64(burst) + rateBytes*5/1000; l <= math.MaxUint32 {
				limit = uint32(l)
			}
		}
	}
	switch {
	case q.LimitBytes > 0:
		if q.LimitBytes < frame {
			return 0, 0, 0, fmt.Errorf("a tbf queue of %d bytes holds no full frame of a %d-byte MTU: use %d bytes or more", q.LimitBytes, mtu, frame)
		}
		limit = q.LimitBytes
	case q.Latency > 0:
		// rate × latency in bytes, the product in 128 bits: 10 Tbit/s
		// for a second overflows 64.
		hi, lo := bits.Mul64(rateBytes, uint64(q.Latency))
		var l uint64 = math.MaxUint64
		if hi < uint64(time.Second) {
			l, _ = bits.Div64(hi, lo, uint64(time.Second))
		}
		if l > math.MaxUint32-uint64(burst) {
			return 0, 0, 0, fmt.Errorf("a tbf latency of %v at %d bits/s makes a queue beyond tbf's 4 GBytes: use a shorter one", q.Latency, bitsPerSecond)
		}
		limit = uint32(l) + burst
	}
	return rateBytes, burst, limit, nil
}

// checkQueue checks a lab's queue against its rate and MTU.
func checkQueue(bitsPerSecond uint64, mtu int, q Queue) error {
	if q.IsZero() {
		return nil
	}
	if bitsPerSecond == 0 {
		return errors.New("lab queue without a rate limit: a tbf's queue needs its rate; give one")
	}
	if _, _, _, err := q.Size(bitsPerSecond, mtu); err != nil {
		return fmt.Errorf("lab queue: %w", err)
	}
	return nil
}
