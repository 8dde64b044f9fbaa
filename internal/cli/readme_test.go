package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// readmeLine is a wirespeed command line from one of the README's sh
// blocks.
type readmeLine struct {
	text    string   // the line as written
	args    []string // its arguments after "wirespeed", up to a comment or redirection
	block   int      // which sh block it is in
	section string   // the "## " heading above it
}

// readmePages are the pages that hold what the README held before its
// reference moved into docs/: the README itself, a page per command, and
// the one section each of docs/archive.md and docs/exporter.md that came
// from it (section "" is the whole page). Their order is the old README's,
// so a line that reads a file an earlier line wrote (`plot sweep.json`)
// still comes after it.
var readmePages = []struct{ path, section string }{
	{"README.md", ""},
	{"docs/run.md", ""},
	{"docs/sweep.md", ""},
	{"docs/plot.md", ""},
	{"docs/env.md", ""},
	{"docs/matrix.md", ""},
	{"docs/compare.md", ""},
	{"docs/lab.md", ""},
	{"docs/serve.md", ""},
	{"docs/mesh.md", ""},
	{"docs/archive.md", "`wirespeed history`: its flags"},
	{"docs/exporter.md", "`wirespeed exporter`: its flags"},
}

// readmeCommands returns the wirespeed command lines of the sh blocks of
// readmePages, and calls flagRow for every table row that starts with a
// flag under a "## `wirespeed CMD`" heading. Block numbers run on across
// the pages, so a block is one block of one page.
func readmeCommands(t *testing.T, flagRow func(section, flags string)) []readmeLine {
	t.Helper()
	var out []readmeLine
	blocks := 0
	for _, p := range readmePages {
		row := flagRow
		if flagRow != nil {
			row = func(section, flags string) {
				if p.section == "" || section == p.section {
					flagRow(p.path+": "+section, flags)
				}
			}
		}
		last := 0
		for _, l := range docCommands(t, "../../"+p.path, row) {
			last = l.block
			if p.section != "" && l.section != p.section {
				continue
			}
			l.block += blocks
			l.section = p.path + ": " + l.section
			out = append(out, l)
		}
		blocks += last + 1
	}
	return out
}

// docCommands returns the wirespeed command lines of the sh blocks of the
// Markdown file at path, as readmeCommands does for the README.
func docCommands(t *testing.T, path string, flagRow func(section, flags string)) []readmeLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []readmeLine
	inSh, block, section := false, 0, ""
	flagCell := regexp.MustCompile("^\\| `(-[^`]+)`")
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```sh"):
			inSh = true
			block++
			continue
		case strings.HasPrefix(line, "```"):
			inSh = false
			continue
		case strings.HasPrefix(line, "## "):
			section = strings.TrimPrefix(line, "## ")
		}
		if !inSh {
			if m := flagCell.FindStringSubmatch(line); m != nil && flagRow != nil {
				flagRow(section, m[1])
			}
			continue
		}
		code := strings.TrimSpace(strings.SplitN(line, "#", 2)[0])
		cmdline, ok := strings.CutPrefix(code, "go run ./cmd/wirespeed ")
		if !ok {
			if cmdline, ok = strings.CutPrefix(code, "wirespeed "); !ok {
				continue // not a wirespeed command
			}
		}
		cmdline = strings.TrimSpace(strings.SplitN(cmdline, ">", 2)[0]) // a redirection is the shell's
		out = append(out, readmeLine{text: line, args: strings.Fields(cmdline), block: block, section: section})
	}
	return out
}

// parseCommandLine checks that args name a command and that its flags
// and arguments parse.
func parseCommandLine(root *cobra.Command, args []string) error {
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	return cmd.ValidateArgs(cmd.Flags().Args())
}

// commandSection matches a section about one command, "PAGE: `wirespeed
// CMD ...`...", and gives CMD.
var commandSection = regexp.MustCompile("^[^ ]+: `wirespeed ([a-z0-9-]+)")

