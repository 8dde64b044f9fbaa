package peertext

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "server busy: retry later", "server busy: retry later"},
		{"UTF-8 stays readable", "Zürich → 東京 ✓", "Zürich → 東京 ✓"},
		{"backslashes stay", `C:\path\x1b`, `C:\path\x1b`},
		{"OSC 52 clipboard write", "oops\x1b]52;c;cm0gLXJmIH4=\x07done", `oops\x1b]52;c;cm0gLXJmIH4=\x07done`},
		{"clear screen and fake prompt", "\x1b[2J\x1b[H\r\nroot@host:~# ", `\x1b[2J\x1b[H\r\nroot@host:~# `},
		{"tab", "a\tb", `a\tb`},
		{"DEL and NUL", "a\x7fb\x00", `a\x7fb\x00`},
		{"C1 CSI", "a\u009b2Jb", `a\u009b2Jb`},
		{"bidi override", "abc\u202edcb", `abc\u202edcb`},
		{"not UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Escape(tt.in)
			if got != tt.want {
				t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := Escape(got); again != got {
				t.Errorf("Escape is not idempotent: %q, then %q", got, again)
			}
		})
	}
}

func TestScrub(t *testing.T) {
	type inner struct {
		Name  string
		Tags  []string
		Attrs map[string]string
		Any   any
		Nums  []int64
		Bytes []byte
		Tok   [4]byte
		note  string
	}
	type outer struct {
		Msg   string
		In    *inner
		List  []inner
		ByKey map[string][]int64
	}
	v := outer{
		Msg: "a\x1b[2Jb",
		In: &inner{Name: "h\x07", Tags: []string{"ok", "x\ny"}, Attrs: map[string]string{"k\x1b": "v\r"},
			Any: "i\x1b", Nums: []int64{1}, Bytes: []byte("\x1b"), Tok: [4]byte{27}, note: "\x1b"},
		List:  []inner{{Name: "\u202e"}},
		ByKey: map[string][]int64{"s\x1b": {1, 2}, "plain": {3}},
	}
	Scrub(&v)
	want := outer{
		Msg: `a\x1b[2Jb`,
		In: &inner{Name: `h\x07`, Tags: []string{"ok", `x\ny`}, Attrs: map[string]string{`k\x1b`: `v\r`},
			Any: `i\x1b`, Nums: []int64{1}, Bytes: []byte("\x1b"), Tok: [4]byte{27}, note: "\x1b"},
		List:  []inner{{Name: `\u202e`}},
		ByKey: map[string][]int64{`s\x1b`: {1, 2}, "plain": {3}},
	}
	if d := cmp.Diff(want, v, cmp.AllowUnexported(inner{})); d != "" {
		t.Errorf("Scrub (-want +got):\n%s", d)
	}
}
