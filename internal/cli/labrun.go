package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"wirespeed/internal/lab"
	"wirespeed/internal/report"
)

// selfCommand returns a command that runs this wirespeed program with
// args. Tests replace it: their binary is not wirespeed unless told so.
var selfCommand = func(args ...string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the wirespeed program to run: %w", err)
	}
	return exec.Command(exe, args...), nil
}

// startLabServer starts `wirespeed serve` detached in side a of l (its
// command line: lab.ServeArgs) with a fresh pre-shared key, which lab run
// passes to the clients, and waits until side b reaches it.
func startLabServer(ctx context.Context, l *lab.Lab, port int) (*lab.Server, error) {
	key, err := lab.MakeKey(l.Name)
	if err != nil {
		return nil, err
	}
	cmd, err := selfCommand(lab.ServeArgs(port, key)...)
	if err != nil {
		return nil, err
	}
	addr := netip.AddrPortFrom(l.A.IPv4, uint16(port)).String()
	return l.StartServer(ctx, cmd, addr, key)
}

// labServerStatus describes the lab's server for report.Lab.
func labServerStatus(name string) *report.LabServer {
	s, err := lab.LoadServer(name)
	if err != nil || s == nil {
		return nil
	}
	return &report.LabServer{PID: s.PID, Addr: s.Addr, Running: s.Running(name), Log: s.Log, Key: s.Key}
}

// labRunCommands are the commands lab run can run in side b (mesh: in a
// mesh lab's host, across all its hosts; labmesh.go).
var labRunCommands = []string{"run", "sweep", "matrix", "mesh"}

func newLabRunCmd(e *env) *cobra.Command {
	var name, from, to string
	cmd := &cobra.Command{
		Use:   "run [run|sweep|matrix|mesh] -- [FLAGS...]",
		Short: "Run the client in side b of a lab against the server lab up started in side a",
		Long: `Run wirespeed run (or sweep, or matrix) in side b of a lab, against the server
that lab up started in side a, with the flags after --. The server's address
is filled in (its IPv6 address with -6).

The lab's server requires the lab's pre-shared key (see lab status); lab run
passes it (--psk-file). For matrix, the devices are filled in too, unless
the flags name them: --dev wst-b, and --remote-dev wst-a, which the server
changes itself (it runs with --allow-netconf), so that both ends of the veth
pair change together; the server restores its end when the client's session
ends, however it ends.

In a mesh lab (lab up --hosts N), --from names the host the client runs in
and --to the host whose server it measures: the devices and namespace filled
in for matrix are theirs (--dev wst-h1 --remote-dev wst-h3). lab run mesh
runs wirespeed mesh in host --from (h1 unless told) with every host's server
as a peer (their IPv6 addresses with -6) and the lab's key: the pairs from
that host are measured from it, the others relayed by their source's server.

Ctrl-C or SIGTERM is passed on to the client once; it stops its run, restores
what it changed and shows what it measured. The exit status is the client's.`,
		Example: `  wirespeed lab run -- -l 5 -I 99,5
  wirespeed lab run sweep -- --sizes 64,1460,64K -l 2
  wirespeed lab run matrix -- --set tso=on,off --set mtu=1500,9000 -l 1 --iterations 5,3
  wirespeed lab run --name vms --from h1 --to h3 -- -l 5
  wirespeed lab run --name vms mesh -- -l 2 -i 0`,
		RunE: func(cmd *cobra.Command, args []string) error {
			sub := "run"
			flags := args
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				if dash > 1 {
					return usagef("lab run takes one command before --, got %q", args[:dash])
				}
				if dash == 1 {
					sub = args[0]
				}
				flags = args[dash:]
			} else if len(args) > 0 {
				sub, flags = args[0], args[1:]
			}
			if !slices.Contains(labRunCommands, sub) {
				return usagef("lab run runs %s, not %q; put the flags after --", strings.Join(labRunCommands, ", "), sub)
			}
			if err := lab.CheckName(name); err != nil {
				return usagef("--name: %v", err)
			}
			if sub == "mesh" {
				if to != "" {
					return usagef("lab run mesh measures every ordered pair of the hosts: drop --to (mesh's --pairs picks pairs)")
				}
				return runMeshInLab(cmd.Context(), e, name, from, flags)
			}
			if from != "" || to != "" || isMesh(name) {
				l, srv, err := meshView(name, from, to)
				if err != nil {
					return err
				}
				full, err := labClientArgs(e, l, srv, sub, flags)
				if err != nil {
					return err
				}
				return runInLab(cmd.Context(), e, l, full)
			}
			l, err := lab.Load(name)
			if err != nil {
				return labErr(err)
			}
			srv, err := lab.LoadServer(name)
			if err != nil {
				return err
			}
			if srv == nil || !srv.Running(name) {
				return fmt.Errorf("lab %s has no server running; make the lab with wirespeed lab up (it starts one), or start one with wirespeed lab exec --name %s --side a -- wirespeed serve", name, name)
			}
			full, err := labClientArgs(e, l, srv, sub, flags)
			if err != nil {
				return err
			}
			return runInLab(cmd.Context(), e, l, full)
		},
	}
	cmd.Flags().StringVar(&name, "name", lab.DefaultName, "lab to run in")
	cmd.Flags().StringVar(&from, "from", "", "mesh lab: the host the client runs in, like h1 (lab run mesh: h1 unless told)")
	cmd.Flags().StringVar(&to, "to", "", "mesh lab: the host whose server the client measures, like h3")
	return cmd
}

