package stats

// Latency summarises the latency of transactions, in microseconds, from a
// histogram whose values are within 0.1% of the true ones.
type Latency struct {
	Count  int64   `json:"count"`
	Min    float64 `json:"min"`
	Mean   float64 `json:"mean"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	P999   float64 `json:"p999"`
	Max    float64 `json:"max"`
	StdDev float64 `json:"stddev"`
}
