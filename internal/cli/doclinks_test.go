package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// mdLink is a Markdown link or image outside code: [text](target) or
// ![alt](target), the target up to a space (a title) or the ")".
var mdLink = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)

// headingAnchors returns the anchors of a Markdown file's headings as
// GitHub makes them: lower case, everything but letters, digits, spaces,
// "-" and "_" dropped, spaces made "-", and a repeated anchor numbered
// ("-1", "-2"). Lines in fenced code blocks are not headings.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimLeft(line, "#")
		if !strings.HasPrefix(title, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(title)) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// checkLinks fails the test for every relative link of the Markdown file
// at path (from the repository's root) that names no file of the
// repository, or an anchor that no heading of the Markdown file it points
// to makes; it returns the links it checked. Links to the web, and text
// in fenced code blocks or code spans, are not checked.
func checkLinks(t *testing.T, path string) []string {
	t.Helper()
	const root = "../.."
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	var checked []string
	fenced := false
	for i, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = regexp.MustCompile("`[^`]*`").ReplaceAllString(line, "``")
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked = append(checked, target)
			file, anchor, _ := strings.Cut(target, "#")
			full := filepath.Join(root, path) // a link to "#anchor" is to this page
			if file != "" {
				full = filepath.Join(filepath.Dir(filepath.Join(root, path)), file)
			}
			rel, _ := filepath.Rel(root, full)
			if strings.HasPrefix(rel, "..") {
				t.Errorf("%s:%d: %s leaves the repository", path, i+1, target)
				continue
			}
			fi, err := os.Stat(full)
			if err != nil {
				t.Errorf("%s:%d: links to %s, which is not in the repository (%s from the root): %v", path, i+1, target, rel, err)
				continue
			}
			if anchor == "" || fi.IsDir() || !strings.HasSuffix(full, ".md") {
				continue
			}
			page, err := os.ReadFile(full)
			if err != nil {
				t.Fatal(err)
			}
			if !headingAnchors(string(page))[anchor] {
				t.Errorf("%s:%d: links to %s, but %s has no heading whose anchor is #%s", path, i+1, target, rel, anchor)
			}
		}
	}
	return checked
}

// TestDocLinks: every relative link of the README and of docs/*.md names
// a file of the repository and, when it has one, an anchor that a heading
// of the page it names makes.
func TestDocLinks(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) < 10 {
		t.Fatalf("found %d pages in docs/ (%v)", len(pages), err)
	}
	n := len(checkLinks(t, "README.md"))
	for _, p := range pages {
		n += len(checkLinks(t, filepath.Join("docs", filepath.Base(p))))
	}
	if n < 50 {
		t.Errorf("checked only %d links in the README and docs/", n)
	}
}

// TestHeadingAnchors holds the anchor rule to anchors worked out by hand
// from GitHub's rendering of headings like these.
func TestHeadingAnchors(t *testing.T) {
	got := headingAnchors("# `wirespeed run [HOST[:PORT]]`\n## The answer, `-v` and what limited it\n" +
		"```sh\n# not a heading\n```\n### RRUL: latency under load\n## Flags\n## Flags\n")
	for _, want := range []string{"wirespeed-run-hostport", "the-answer--v-and-what-limited-it",
		"rrul-latency-under-load", "flags", "flags-1"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a comment in a code block made an anchor")
	}
	if len(got) != 5 {
		t.Errorf("%d anchors, want 5: %v", len(got), got)
	}
}
