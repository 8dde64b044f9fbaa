package spec

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSizes(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr string
	}{
		{in: "1,2,64,1460", want: []int{1, 2, 64, 1460}},
		{in: "64..1024x2", want: []int{64, 128, 256, 512, 1024}},
		{in: "64..1000x4", want: []int{64, 256}},
		{in: "1K..4K+1K, 16K", want: []int{1024, 2048, 3072, 4096, 16384}},
		{in: "1,64..65536x4,131000", want: []int{1, 64, 256, 1024, 4096, 16384, 65536, 131000}},
		{in: "", wantErr: "empty item"},
		{in: "1,,2", wantErr: "empty item"},
		{in: "0", wantErr: "between 1"},
		{in: "64,64", wantErr: "twice"},
		{in: "64..128", wantErr: "factor or a step"},
		{in: "64..128x1", wantErr: "factor"},
		{in: "128..64x2", wantErr: "goes down"},
		{in: "1..2000+1", wantErr: "more than 1000"},
		{in: "abc", wantErr: "sizes"},
	}
	for _, tt := range tests {
		got, err := ParseSizes(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseSizes(%q) err %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSizes(%q): %v", tt.in, err)
			continue
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("ParseSizes(%q) (-want +got):\n%s", tt.in, d)
		}
	}
}