// labClientArgs builds the client's command line: the command, the
// server's address (its IPv6 address with -6), the lab's key, for a run
// in a routed lab the router's egresses (--router-queue) and, for a
// matrix, the lab's devices, each unless the user's flags give it, then
// the user's flags. The flags are read with the command's own
// definitions, so that what they set is known from the flag parser, not
// from a scan of the strings.
func labClientArgs(e *env, l *lab.Lab, srv *lab.Server, sub string, flags []string) ([]string, error) {
	host, port, err := net.SplitHostPort(srv.Addr)
	if err != nil {
		return nil, fmt.Errorf("lab %s: server address %q: %w", l.Name, srv.Addr, err)
	}
	var cmd *cobra.Command
	switch sub {
	case "sweep":
		cmd = newSweepCmd(e)
	case "matrix":
		cmd = newMatrixCmd(e)
	default:
		cmd = newRunCmd(e)
	}
	fl := cmd.Flags()
	if err := fl.Parse(flags); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return append([]string{sub}, flags...), nil
		}
		return nil, usagef("wirespeed %s: %v", sub, err)
	}
	if ipv6, _ := fl.GetBool("ipv6"); ipv6 {
		if !l.A.IPv6.IsValid() {
			return nil, fmt.Errorf("lab %s has no IPv6 address in side a", l.Name)
		}
		host = l.A.IPv6.String()
	}
	args := []string{sub, net.JoinHostPort(host, port)}
	if srv.Key != "" && !fl.Changed("psk-file") {
		args = append(args, "--psk-file", srv.Key)
	}
	if sub == "run" && !fl.Changed("router-queue") {
		// A routed lab's router is on the path: the client samples its
		// queues in an RRUL run, as it does its own.
		egresses, err := lab.RouterEgresses(l.Name, l.B.Name)
		if err != nil {
			return nil, fmt.Errorf("lab %s: its router: %w", l.Name, err)
		}
		for _, eg := range egresses {
			args = append(args, "--router-queue", eg.Netns+"/"+eg.Dev)
		}
	}
	if sub == "matrix" {
		if !fl.Changed("dev") {
			args = append(args, "--dev", l.B.Dev)
		}
		switch {
		case fl.Changed("remote-dev"):
		case srv.Key != "":
			// The lab's server changes its end itself, and restores it
			// when the session ends, whatever happens to the client.
			args = append(args, "--remote-dev", l.A.Dev)
		default:
			// A server without a key cannot be asked: change its end
			// through its namespace.
			args = append(args, "--remote-dev", l.A.Dev, "--remote-netns", l.A.Netns)
		}
	}
	return append(args, flags...), nil
}

// runInLab runs this program with args in side b (l.B.Name: a mesh
// host's name in a view of a mesh), passing one interrupt
// on, and returns an error carrying its exit status.
func runInLab(ctx context.Context, e *env, l *lab.Lab, args []string) error {
	c, err := selfCommand(args...)
	if err != nil {
		return err
	}
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, e.stdout, e.stderr
	// A process group of its own: a Ctrl-C at the terminal reaches this
	// process only, which passes it on once. Two signals at once (the
	// terminal's and ours) would end the client before it restored what
	// it changed.
	ownProcessGroup(c)
	done := make(chan struct{})
	defer close(done)
	if err := l.Start(l.B.Name, c); err != nil {
		return fmt.Errorf("start the client in %s: %w", l.B.Netns, err)
	}
	go func() {
		select {
		case <-ctx.Done():
			c.Process.Signal(os.Interrupt)
		case <-done:
		}
	}()
	err = c.Wait()
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		if xe.ExitCode() == ExitUsage {
			return usagef("wirespeed %s in %s: usage error (above)", args[0], l.B.Netns)
		}
		return fmt.Errorf("wirespeed %s in %s exited with status %d", args[0], l.B.Netns, xe.ExitCode())
	}
	if err != nil {
		return fmt.Errorf("wirespeed %s in %s: %w", args[0], l.B.Netns, err)
	}
	return nil
}
