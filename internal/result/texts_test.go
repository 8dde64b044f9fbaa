package result

// Texts are the words of ws as the JSON has them: report's, linked into
// the test binary (words_test.go), for a coded warning, else its Text.
func Texts(ws []Warning) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.words())
	}
	return out
}
