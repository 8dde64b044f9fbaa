package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"wirespeed/internal/client"
	"wirespeed/internal/control"
	"wirespeed/internal/server"
)

// checkFlags are the flags of `wirespeed check`.
type checkFlags struct {
	sec     runSecurityFlags
	timeout time.Duration
	wait    time.Duration
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
from the same Secret.

--wait keeps trying while the server cannot be reached (nothing listens
yet, the connection is refused or unanswered, the name does not resolve
yet) for up to that long: for a script or an init container that starts
before its server, or before a NetworkPolicy controller has let its new
pod through. A server that answers and refuses the key, or speaks
another protocol, ends the check at once.`,
		Example: `  wirespeed check 127.0.0.1:7575 --psk-file /etc/wirespeed/psk
  wirespeed check server.example --timeout 2s
  wirespeed check wirespeed.wirespeed.svc.cluster.local:7575 --psk-file /etc/wirespeed/psk --wait 2m`,
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
	fl.DurationVar(&f.timeout, "timeout", 5*time.Second, "give up on an attempt whose connect and handshake take longer than this")
	fl.DurationVar(&f.wait, "wait", 0, "keep trying for up to `DURATION` while the server cannot be reached (0: one attempt)")
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
	if f.wait < 0 {
		return usagef("--wait %v must not be negative", f.wait)
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	start := time.Now()
	deadline := start.Add(f.wait)
	cfg := client.Config{Addr: addr, Tool: version(), Hostname: e.hostname, Logger: e.log,
		HandshakeTimeout: f.timeout, Security: sec}
	var c *client.Client
	attempts := 0
	for pause := 100 * time.Millisecond; ; pause = min(2*pause, 2*time.Second) {
		attempts++
		actx, cancel := context.WithTimeout(ctx, f.timeout)
		c, err = client.Dial(actx, cfg)
		cancel()
		if err == nil {
			break
		}
		left := time.Until(deadline)
		if !unreachable(err) || left <= 0 || ctx.Err() != nil {
			if attempts > 1 {
				return fmt.Errorf("%w (after %d attempts in %.1f s)", err, attempts, time.Since(start).Seconds())
			}
			return err // Dial names the address and what to do
		}
		select {
		case <-time.After(min(pause, left)):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	hello := c.Server()
	c.Close()
	auth := "no key asked"
	if sec.PSK != nil {
		auth = "both sides proved the pre-shared key"
	}
	waited := ""
	if attempts > 1 {
		waited = fmt.Sprintf(", at attempt %d after %.1f s", attempts, time.Since(start).Seconds())
	}
	fmt.Fprintf(e.stdout, "%s: %s %s, protocol %d (%s), %s%s\n", addr, hello.Protocol, hello.Tool, hello.Version, hello.Hostname, auth, waited)
	return nil
}

// unreachable says whether a failed dial never reached a server: worth
// another try under --wait. A server that answered (a refused key,
// another protocol or version) is not.
func unreachable(err error) bool {
	var dns *net.DNSError
	var ne net.Error
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || errors.As(err, &dns) ||
		(errors.As(err, &ne) && ne.Timeout() && !errors.Is(err, control.ErrNotWirespeed))
}
