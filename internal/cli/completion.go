package cli

import (
	"net"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"wirespeed/internal/lab"
	"wirespeed/internal/netdev"
	"wirespeed/internal/spec"
)

// Shell completion beyond cobra's commands and flag names: test names,
// matrix --set keys and values, and device names. `wirespeed completion
// bash` (zsh, fish, powershell) writes the script; the script asks
// `wirespeed __complete ...`, which TestCompletion runs.

// completeTests completes -t with the test names.
func completeTests(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, k := range spec.Kinds {
		if strings.HasPrefix(string(k), strings.ToUpper(toComplete)) {
			out = append(out, string(k))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeLocalDevs completes a device of this host's network namespace.
func completeLocalDevs(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []string
	for _, i := range ifs {
		if strings.HasPrefix(i.Name, toComplete) {
			out = append(out, i.Name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeRemoteDevs completes matrix --remote-dev: the devices of the
// --remote-netns namespace when one is given (the server's own are not
// known before connecting).
func completeRemoteDevs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	name, _ := cmd.Flags().GetString("remote-netns")
	if name == "" {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ns, err := netns.GetFromName(name)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	defer h.Close()
	links, err := h.LinkList()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []string
	for _, l := range links {
		if n := l.Attrs().Name; strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeSet completes matrix --set NAME=VALUE,VALUE...: before the "="
// the setting names (mtu and ethtool's offload groups, bare or with a
// local: or remote: side), after it the usual values.
func completeSet(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if name, vals, ok := strings.Cut(toComplete, "="); ok {
		base := name[strings.LastIndex(name, ":")+1:]
		choices := []string{"on,off", "off,on", "on", "off"}
		if base == "mtu" {
			choices = []string{"1500,9000", "1500", "9000"}
		}
		var out []string
		for _, c := range choices {
			if strings.HasPrefix(c, vals) {
				out = append(out, name+"="+c)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	names := []string{"mtu"}
	for _, g := range netdev.Groups {
		names = append(names, g.Short)
	}
	var out []string
	for _, side := range []string{"", "local:", "remote:"} {
		for _, n := range names {
			if c := side + n + "="; strings.HasPrefix(c, toComplete) {
				out = append(out, c)
			}
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeLabs completes a lab's --name with the labs that exist.
func completeLabs(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	names, err := lab.List()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// registerCompletions attaches the completion functions to the flags of
// the commands that have them.
func registerCompletions(root *cobra.Command) {
	register := func(path []string, flag string, fn cobra.CompletionFunc) {
		cmd, _, err := root.Find(path)
		if err != nil || cmd.Flags().Lookup(flag) == nil {
			return
		}
		cmd.RegisterFlagCompletionFunc(flag, fn)
	}
	register([]string{"env"}, "dev", completeLocalDevs)
	register([]string{"matrix"}, "dev", completeLocalDevs)
	register([]string{"matrix"}, "remote-dev", completeRemoteDevs)
	register([]string{"matrix"}, "set", completeSet)
	for _, sub := range []string{"up", "down", "status", "exec", "run"} {
		register([]string{"lab", sub}, "side", cobra.FixedCompletions([]string{"a", "b"}, cobra.ShellCompDirectiveNoFileComp))
		if sub != "up" {
			register([]string{"lab", sub}, "name", completeLabs)
		}
	}
}
