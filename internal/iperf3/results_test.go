package iperf3

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Seen from iperf3 3.12's server on the wire: -1 is written as 2^64-1.
const results312Server = `{"cpu_util_total":33.701578863071354,"cpu_util_user":0.84727974158813479,"cpu_util_system":32.863749817203647,"sender_has_retransmits":18446744073709551615,"congestion_used":"bbr","streams":[{"id":1,"bytes":925106176,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1.005659}]}`

func TestParseResults(t *testing.T) {
	got, err := ParseResults([]byte(results312Server))
	if err != nil {
		t.Fatal(err)
	}
	want := Results{
		CPUUtilTotal: 33.701578863071354, CPUUtilUser: 0.84727974158813479, CPUUtilSystem: 32.863749817203647,
		SenderHasRetransmits: -1, CongestionUsed: "bbr",
		Streams: []StreamResult{{ID: 1, Bytes: 925106176, Retransmits: -1, EndTime: 1.005659}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ParseResults (-want +got):\n%s", d)
	}
	b, err := got.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseResults(b)
	if err != nil {
		t.Fatalf("ParseResults(Marshal): %v\n%s", err, b)
	}
	if d := cmp.Diff(want, again); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

func TestParseResultsMalformed(t *testing.T) {
	stream := func(s string) string {
		return `{"cpu_util_total":1,"cpu_util_user":0.5,"cpu_util_system":0.5,"sender_has_retransmits":1,"streams":[` + s + `]}`
	}
	ok := `{"id":1,"bytes":10,"retransmits":0,"jitter":0,"errors":0,"packets":0}`
	tests := []struct{ name, in, wantErr string }{
		{"missing streams", `{"cpu_util_total":1,"cpu_util_user":0.5,"cpu_util_system":0.5,"sender_has_retransmits":1}`, `"streams" is missing`},
		{"missing cpu", `{"cpu_util_user":0.5,"cpu_util_system":0.5,"sender_has_retransmits":1,"streams":[]}`, `"cpu_util_total" is missing`},
		{"cpu string", `{"cpu_util_total":"x","cpu_util_user":0.5,"cpu_util_system":0.5,"sender_has_retransmits":1,"streams":[]}`, "not a number"},
		{"cpu negative", `{"cpu_util_total":-1,"cpu_util_user":0.5,"cpu_util_system":0.5,"sender_has_retransmits":1,"streams":[]}`, "outside"},
		{"cpu huge", `{"cpu_util_total":1e308,"cpu_util_user":0.5,"cpu_util_system":0.5,"sender_has_retransmits":1,"streams":[]}`, "outside"},
		{"streams object", `{"cpu_util_total":1,"cpu_util_user":0.5,"cpu_util_system":0.5,"sender_has_retransmits":1,"streams":{}}`, "not an array"},
		{"stream not object", stream(`5`), "not a JSON object"},
		{"stream null", stream(`null`), "not a JSON object"},
		{"bytes string", stream(`{"id":1,"bytes":"10","retransmits":0,"jitter":0,"errors":0,"packets":0}`), `"bytes" is "10"`},
		{"bytes negative", stream(`{"id":1,"bytes":-10,"retransmits":0,"jitter":0,"errors":0,"packets":0}`), `"bytes" is -10`},
		{"bytes 2^63", stream(`{"id":1,"bytes":9223372036854775808,"retransmits":0,"jitter":0,"errors":0,"packets":0}`), `"bytes" is -9223372036854775808`},
		{"id zero", stream(`{"id":0,"bytes":1,"retransmits":0,"jitter":0,"errors":0,"packets":0}`), `"id" is 0`},
		{"id repeated", stream(ok + "," + ok), "stream 1 twice"},
		{"jitter NaN", stream(`{"id":1,"bytes":1,"retransmits":0,"jitter":NaN,"errors":0,"packets":0}`), "not a JSON object"},
		{"missing packets", stream(`{"id":1,"bytes":1,"retransmits":0,"jitter":0,"errors":0}`), `"packets" is missing`},
		{"ends before start", stream(`{"id":1,"bytes":1,"retransmits":0,"jitter":0,"errors":0,"packets":0,"start_time":2,"end_time":1}`), "ends"},
		{"too many streams", stream(strings.TrimSuffix(strings.Repeat(ok+",", maxStreams+1), ",")), "more than 256"},
		{"oversize", `{"x":"` + strings.Repeat("a", MaxResultsLen) + `"}`, "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseResults([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestParseResultsEscapesText: the strings an iperf3 peer sends may be
// printed; their control characters come out escaped, and so do the
// values quoted in errors.
func TestParseResultsEscapesText(t *testing.T) {
	in := strings.Replace(results312Server, `"bbr"`, `"bbr\u001b]52;c;eA==\u0007\u001b[2J"`, 1)
	r, err := ParseResults([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if want := `bbr\x1b]52;c;eA==\x07\x1b[2J`; r.CongestionUsed != want {
		t.Errorf("congestion_used %q, want %q", r.CongestionUsed, want)
	}
	// JSON allows raw control characters only as white space, which an
	// error quoting a value of the wrong type shows.
	bad := strings.Replace(results312Server, `"sender_has_retransmits":18446744073709551615`, "\"sender_has_retransmits\":[1,\r\n\t2]", 1)
	_, err = ParseResults([]byte(bad))
	if err == nil || !strings.Contains(err.Error(), `[1,\r\n\t2]`) {
		t.Errorf("error %q; want one quoting the value escaped", err)
	}
}
