package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"wirespeed/internal/result"
)

// Width is the most columns a line of the default text takes, for every
// command: a terminal of 100 columns shows it unwrapped. -v (TextOptions.Verbose)
// adds the detail lines, which may be wider; the JSON document has
// everything either way. TestTextFits holds every golden of the default
// text to it.
const Width = 100

// moreMark ends a line that brief cut short.
const moreMark = " (-v: more)"

// fitWarning is prefix and w's words in full when they fit in width
// columns; else prefix and the most clauses that fit, ended by moreMark;
// else, when even the first clause does not fit (a peer's long words),
// that cut to fit (brief).
func fitWarning(prefix string, w result.Warning, width int) string {
	cs := warningClauses(w)
	if full := prefix + strings.Join(cs, ""); cols(full) <= width {
		return full
	}
	for k := len(cs) - 1; k > 0; k-- {
		if s := prefix + strings.Join(cs[:k], "") + moreMark; cols(s) <= width {
			return s
		}
	}
	return brief(prefix+strings.Join(cs, ""), width)
}

// brief is s when it fits in n columns; otherwise s cut after the last
// clause that fits with moreMark after it: for words without a code,
// whose clauses are not known (a peer's, an error's, a statistics
// caveat, a document's from before codes); a coded warning's are
// (fitWarning). A clause ends before ": " or
// "; " (strong) or ", " or " (" (weak); a strong end is taken over a later
// weak one up to strongReach columns back, and a cut inside parentheses
// closes them. The head of a warning or a note says what happened and
// the rest says why or what to do, so the cut keeps the fact and -v the
// explanation. A sentence without such a place is cut at its last space
// that fits.
func brief(s string, n int) string {
	if cols(s) <= n {
		return s
	}
	type end struct{ at, depth int }
	room := n - cols(moreMark)
	strong, weak := end{-1, 0}, end{-1, 0}
	space, depth := -1, 0
	for i, r := range s {
		if c := cols(s[:i]); c+depth > room {
			break
		}
		switch {
		case r == '(' && i > 0 && s[i-1] == ' ':
			weak = end{i - 1, depth}
			depth++
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case (r == ':' || r == ';') && strings.HasPrefix(s[i+1:], " "):
			strong = end{i, depth}
		case r == ',' && strings.HasPrefix(s[i+1:], " "):
			weak = end{i, depth}
		case r == ' ' && depth == 0:
			space = i
		}
	}
	cut := weak
	if strong.at > 0 && (weak.at < strong.at || cols(s[strong.at:weak.at]) <= strongReach) {
		cut = strong
	}
	switch {
	case cut.at > 0:
		return s[:cut.at] + strings.Repeat(")", cut.depth) + moreMark
	case space > 0:
		return s[:space] + moreMark
	}
	// One word longer than the line: cut it at the last rune that fits.
	b := s
	for cols(b) > room {
		_, size := utf8.DecodeLastRuneInString(b)
		b = b[:len(b)-size]
	}
	return b + moreMark
}

// strongReach is how far back from the last weak end of a clause brief
// takes a strong one instead.
const strongReach = 20

// cols is how many columns s takes on a terminal: one per rune (the
// text has no wide characters; µ is one).
func cols(s string) int { return utf8.RuneCountInString(s) }

// fitList joins parts with sep after head, as many to a line as fit in
// Width, and continues on lines indented by indent spaces; a part longer
// than a line has one to itself.
func fitList(head string, parts []string, sep string, indent int) []string {
	return fitListIn(Width, head, parts, sep, indent)
}

// fitListIn is fitList in width columns.
func fitListIn(width int, head string, parts []string, sep string, indent int) []string {
	var lines []string
	line := head
	first := true
	for _, p := range parts {
		switch {
		case first:
			line += p
		case cols(line)+cols(sep)+cols(p) <= width:
			line += sep + p
		default:
			lines = append(lines, line+strings.TrimRight(sep, " "))
			line = strings.Repeat(" ", indent) + p
		}
		first = false
	}
	return append(lines, line)
}

// FitClauses breaks a line of clauses joined by "; " into lines of at
// most Width columns where it is longer, each continued line indented by
// two spaces: for progress and iteration lines, whose clauses are read
// one by one. A clause longer than a line has one to itself.
func FitClauses(s string) []string {
	return fitList("", strings.Split(s, "; "), "; ", 2)
}

// wrapNote breaks s at spaces into lines of at most Width columns, the ones
// after the first indented by indent spaces: for notes under a table,
// which say every figure they name (a warning is cut instead, brief). A
// word longer than a line has one to itself.
func wrapNote(s string, indent int) []string {
	words := strings.Fields(s)
	if len(words) == 0 || cols(s) <= Width {
		return []string{s}
	}
	lead := s[:len(s)-len(strings.TrimLeft(s, " "))] // kept on the first line
	return fitList(lead+words[0]+" ", words[1:], " ", indent)
}

// writeWrapped writes s, wrapped (wrap) unless verbose.
func writeWrapped(w io.Writer, s string, verbose bool) {
	if verbose {
		fmt.Fprintln(w, s)
		return
	}
	for _, l := range wrapNote(s, 2) {
		fmt.Fprintln(w, l)
	}
}

// alignedTable is a tabwriter of right-aligned columns, two spaces apart, whose
// lines leave out the blanks at their ends: the padding of empty cells
// is not a column a terminal must show.
type alignedTable struct {
	tw  *tabwriter.Writer
	buf bytes.Buffer
	w   io.Writer
}

func newTable(w io.Writer) *alignedTable {
	t := &alignedTable{w: w}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', tabwriter.AlignRight)
	return t
}

func (t *alignedTable) Write(p []byte) (int, error) { return t.tw.Write(p) }

// Flush writes the lines so far, trimmed, to the table's writer.
func (t *alignedTable) Flush() error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	for _, l := range strings.SplitAfter(t.buf.String(), "\n") {
		if l == "" {
			continue
		}
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimRight(l, " \n")
		if nl {
			l += "\n"
		}
		if _, err := io.WriteString(t.w, l); err != nil {
			return err
		}
	}
	t.buf.Reset()
	return nil
}
