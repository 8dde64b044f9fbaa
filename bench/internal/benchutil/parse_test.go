package benchutil

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"wirespeed/internal/result"
)

// TestParseWirespeed reads recorded results documents through the
// schema and finds the figures the benches use where a schema-free read
// of the same JSON finds them.
func TestParseWirespeed(t *testing.T) {
	for _, tc := range []struct {
		file string
		// paths into the summary, and what the parsed document says
		figures map[string]func(d result.Document) float64
	}{
		{"stream.json", map[string]func(result.Document) float64{
			"throughput_bps":   func(d result.Document) float64 { return d.Summary.BitsPerSecond },
			"elapsed_s":        func(d result.Document) float64 { return d.Summary.ElapsedS },
			"sender_elapsed_s": func(d result.Document) float64 { return d.Summary.SenderElapsedS },
		}},
		{"udp.json", map[string]func(result.Document) float64{
			"packets_sent":     func(d result.Document) float64 { return float64(d.Summary.PacketsSent) },
			"packets_received": func(d result.Document) float64 { return float64(d.Summary.PacketsReceived) },
		}},
		{"rr.json", map[string]func(result.Document) float64{
			"transactions_per_s": func(d result.Document) float64 { return d.Summary.TransactionsPerSecond },
		}},
		{"cpu.json", map[string]func(result.Document) float64{
			"local_cpu.service_demand_us_per_kb": func(d result.Document) float64 { kb, _ := ServiceDemand(d.Summary.LocalCPU); return kb },
		}},
	} {
		b, err := os.ReadFile("../../../internal/report/testdata/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		d, err := ParseWirespeed(b)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		var raw struct{ Summary map[string]any }
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		for path, got := range tc.figures {
			want, ok := lookup(raw.Summary, path)
			if !ok || want == 0 {
				t.Fatalf("%s: summary.%s is not in the recording (or 0): the test needs a figure to compare", tc.file, path)
			}
			if g := got(d); g != want {
				t.Errorf("%s: summary.%s = %v through the schema, %v in the JSON", tc.file, path, g, want)
			}
		}
	}
	if _, err := ParseWirespeed([]byte(`{"schema":"wirespeed/result/v0"}`)); err == nil {
		t.Errorf("a document of another schema was read")
	}
}

// lookup finds a dotted path of numbers in decoded JSON.
func lookup(m map[string]any, path string) (float64, bool) {
	for {
		key, rest, more := strings.Cut(path, ".")
		v, ok := m[key]
		if !ok {
			return 0, false
		}
		if !more {
			f, ok := v.(float64)
			return f, ok
		}
		if m, ok = v.(map[string]any); !ok {
			return 0, false
		}
		path = rest
	}
}