// TestREADME keeps the README and the pages its reference moved to true
// to the command tree: every wirespeed command line in their sh blocks
// parses (a dry parse by the cobra tree: the command, its flags and its
// arguments, nothing run), and every flag their tables list exists on the
// command the table is about.
func TestREADME(t *testing.T) {
	e := &env{stdout: io.Discard, stderr: io.Discard}
	root := newRoot(e)
	rows := 0
	lines := readmeCommands(t, func(section, flags string) {
		m := commandSection.FindStringSubmatch(section)
		if m == nil {
			return
		}
		cmd, _, err := root.Find([]string{m[1]})
		if err != nil || cmd == root {
			t.Fatalf("section %q: no command %q (%v)", section, m[1], err)
		}
		rows++
		for _, name := range strings.Split(flags, ", ") {
			name = strings.Trim(name, "` ")
			var found bool
			if strings.HasPrefix(name, "--") {
				found = cmd.Flags().Lookup(strings.TrimPrefix(name, "--")) != nil
			} else {
				found = cmd.Flags().ShorthandLookup(strings.TrimPrefix(name, "-")) != nil
			}
			if !found {
				t.Errorf("%s lists %s for %s, which has no such flag", section, name, m[1])
			}
		}
	})
	inREADME := 0
	for _, l := range lines {
		if err := parseCommandLine(newRoot(e), l.args); err != nil {
			t.Errorf("%s: %q: %v", l.section, l.text, err)
		}
		if strings.HasPrefix(l.section, "README.md: ") {
			inREADME++
		}
	}
	t.Logf("%d command lines (%d in the README), %d flag rows", len(lines), inREADME, rows)
	if inREADME < 10 {
		t.Errorf("found only %d wirespeed command lines in the README", inREADME)
	}
	if len(lines) < 100 {
		t.Errorf("found only %d wirespeed command lines in the README and its pages", len(lines))
	}
	if rows < 100 {
		t.Errorf("found only %d flag rows in the pages' tables", rows)
	}
	// What a newcomer reads first stays short: the reference goes to a
	// page of docs/ and the README links to it.
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n >= 250 {
		t.Errorf("README.md has %d lines: keep it under 250, with the reference in a page of docs/ it links to", n)
	}
	if n := len(checkLinks(t, "README.md")); n < 10 {
		t.Errorf("found only %d links in the README", n)
	}
}

// TestREADMEExamplesRun runs every README example that can run on this
// machine against the server it shows: the `wirespeed serve` line of its
// block, or else a default `wirespeed serve` (what "Between two hosts"
// starts), listening on 127.0.0.1. server.example (iperf.example, host)
// becomes that server's address, each run is cut to a short window, and
// the lines of a block run in order in one directory, so `sweep -o
// sweep.json` makes the file the next line plots. Lines that need what a
// test cannot have (several hosts, a lab, a placeholder) are counted by
// reason; the rest must succeed.
func TestREADMEExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's examples: a minute of measurements")
	}
	lines := readmeCommands(t, nil)
	dir := t.TempDir()
	t.Chdir(dir)

	defaultSrv := startREADMEServer(t, nil)
	iperf3 := ""
	srv, block := defaultSrv, 0
	blockSrvErr := ""
	ran, skipped := 0, map[string]int{}
	for _, l := range lines {
		if l.block != block {
			block, srv, blockSrvErr = l.block, defaultSrv, ""
		}
		args := append([]string(nil), l.args...)
		if args[0] == "serve" {
			if why := missingFiles(args); why != "" {
				srv, blockSrvErr = "", "its server "+why
				skipped["serve: "+why]++
				continue
			}
			srv = startREADMEServer(t, args[1:])
			ran++
			continue
		}
		if why := readmeSkip(args); why != "" {
			skipped[why]++
			continue
		}
		usesServer := false
		for i, a := range args {
			host, port, _ := strings.Cut(a, ":")
			switch host {
			case "server.example":
				usesServer = true
				args[i] = srv
			case "iperf.example":
				if iperf3 == "" {
					iperf3 = startIperf3(t)
				}
				args[i] = iperf3
				_ = port // the README's port is the server's choice; ours is free
			case "host":
				args[i] = "127.0.0.1"
			case "eth0":
				args[i] = "lo"
			}
		}
		if usesServer && srv == "" {
			skipped[blockSrvErr]++
			continue
		}
		if strings.Contains(strings.Join(args, " "), "127.0.0.1:") && iperf3 == "" && strings.Contains(l.text, "iperf.example") {
			skipped["no iperf3 installed"]++
			continue
		}
		if args[0] == "man" {
			args[1] = filepath.Join(dir, "man1") // not the system's man path
		}
		args = shorten(args)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		var stdout, stderr bytes.Buffer
		start := time.Now()
		code := Main(ctx, args, &stdout, &stderr)
		if code != ExitOK && strings.Contains(l.text, "iperf.example") {
			// iperf3 3.x closes and reopens its listening socket after
			// each test: a client that comes at once may find it shut.
			time.Sleep(time.Second)
			stdout.Reset()
			stderr.Reset()
			code = Main(ctx, args, &stdout, &stderr)
		}
		cancel()
		if code != ExitOK {
			t.Errorf("%s: line %q ran as %q: exit %d after %v:\n%s", l.section, strings.TrimSpace(l.text), args, code, time.Since(start).Round(time.Millisecond), stderr.String())
			continue
		}
		ran++
	}
	t.Logf("ran %d README lines; skipped %v", ran, skipped)
	if ran < 25 {
		t.Errorf("ran only %d README command lines", ran)
	}
}

