package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The test of the packages scripts/package.sh builds (docs/packaging.md):
// the .deb is installed on this machine with dpkg -i, what it installed
// is run and checked, and a purge must leave none of it behind.

// TestDebPackage builds the .deb (and the .rpm) with scripts/package.sh,
// installs the .deb with dpkg -i and checks that the installed binary
// says the version the script stamped, a version naming this checkout's
// commit (read from git here, not from the script); that man -w finds
// the man pages (the units' Documentation= among them) and the man page
// names the same version; that the completions are where bash, zsh and
// fish look; that systemd-analyze verify accepts the installed units as
// they are (ExecStart=/usr/bin/wirespeed must exist); and that a purge,
// after the server's unit was enabled, a setting changed and the mesh
// timer's spool filled, removes every file dpkg -L listed, the wirespeed
// directories, the enablement symlink, the spool and the package's
// record. With rpm installed, the .rpm's file
// list and version are checked too (rpm -qp).
//
// It changes this machine's /usr, /etc and dpkg database, so it runs only
// with WIRESPEED_PACKAGE_TEST=1 (.ci/run sets it), as root, and never
// where a wirespeed package, or a file the purge would remove, is
// already there.
func TestDebPackage(t *testing.T) {
	if os.Getenv("WIRESPEED_PACKAGE_TEST") != "1" {
		t.Skip("the package test installs and purges a wirespeed .deb on this machine: it runs with WIRESPEED_PACKAGE_TEST=1 (.ci/run sets it)")
	}
	if os.Geteuid() != 0 {
		t.Skip("the package test needs root: it installs the .deb with dpkg -i")
	}
	for _, c := range []string{"dpkg", "dpkg-query", "git", "man", "systemd-analyze"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("no %s on this machine: the package test needs dpkg, git, man-db and systemd", c)
		}
	}
	if st, _ := exec.Command("dpkg-query", "-W", "-f", "${db:Status-Status}", "wirespeed").Output(); len(st) > 0 && string(st) != "not-installed" {
		t.Skipf("a wirespeed package is on this machine already (%s): the test would replace and purge it; dpkg --purge wirespeed first", st)
	}
	// What the purge removes must not be there already (an install by
	// hand, as docs/systemd.md does it, or a mesh timer's spool).
	for _, f := range []string{"/usr/bin/wirespeed", "/etc/default/wirespeed", "/etc/default/wirespeed-exporter",
		"/etc/default/wirespeed-mesh", "/etc/wirespeed", "/var/lib/wirespeed-mesh", "/var/lib/private/wirespeed-mesh"} {
		if _, err := os.Lstat(f); err == nil {
			t.Skipf("%s exists and no package owns it: the test's purge would delete it", f)
		}
	}

	// What the script stamps must name this commit.
	head := strings.TrimSpace(pkgRun(t, "git", "rev-parse", "HEAD"))
	exact, _ := exec.Command("git", "describe", "--tags", "--exact-match", "--match", "v[0-9]*").Output()

	cmd := exec.Command("bash", "scripts/package.sh")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/package.sh: %v\n%s", err, stderr.String())
	}
	t.Logf("scripts/package.sh:\n%s", pkgTail(stderr.String(), 20))
	m := regexp.MustCompile(`(?m)^wirespeed (\S+), packaged as (\S+)$`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("scripts/package.sh did not say the version it stamped (\"wirespeed V, packaged as P\"):\n%s", stderr.String())
	}
	version, pkgVersion := m[1], m[2]
	if e := strings.TrimSpace(string(exact)); e != "" {
		if version != e && version != e+"-dirty" {
			t.Errorf("stamped version %s; the commit is tagged %s", version, e)
		}
	} else if !strings.Contains(version, head[:7]) {
		t.Errorf("stamped version %s does not name the commit %s", version, head)
	}
	var deb, rpmFile string
	for _, p := range strings.Fields(string(out)) {
		switch filepath.Ext(p) {
		case ".deb":
			deb = filepath.Join("../..", p)
		case ".rpm":
			rpmFile = filepath.Join("../..", p)
		}
	}
	if deb == "" || rpmFile == "" {
		t.Fatalf("scripts/package.sh named the packages %q: want a .deb and a .rpm", out)
	}

	t.Cleanup(func() {
		if st, _ := exec.Command("dpkg-query", "-W", "-f", "${db:Status-Status}", "wirespeed").Output(); len(st) > 0 && string(st) != "not-installed" {
			if o, err := exec.Command("dpkg", "--purge", "wirespeed").CombinedOutput(); err != nil {
				t.Errorf("cleanup: dpkg --purge wirespeed: %v\n%s", err, o)
			}
		}
	})
	pkgRun(t, "dpkg", "-i", deb)
	if got := pkgRun(t, "dpkg-query", "-W", "-f", "${Version}", "wirespeed"); got != pkgVersion {
		t.Errorf("dpkg-query says version %q; the script packaged %q", got, pkgVersion)
	}
	files := strings.Fields(pkgRun(t, "dpkg", "-L", "wirespeed"))

	// The files the package must hold, where the tools look for them.
	want := []string{
		"/usr/bin/wirespeed",
		"/usr/share/man/man1/wirespeed.1.gz",
		"/usr/share/man/man1/wirespeed-run.1.gz",
		"/usr/share/man/man1/wirespeed-serve.1.gz",
		"/usr/share/bash-completion/completions/wirespeed",
		"/usr/share/zsh/vendor-completions/_wirespeed",
		"/usr/share/fish/vendor_completions.d/wirespeed.fish",
		"/usr/lib/systemd/system/wirespeed.service",
		"/usr/lib/systemd/system/wirespeed-exporter.service",
		"/usr/lib/systemd/system/wirespeed-mesh.service",
		"/usr/lib/systemd/system/wirespeed-mesh.timer",
		"/etc/default/wirespeed",
		"/etc/default/wirespeed-exporter",
		"/etc/default/wirespeed-mesh",
		"/etc/wirespeed/probes.yml",
		"/usr/share/doc/wirespeed/README.md",
	}
	for _, f := range want {
		if !slices.Contains(files, f) {
			t.Errorf("dpkg -L wirespeed does not list %s", f)
		} else if fi, err := os.Stat(f); err != nil || fi.Size() == 0 {
			t.Errorf("%s: installed empty or not at all (%v)", f, err)
		}
	}
	if fi, err := os.Stat("/etc/default/wirespeed-mesh"); err == nil && fi.Mode().Perm() != 0o600 {
		t.Errorf("/etc/default/wirespeed-mesh has mode %v: it holds the archive's password, want 0600", fi.Mode().Perm())
	}
	conffiles := pkgRun(t, "dpkg-query", "-W", "-f", "${Conffiles}", "wirespeed")
	for _, f := range []string{"/etc/default/wirespeed", "/etc/wirespeed/probes.yml"} {
		if !strings.Contains(conffiles, f+" ") {
			t.Errorf("%s is not a conffile of the package (dpkg-query: %q): an upgrade would overwrite its changes", f, conffiles)
		}
	}
	// Every relative link of every installed page (the README's to
	// docs/, the pages' to each other and to the pictures they show)
	// resolves inside the installed documentation.
	pages, err := installedPages(docRoot)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pages[docRoot+"/README.md"]; !ok {
		t.Errorf("no README.md among the pages installed under %s", docRoot)
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	for _, b := range brokenDocLinks(docRoot, pages, exists) {
		t.Errorf("installed documentation: %s", b)
	}
	t.Logf("%d installed pages, their links checked", len(pages))
	var docFiles []string
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && !fi.IsDir() && strings.HasPrefix(f, docRoot+"/") {
			docFiles = append(docFiles, f)
		}
	}
	if b, err := os.ReadFile("/usr/share/zsh/vendor-completions/_wirespeed"); err == nil && !bytes.HasPrefix(b, []byte("#compdef wirespeed")) {
		t.Errorf("the zsh completion starts %q, want #compdef wirespeed", pkgFirstLine(string(b)))
	}

	// The installed binary, found on a plain PATH, says the stamped version.
	bin := exec.Command("wirespeed", "version")
	bin.Env = append(os.Environ(), "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	vout, err := bin.Output()
	if err != nil {
		t.Fatalf("wirespeed version: %v", err)
	}
	if got := pkgFirstLine(string(vout)); got != "wirespeed "+version {
		t.Errorf("wirespeed version says %q; the package stamped %q", got, version)
	}

	// man finds the pages, and they name the same version.
	for _, page := range []string{"wirespeed", "wirespeed-serve", "wirespeed-exporter", "wirespeed-mesh"} {
		o, err := exec.Command("man", "-w", page).CombinedOutput()
		if got := strings.TrimSpace(string(o)); err != nil || got != "/usr/share/man/man1/"+page+".1.gz" {
			t.Errorf("man -w %s = %q (%v), want the package's /usr/share/man/man1/%s.1.gz", page, got, err, page)
		}
	}
	if page, err := pkgGunzip("/usr/share/man/man1/wirespeed.1.gz"); err != nil {
		t.Error(err)
	} else if !strings.Contains(page, `"wirespeed `+version+`"`) {
		t.Errorf("wirespeed.1's header does not name the version %s:\n%s", version, pkgTail(page[:min(len(page), 400)], 5))
	}

	// systemd takes the installed units as they are.
	for _, u := range []string{"wirespeed.service", "wirespeed-exporter.service", "wirespeed-mesh.service", "wirespeed-mesh.timer"} {
		path := "/usr/lib/systemd/system/" + u
		o, err := exec.Command("systemd-analyze", "verify", "--man=yes", path).CombinedOutput()
		var ours, others []string
		for _, l := range strings.Split(strings.TrimSpace(string(o)), "\n") {
			switch {
			case strings.TrimSpace(l) == "":
			case strings.Contains(l, "wirespeed"):
				ours = append(ours, l)
			default:
				others = append(others, l)
			}
		}
		for _, l := range others {
			t.Logf("systemd-analyze verify %s, of another unit: %s", u, l)
		}
		if len(ours) > 0 || (err != nil && len(others) == 0) {
			t.Errorf("systemd-analyze verify %s: %v\n%s", path, err, strings.Join(ours, "\n"))
		}
	}

	// What an administrator leaves for the purge: the server enabled (a
	// symlink in /etc, when systemctl can make one here) and a changed
	// setting.
	wants := "/etc/systemd/system/multi-user.target.wants/wirespeed.service"
	if o, err := exec.Command("systemctl", "enable", "wirespeed.service").CombinedOutput(); err != nil {
		t.Logf("systemctl enable wirespeed.service (the purge's disable goes unchecked): %v %s", err, o)
		wants = ""
	} else if _, err := os.Lstat(wants); err != nil {
		t.Errorf("systemctl enable made no %s: %v", wants, err)
	}
	// And a spool the mesh timer's runs left (StateDirectory= with
	// DynamicUser=yes keeps it under /var/lib/private, a symlink beside).
	spool := "/var/lib/private/wirespeed-mesh/spool"
	if err := os.MkdirAll(spool, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spool+"/round.json", []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("private/wirespeed-mesh", "/var/lib/wirespeed-mesh"); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile("/etc/default/wirespeed", os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("WIRESPEED_OPTS=--listen :7576\n")
	f.Close()

	pkgRun(t, "dpkg", "--purge", "wirespeed")
	for _, f := range files {
		fi, err := os.Lstat(f)
		if err != nil {
			continue
		}
		if !fi.IsDir() || strings.Contains(filepath.Base(f), "wirespeed") {
			t.Errorf("%s is left after dpkg --purge wirespeed", f)
		}
	}
	for _, f := range []string{"/etc/wirespeed", "/usr/share/doc/wirespeed", "/var/lib/private/wirespeed-mesh", "/var/lib/wirespeed-mesh", wants} {
		if _, err := os.Lstat(f); f != "" && err == nil {
			t.Errorf("%s is left after dpkg --purge wirespeed", f)
		}
	}
	if st, _ := exec.Command("dpkg-query", "-W", "-f", "${db:Status-Status}", "wirespeed").Output(); len(st) > 0 && string(st) != "not-installed" {
		t.Errorf("dpkg still knows the package after the purge: %s", st)
	}

	// The .rpm, where rpm is installed to read it.
	if _, err := exec.LookPath("rpm"); err != nil {
		t.Logf("no rpm here (Debian package rpm): the .rpm's contents are not checked")
		return
	}
	rpmFiles := strings.Fields(pkgRun(t, "rpm", "-qpl", rpmFile))
	for _, f := range append(want, docFiles...) {
		if f == "/usr/share/zsh/vendor-completions/_wirespeed" {
			f = "/usr/share/zsh/site-functions/_wirespeed" // Fedora's
		}
		if !slices.Contains(rpmFiles, f) {
			t.Errorf("rpm -qpl %s does not list %s", rpmFile, f)
		}
	}
	if got := pkgRun(t, "rpm", "-qp", "--qf", "%{VERSION}", rpmFile); got != pkgVersion {
		t.Errorf("the .rpm's version is %q; the script packaged %q", got, pkgVersion)
	}
}

// docRoot is where the packages put the README and the documentation.
const docRoot = "/usr/share/doc/wirespeed"

// TestPackagedDocLinks: the documentation packaging/nfpm.yaml installs
// holds whatever its pages link to. It reads the contents nfpm would
// package (the globs expanded here, in the repository, as nfpm expands
// them from the root) and follows every relative link of every page
// installed under docRoot, as TestDebPackage does on the installed
// tree; this one needs no root, no nfpm and no dpkg, so a link to a page
// the package leaves out fails on every test run.
func TestPackagedDocLinks(t *testing.T) {
	b, err := os.ReadFile("../../packaging/nfpm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Contents []struct {
			Src, Dst, Type, Packager string
		}
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("packaging/nfpm.yaml: %v", err)
	}
	installed := map[string]string{} // installed path -> the repository's file
	for _, c := range cfg.Contents {
		if c.Src == "" || c.Type == "dir" || !strings.HasPrefix(c.Dst, docRoot+"/") {
			continue
		}
		srcs, err := filepath.Glob(filepath.Join("../..", c.Src))
		if err != nil || len(srcs) == 0 {
			t.Errorf("packaging/nfpm.yaml: %s matches no file (%v)", c.Src, err)
			continue
		}
		for _, src := range srcs {
			dst := c.Dst
			if strings.HasSuffix(dst, "/") {
				dst += filepath.Base(src)
			}
			installed[path.Clean(dst)] = src
		}
	}
	pages := map[string]string{}
	for dst, src := range installed {
		if strings.HasSuffix(dst, ".md") {
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			pages[dst] = string(b)
		}
	}
	if _, ok := pages[docRoot+"/README.md"]; !ok {
		t.Fatalf("packaging/nfpm.yaml installs no %s/README.md", docRoot)
	}
	exists := func(p string) bool { _, ok := installed[p]; return ok }
	for _, b := range brokenDocLinks(docRoot, pages, exists) {
		t.Errorf("packaging/nfpm.yaml: %s: add what it links to to the contents", b)
	}
	t.Logf("%d pages, %d files installed under %s", len(pages), len(installed), docRoot)
}

// TestBrokenDocLinks holds the link checker to a planted tree: a link
// to a page or a picture that is there, one to a fragment of one, an
// external one and an anchor pass; a missing page and one outside the
// tree are the two reported, and a link in a code block or span is not
// a link.
func TestBrokenDocLinks(t *testing.T) {
	pages := map[string]string{
		"/d/README.md": "See [run](docs/run.md), [its answer](docs/run.md#the-answer) and ![a plot](docs/plots/a.png).\n" +
			"[gone](docs/gone.md) [up](../etc/passwd) [web](https://example.com/x.md) [here](#top)\n" +
			"`[span](docs/span.md)`\n```\n[block](docs/block.md)\n```\n",
		"/d/docs/run.md": "[back](../README.md) [title](sweep.md \"the sweep\")",
	}
	have := map[string]bool{"/d/README.md": true, "/d/docs/run.md": true, "/d/docs/plots/a.png": true, "/d/docs/sweep.md": true}
	got := brokenDocLinks("/d", pages, func(p string) bool { return have[p] })
	want := []string{
		"/d/README.md links to ../etc/passwd, outside /d",
		"/d/README.md links to docs/gone.md: /d/docs/gone.md is not installed",
	}
	if !slices.Equal(got, want) {
		t.Errorf("broken links\n got %q\nwant %q", got, want)
	}
}

// mdLink is a Markdown inline link or image: [text](target) or
// [text](target "title"); codeSpan and a fenced block's lines are not
// searched.
var (
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpan = regexp.MustCompile("`[^`]*`")
)

// brokenDocLinks follows every relative link of pages (installed path
// -> text) and says which do not resolve to a file under root (exists),
// sorted. Links with a scheme and anchors within a page are left alone;
// a fragment is cut off.
func brokenDocLinks(root string, pages map[string]string, exists func(string) bool) []string {
	var out []string
	for page, text := range pages {
		fenced := false
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				continue
			}
			if fenced {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "#") {
					continue
				}
				file, _, _ := strings.Cut(target, "#")
				p := path.Join(path.Dir(page), file)
				switch {
				case !strings.HasPrefix(p, root+"/"):
					out = append(out, page+" links to "+target+", outside "+root)
				case !exists(p):
					out = append(out, page+" links to "+target+": "+p+" is not installed")
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// installedPages reads every .md file under root.
func installedPages(root string) (map[string]string, error) {
	pages := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		b, err := os.ReadFile(p)
		pages[p] = string(b)
		return err
	})
	return pages, err
}

// pkgRun runs a command and returns its standard output, failing the test,
// with what it said, when it fails.
func pkgRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	c := exec.Command(name, args...)
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func pkgGunzip(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(z)
	return string(b), err
}

func pkgFirstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// pkgTail returns the last n lines of s.
func pkgTail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
