package cli

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"wirespeed/internal/client"
	"wirespeed/internal/server"
)

// checkFlags are the flags of `wirespeed check`.
type checkFlags struct {
	sec     runSecurityFlags
	timeout time.Duration
}

func newCheckCmd(e *env) *cobra.Command {
	f := &checkFlags{}
	cmd := &cobra.Command{
		Use:   "check HOST[:PORT]",
		Short: "Check that a wirespeed server answers and, with --psk-file, that it knows the key",
		Long: `Connect to a wirespeed server, exchange hellos and, with --psk-file (or
TLS), authenticate both ways, then say bye: no test is run and none of the
server's test slots is taken, so a check never makes a busy server busier
nor is refused by one. Exit status 0 when the server answered as a
wirespeed server speaking a common protocol version (and proved the key),
1 otherwise, saying why.

It is the readiness probe of deploy/kubernetes: unlike a TCP connect, it
fails for a server that listens but does not serve, one of another
protocol or version, and one that does not know the key the probe reads
from the same Secret.`,
		Example: `  wirespeed check 127.0.0.1:7575 --psk-file /etc/wirespeed/psk
  wirespeed check server.example --timeout 2s`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("%s takes one server, HOST[:PORT], got %d arguments", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd.Context(), e, f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	f.sec.register(fl)
	fl.DurationVar(&f.timeout, "timeout", 5*time.Second, "give up when the connect and the handshake take longer than this")
	return cmd
}

func runCheck(ctx context.Context, e *env, f *checkFlags, target string) error {
	if f.timeout <= 0 {
		return usagef("--timeout %v must be more than 0", f.timeout)
	}
	host, port, err := parseTarget(target, server.DefaultPort, false)
	if err != nil {
		return err
	}
	if host == "" {
		return usagef("check needs a server: HOST[:PORT]")
	}
	sec, err := f.sec.security(false)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	c, err := client.Dial(ctx, client.Config{Addr: addr, Tool: version(), Hostname: e.hostname, Logger: e.log,
		HandshakeTimeout: f.timeout, Security: sec})
	if err != nil {
		return err // Dial names the address and what to do
	}
	hello := c.Server()
	c.Close()
	auth := "no key asked"
	if sec.PSK != nil {
		auth = "both sides proved the pre-shared key"
	}
	fmt.Fprintf(e.stdout, "%s: %s %s, protocol %d (%s), %s\n", addr, hello.Protocol, hello.Tool, hello.Version, hello.Hostname, auth)
	return nil
}