// readmeSkip says why a README line cannot run in a test, or "".
func readmeSkip(args []string) string {
	switch args[0] {
	case "lab":
		return "lab: a lab of its own (cmd/wirespeed tests labs)"
	case "mesh":
		return "mesh: several servers with --allow-relay"
	case "matrix":
		return "matrix: changes a NIC's settings"
	case "exporter":
		return "exporter: a daemon with a modules file (cmd/wirespeed tests it with Prometheus)"
	}
	for _, a := range args {
		if strings.Contains(a, "...") {
			return "a placeholder (...)"
		}
		if a == "-T" && runtime.NumCPU() < 2 {
			return "-T: fewer than 2 CPUs"
		}
	}
	if why := notThisHost(args); why != "" {
		return why
	}
	if strings.Contains(strings.Join(args, " "), "iperf.example") {
		if _, err := exec.LookPath("iperf3"); err != nil {
			return "no iperf3 installed"
		}
	}
	return missingFiles(args)
}

// notThisHost says so when the line binds to an address or a device
// this host does not have (-B, --bind-dev): an example for another host.
func notThisHost(args []string) string {
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "-B", "--bind":
			ln, err := net.Listen("tcp", net.JoinHostPort(args[i+1], "0"))
			if err != nil {
				return "-B: an address of another host"
			}
			ln.Close()
		case "--bind-dev":
			if _, err := net.InterfaceByName(args[i+1]); err != nil {
				return "--bind-dev: a device of another host"
			}
		}
	}
	return ""
}

// missingFiles names a file the line reads that does not exist (yet).
func missingFiles(args []string) string {
	fileFlags := map[string]bool{"--psk-file": true, "--tls-ca": true, "--tls-cert": true, "--tls-key": true,
		"--resume": true, "--relay-psk-file": true}
	for i, a := range args {
		var file string
		switch {
		case fileFlags[a] && i+1 < len(args):
			file = args[i+1]
		case (args[0] == "plot" || args[0] == "compare") && strings.HasSuffix(a, ".json") && (i == 0 || args[i-1] != "-o"):
			file = a
		}
		if file != "" {
			if _, err := os.Stat(file); err != nil {
				return "needs " + file + ", which the README does not make"
			}
		}
	}
	return ""
}

// shorten cuts a measurement to a short window: -l 0.2, and 3 iterations
// when it iterates.
func shorten(args []string) []string {
	switch args[0] {
	case "run", "sweep":
	default:
		return args
	}
	var out []string
	iterates := false
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-l", "--iterations":
			i++
			continue
		case "-I":
			iterates = true
		}
		out = append(out, args[i])
	}
	out = append(out, "-l", "0.2")
	if iterates {
		out = append(out, "--iterations", "3,3")
	}
	return out
}

// startREADMEServer runs `wirespeed serve FLAGS --listen 127.0.0.1:PORT`
// in this process until the test ends and returns its address.
func startREADMEServer(t *testing.T, flags []string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stderr bytes.Buffer
	args := append(append([]string{"serve"}, flags...), "--listen", addr)
	go func() { done <- Main(ctx, args, io.Discard, &stderr) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != ExitOK {
			t.Errorf("%q: exit %d: %s", args, code, stderr.String())
		}
	})
	waitListening(t, addr, done)
	return addr
}

// startIperf3 starts an iperf3 server on a free loopback port until the
// test ends and returns its address.
func startIperf3(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("iperf3", "-s", "-B", "127.0.0.1", "-p", port)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() { cmd.Wait(); done <- cmd.ProcessState.ExitCode() }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	waitListening(t, addr, done)
	return addr
}

func waitListening(t *testing.T, addr string, done chan int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case code := <-done:
			done <- code
			t.Fatalf("server for %s exited (%d) before listening", addr, code)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal(fmt.Errorf("nothing listens on %s after 10 s: %w", addr, err))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
