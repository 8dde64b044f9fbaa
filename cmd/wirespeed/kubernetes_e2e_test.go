package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"wirespeed/internal/record"

	"wirespeed/internal/archive"
	"wirespeed/internal/result"
)

// The end-to-end test of deploy/kubernetes on a real single-node cluster:
// deploy/kubernetes-e2e/cluster.sh starts Kubernetes (built once into
// /var/cache/wirespeed-k8s) inside a network namespace of its own, so
// every pod and service address exists only there; the test reaches the
// cluster only through that namespace (the cache's kubectl run by
// cluster.sh inside it) and reads the pods' kernel figures through the
// pods' own namespaces.

const (
	k8sScript  = "../../deploy/kubernetes-e2e/cluster.sh"
	k8sOverlay = "../../deploy/kubernetes-e2e"
	k8sNS      = "wirespeed" // deploy/kubernetes/namespace.yaml
	// The labels of deploy/kubernetes.
	labelName      = "app.kubernetes.io/name"
	labelComponent = "app.kubernetes.io/component"
)

// k8sCluster is a cluster cluster.sh brought up for the test.
type k8sCluster struct {
	t      *testing.T
	script string
	env    []string
}

// startK8s brings the cluster up, or skips saying what is missing. It is
// taken down when the test ends (WIRESPEED_K8S_KEEP=1 leaves it up, for
// a look with `cluster.sh kubectl`).
func startK8s(t *testing.T) *k8sCluster {
	t.Helper()
	script, err := filepath.Abs(k8sScript)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("WIRESPEED_K8S_E2E") != "1" {
		t.Skipf("the Kubernetes end-to-end test runs with WIRESPEED_K8S_E2E=1 (.ci/run sets it when the cluster cache is built: %s build, once per machine)", script)
	}
	if os.Geteuid() != 0 {
		t.Skip("the Kubernetes end-to-end test needs root: it runs a cluster in a network namespace")
	}
	for _, c := range []string{"nsenter", "containerd", "runc", "ctr", "etcd", "etcdctl", "iptables", "ipset", "openssl", "ip"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("%s is missing: apt-get install containerd runc containernetworking-plugins etcd-server etcd-client iptables ipset openssl iproute2", c)
		}
	}
	if err := exec.Command("bash", script, "complete").Run(); err != nil {
		t.Skipf("the cluster cache is not complete: build it once with `%s build` (about 35 minutes on 2 cores, 6.5 GB in /var/cache/wirespeed-k8s)", script)
	}
	name := os.Getenv("WIRESPEED_K8S_NAME")
	if name == "" {
		name = "e2e"
	}
	c := &k8sCluster{t: t, script: script, env: append(os.Environ(), "WIRESPEED_K8S_NAME="+name)}
	keep := os.Getenv("WIRESPEED_K8S_KEEP") == "1"
	if _, err := os.Stat("/run/netns/wirespeed-k8s-" + name); err == nil {
		if !keep {
			// Left up by a run that was killed before its cleanup: the
			// name is this test's, so is the cluster.
			t.Logf("cluster %s was left up (a killed run?): taking it down first; WIRESPEED_K8S_KEEP=1 reuses a cluster instead", name)
			c.down()
			if _, err := os.Stat("/run/netns/wirespeed-k8s-" + name); err == nil {
				t.Fatalf("cluster %s is still up after cluster.sh down", name)
			}
		} else {
			// A cluster kept from an earlier run: start from a clean slate.
			c.mustKubectl(nil, "delete", "namespace", k8sNS, "--ignore-not-found", "--wait", "--timeout", "2m")
			if out, err := c.run(5*time.Minute, nil, "images"); err != nil {
				t.Fatalf("cluster.sh images: %v\n%s", err, out)
			}
			t.Logf("reusing cluster %s (WIRESPEED_K8S_KEEP=1)", name)
			return c
		}
	}
	start := time.Now()
	out, err := c.run(3*time.Minute, nil, "up")
	if err != nil {
		c.down()
		t.Fatalf("cluster.sh up: %v\n%s", err, out)
	}
	t.Logf("cluster up in %.1f s (node Ready, CoreDNS available):\n%s", time.Since(start).Seconds(), strings.TrimSpace(out))
	t.Cleanup(func() {
		if keep {
			t.Logf("cluster %s left up (WIRESPEED_K8S_KEEP=1): %s down", name, script)
			return
		}
		c.down()
	})
	return c
}

func (c *k8sCluster) down() {
	out, err := c.run(2*time.Minute, nil, "down")
	if err != nil {
		c.t.Errorf("cluster.sh down: %v\n%s", err, out)
	} else if strings.Contains(out, "host differs") {
		c.t.Logf("cluster.sh down:\n%s", out)
	}
}

// run runs cluster.sh with args, stdin, and a time limit.
func (c *k8sCluster) run(limit time.Duration, stdin []byte, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{c.script}, args...)...)
	cmd.Env = c.env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// kubectl runs the cache's kubectl inside the cluster's namespace.
func (c *k8sCluster) kubectl(stdin []byte, args ...string) (string, error) {
	return c.run(2*time.Minute, stdin, append([]string{"kubectl"}, args...)...)
}

func (c *k8sCluster) mustKubectl(stdin []byte, args ...string) string {
	c.t.Helper()
	out, err := c.kubectl(stdin, args...)
	if err != nil {
		c.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// getJSON reads an object or a list as JSON into v.
func (c *k8sCluster) getJSON(v any, args ...string) {
	c.t.Helper()
	out, err := c.kubectl(nil, append(append([]string{"-n", k8sNS, "get"}, args...), "-o", "json")...)
	if err != nil {
		c.t.Fatalf("kubectl get %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("kubectl get %s: %v", strings.Join(args, " "), err)
	}
}

// k8sPod is what the test reads of a pod.
type k8sPod struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec   json.RawMessage `json:"spec"`
	Status struct {
		Phase      string `json:"phase"`
		PodIP      string `json:"podIP"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
		ContainerStatuses []k8sContainerStatus `json:"containerStatuses"`
	} `json:"status"`
}

type k8sContainerStatus struct {
	Name         string `json:"name"`
	ContainerID  string `json:"containerID"`
	RestartCount int    `json:"restartCount"`
	Started      *bool  `json:"started"`
	State        struct {
		Running *struct{} `json:"running"`
		// Terminated is set for a container that ended.
		Terminated *struct {
			ExitCode int    `json:"exitCode"`
			Reason   string `json:"reason"`
		} `json:"terminated"`
	} `json:"state"`
	LastState struct {
		Terminated *struct {
			Reason string `json:"reason"`
		} `json:"terminated"`
	} `json:"lastState"`
}

func (p k8sPod) ready() bool {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

func (c *k8sCluster) pods(selector string) []k8sPod {
	c.t.Helper()
	var list struct {
		Items []k8sPod `json:"items"`
	}
	c.getJSON(&list, "pods", "-l", selector)
	return list.Items
}

// waitPods polls until cond holds for the pods selector names, and
// returns them; it fails the test after limit.
func (c *k8sCluster) waitPods(limit time.Duration, selector, what string, cond func([]k8sPod) bool) []k8sPod {
	c.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		pods := c.pods(selector)
		if cond(pods) {
			return pods
		}
		if time.Now().After(deadline) {
			out, _ := c.kubectl(nil, "-n", k8sNS, "get", "pods", "-o", "wide")
			ev, _ := c.kubectl(nil, "-n", k8sNS, "get", "events", "--sort-by", ".lastTimestamp")
			c.t.Fatalf("%s: not within %v\n%s\n%s", what, limit, out, ev)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// hostPID is the process of a pod's container, as the node's kernel
// sees it: read from the cluster's containerd.
func (c *k8sCluster) hostPID(cs k8sContainerStatus) int {
	c.t.Helper()
	id := strings.TrimPrefix(cs.ContainerID, "containerd://")
	out, err := c.run(time.Minute, nil, "exec", "bash", "-c",
		`ctr --address "$0" -n k8s.io tasks ls | awk -v id="$1" '$1 == id {print $2}'`,
		c.stateDir()+"/containerd/containerd.sock", id)
	pid, perr := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || perr != nil || pid <= 0 {
		c.t.Fatalf("the host PID of container %s (%s): %v %v: %q", cs.Name, id, err, perr, out)
	}
	return pid
}

func (c *k8sCluster) stateDir() string {
	if s := os.Getenv("WIRESPEED_K8S_STATE"); s != "" {
		return s
	}
	for _, e := range c.env {
		if v, ok := strings.CutPrefix(e, "WIRESPEED_K8S_NAME="); ok {
			return "/var/tmp/wirespeed-k8s-" + v
		}
	}
	return "/var/tmp/wirespeed-k8s-e2e"
}

// ethBytes reads how many bytes the pod's eth0 sent and received, from
// the kernel's counters in the pod's own network namespace.
func ethBytes(t *testing.T, pid int) (tx, rx uint64) {
	t.Helper()
	out, err := exec.Command("nsenter", "--net=/proc/"+strconv.Itoa(pid)+"/ns/net", "--", "ip", "-j", "-s", "link", "show", "eth0").Output()
	if err != nil {
		t.Fatalf("the counters of pid %d's eth0: %v", pid, err)
	}
	var links []struct {
		Stats64 struct {
			RX struct {
				Bytes uint64 `json:"bytes"`
			} `json:"rx"`
			TX struct {
				Bytes uint64 `json:"bytes"`
			} `json:"tx"`
		} `json:"stats64"`
	}
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		t.Fatalf("ip -j -s link: %v: %s", err, out)
	}
	return links[0].Stats64.TX.Bytes, links[0].Stats64.RX.Bytes
}

func randomKey(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestKubernetesE2E deploys deploy/kubernetes with the e2e overlay on a
// real cluster and checks what the manifests promise: the servers become
// ready through a real wirespeed check; a server with another key never
// does; a mesh round from the CronJob finds every ready server through
// the headless service's DNS, measures every ordered pair (the bytes
// agree with the pods' kernel counters) and writes its document and its
// archive; the NetworkPolicy lets the mesh through and refuses a pod
// without the labels; a client or a server without the Secret's key is
// refused; the pods run as the manifests say (user, capabilities, a
// read-only root, their memory limit) as the kernel sees them.
func TestKubernetesE2E(t *testing.T) {
	c := startK8s(t)

	// The results volume of the mesh round: a node directory owned by the
	// pods' user.
	results, err := os.MkdirTemp("/var/tmp", "wirespeed-e2e-results-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(results) })
	if err := os.Chmod(results, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(results, 65532, 65532); err != nil {
		t.Fatal(err)
	}
	overlay, err := filepath.Abs(k8sOverlay)
	if err != nil {
		t.Fatal(err)
	}
	kust := t.TempDir()
	// kustomize takes another kustomization only by a relative path.
	if overlay, err = filepath.Rel(kust, overlay); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kust, "kustomization.yaml"), fmt.Appendf(nil, `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - %s
patches:
  - patch: |-
      apiVersion: batch/v1
      kind: CronJob
      metadata: {name: wirespeed-mesh, namespace: wirespeed}
      spec:
        jobTemplate:
          spec:
            template:
              spec:
                volumes:
                  - name: results
                    hostPath: {path: %s, type: Directory}
`, overlay, results), 0o644); err != nil {
		t.Fatal(err)
	}

	// The namespace and the key as docs/kubernetes.md makes them, then
	// everything else.
	c.mustKubectl(nil, "apply", "-f", "../../deploy/kubernetes/namespace.yaml")
	key, rogueKey := randomKey(t), randomKey(t)
	c.mustKubectl(nil, "-n", k8sNS, "create", "secret", "generic", "wirespeed-psk", "--from-literal=psk="+key)
	c.mustKubectl(nil, "-n", k8sNS, "create", "secret", "generic", "wirespeed-psk-rogue", "--from-literal=psk="+rogueKey)
	applied := time.Now()
	c.mustKubectl(nil, "apply", "-k", kust)

	// A server without the Secret's key: the DaemonSet's pod spec (its
	// readiness probe included, which proves the Secret's key), its server
	// started with another key. A probe that did not check the key (a TCP
	// connect, one that always succeeds) would call it ready, and the
	// headless service would hand it to the mesh.
	var ds struct {
		Spec struct {
			Template struct {
				Metadata struct {
					Labels map[string]string `json:"labels"`
				} `json:"metadata"`
				Spec map[string]any `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	c.getJSON(&ds, "daemonset", "wirespeed-server")
	rogueSpec := ds.Spec.Template.Spec
	serveWithKey(t, rogueSpec, "wirespeed-psk-rogue")
	rogueLabels := map[string]string{"wirespeed.example/e2e": "rogue"}
	for k, v := range ds.Spec.Template.Metadata.Labels {
		rogueLabels[k] = v
	}
	// A ReplicaSet of its own: a bare pod with the servers' labels would be
	// adopted by the DaemonSet, and deleted as a second pod on the node.
	rs := map[string]any{
		"apiVersion": "apps/v1", "kind": "ReplicaSet",
		"metadata": map[string]any{"name": "wirespeed-rogue-server", "namespace": k8sNS},
		"spec": map[string]any{
			"replicas": 1,
			"selector": map[string]any{"matchLabels": map[string]string{"wirespeed.example/e2e": "rogue"}},
			"template": map[string]any{"metadata": map[string]any{"labels": rogueLabels}, "spec": rogueSpec},
		},
	}
	b, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	c.mustKubectl(b, "create", "-f", "-")

	serverSel := labelName + "=wirespeed," + labelComponent + "=server"
	servers := c.waitPods(3*time.Minute, serverSel+",!wirespeed.example/e2e", "three ready servers", func(ps []k8sPod) bool {
		n := 0
		for _, p := range ps {
			if p.ready() {
				n++
			}
		}
		return n == 3 && len(ps) == 3
	})
	toReady := time.Since(applied)
	var ips []string
	for _, p := range servers {
		ips = append(ips, p.Status.PodIP)
	}
	slices.Sort(ips)
	t.Logf("3 servers Ready %.1f s after kubectl apply -k (a DaemonSet pod, two of the Deployment): %s", toReady.Seconds(), strings.Join(ips, " "))

	rogue := c.waitPods(90*time.Second, "wirespeed.example/e2e=rogue", "the rogue server running and probed", func(ps []k8sPod) bool {
		if len(ps) != 1 || len(ps[0].Status.ContainerStatuses) == 0 || ps[0].Status.ContainerStatuses[0].State.Running == nil {
			return false
		}
		return ps[0].ready() || probeFailures(c, ps[0].Metadata.Name) >= 2
	})[0]
	if rogue.ready() {
		t.Errorf("the server without the Secret's key (%s) is Ready: its readiness probe did not check the key", rogue.Status.PodIP)
	} else {
		t.Logf("the server with another key (%s) is running and not Ready: %s", rogue.Status.PodIP, lastProbeFailure(c, rogue.Metadata.Name))
	}

	// The headless service's endpoints are the three ready servers, not
	// the rogue.
	var slices_ struct {
		Items []struct {
			Endpoints []struct {
				Addresses  []string `json:"addresses"`
				Conditions struct {
					Ready *bool `json:"ready"`
				} `json:"conditions"`
			} `json:"endpoints"`
		} `json:"items"`
	}
	c.getJSON(&slices_, "endpointslices", "-l", "kubernetes.io/service-name=wirespeed")
	var ready []string
	for _, s := range slices_.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				ready = append(ready, e.Addresses...)
			}
		}
	}
	slices.Sort(ready)
	if !slices.Equal(ready, ips) {
		t.Errorf("the headless service's ready endpoints are %v, want the servers %v", ready, ips)
	}

	// The pods' kernel counters before the round.
	pids := map[string]int{}
	before := map[string]uint64{}
	for _, p := range servers {
		pid := c.hostPID(p.Status.ContainerStatuses[0])
		pids[p.Status.PodIP] = pid
		before[p.Status.PodIP], _ = ethBytes(t, pid)
	}

	// A mesh round, as an operator starts one off schedule.
	jobStart := time.Now()
	c.mustKubectl(nil, "-n", k8sNS, "create", "job", "--from=cronjob/wirespeed-mesh", "wirespeed-mesh-e2e")
	waitJob(t, c, "wirespeed-mesh-e2e", 3*time.Minute)
	round := time.Since(jobStart)
	logs := c.mustKubectl(nil, "-n", k8sNS, "logs", "job/wirespeed-mesh-e2e")
	t.Logf("mesh round: the job completed %.1f s after kubectl create job; its log:\n%s", round.Seconds(), logs)

	after := map[string]uint64{}
	for ip, pid := range pids {
		after[ip], _ = ethBytes(t, pid)
	}

	b, err = os.ReadFile(filepath.Join(results, "mesh.json"))
	if err != nil {
		t.Fatalf("the round's document: %v", err)
	}
	var doc result.MeshDocument
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("mesh.json: %v", err)
	}
	checkMeshDoc(t, doc, ips, before, after)

	// The archive the round wrote to, read back by this test.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	target, err := archive.ParseTarget(filepath.Join(results, "archive.db"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := archive.Open(ctx, target)
	if err != nil {
		t.Fatalf("the round's archive: %v", err)
	}
	defer a.Close()
	rows, err := a.Results(ctx, archive.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	checkArchive(t, rows, doc)

	// The NetworkPolicy and the key, from pods of the CronJob's own spec:
	// one with the mesh's labels, one without.
	var cj struct {
		Spec struct {
			JobTemplate struct {
				Spec struct {
					Template struct {
						Spec map[string]any `json:"spec"`
					} `json:"template"`
				} `json:"spec"`
			} `json:"jobTemplate"`
		} `json:"spec"`
	}
	c.getJSON(&cj, "cronjob", "wirespeed-mesh")
	target0 := ips[0]
	// Each check retries while nothing answers (--wait), as the CronJob's
	// init container does: a new pod's first connections can come before
	// kube-router has let it through. Through the policy, a minute is
	// plenty; refused by it, 15 s of refusals say it is the policy.
	check := func(addr, key, wait string) []string {
		args := []string{"check", addr, "--timeout", "3s", "--wait", wait}
		if key != "" {
			args = append(args, "--psk-file", key)
		}
		return args
	}
	checks := map[string][]string{
		"right-key":    check(net.JoinHostPort(target0, "7575"), "/etc/wirespeed/psk", "60s"),
		"wrong-key":    check(net.JoinHostPort(target0, "7575"), "/etc/wirespeed-rogue/psk", "60s"),
		"rogue-server": check(net.JoinHostPort(rogue.Status.PodIP, "7575"), "/etc/wirespeed/psk", "60s"),
		"refused":      check(net.JoinHostPort(target0, "7575"), "/etc/wirespeed/psk", "15s"),
		"metrics-port": check(net.JoinHostPort(target0, "9575"), "", "15s"),
	}
	labelled := map[string]string{labelName: "wirespeed", labelComponent: "mesh", "wirespeed.example/e2e": "probe"}
	unlabelled := map[string]string{"app": "not-wirespeed", "wirespeed.example/e2e": "probe"}
	createPod(t, c, "e2e-labelled", labelled, checkPodSpec(t, cj.Spec.JobTemplate.Spec.Template.Spec, checks, "right-key", "wrong-key", "rogue-server"))
	createPod(t, c, "e2e-unlabelled", unlabelled, checkPodSpec(t, cj.Spec.JobTemplate.Spec.Template.Spec, checks, "refused", "metrics-port"))
	probes := c.waitPods(2*time.Minute, "wirespeed.example/e2e=probe", "the check pods done", func(ps []k8sPod) bool {
		if len(ps) != 2 {
			return false
		}
		for _, p := range ps {
			if p.Status.Phase != "Succeeded" && p.Status.Phase != "Failed" {
				return false
			}
		}
		return true
	})
	want := map[string]struct {
		exit int
		says string
	}{
		// With the mesh's labels and the key: through.
		"e2e-labelled/right-key": {0, "both sides proved the pre-shared key"},
		// A client with another key: the server refuses it.
		"e2e-labelled/wrong-key": {1, "proof does not match this server's pre-shared key"},
		// A server with another key: refused (it finds the client's
		// proof wrong before it would have to give its own).
		"e2e-labelled/rogue-server": {1, "authentication failed"},
		// Without the labels the test port is closed by the policy (the key
		// is right: only the network can refuse it)...
		"e2e-unlabelled/refused": {1, "connect to " + net.JoinHostPort(target0, "7575")},
		// ...and the metrics port open: the connection is made, and what
		// answers is not a wirespeed server but the metrics' HTTP.
		"e2e-unlabelled/metrics-port": {1, "not a wirespeed server"},
	}
	for _, p := range probes {
		for _, cs := range p.Status.ContainerStatuses {
			id := p.Metadata.Name + "/" + cs.Name
			w, ok := want[id]
			if !ok {
				t.Errorf("unexpected container %s", id)
				continue
			}
			log, _ := c.kubectl(nil, "-n", k8sNS, "logs", p.Metadata.Name, "-c", cs.Name)
			log = strings.TrimSpace(log)
			exit := -1
			if cs.State.Terminated != nil {
				exit = cs.State.Terminated.ExitCode
			}
			if exit != w.exit || !strings.Contains(log, w.says) {
				t.Errorf("%s: exit %d, %q; want exit %d saying %q", id, exit, log, w.exit, w.says)
			} else {
				t.Logf("%s: exit %d: %s", id, exit, log)
			}
		}
	}

	// The servers as the node's kernel sees them: the manifest's user, no
	// capabilities, no privilege escalation, a read-only root, the memory
	// limit in force and never reached (no restart, no OOM kill).
	for _, p := range c.pods(serverSel) {
		cs := p.Status.ContainerStatuses[0]
		checkContainer(t, p.Metadata.Name, c.hostPID(cs), 256<<20)
		if cs.RestartCount != 0 {
			t.Errorf("%s restarted %d times (last: %+v)", p.Metadata.Name, cs.RestartCount, cs.LastState.Terminated)
		}
	}
}

// serveWithKey has the pod spec's server read its key from the Secret
// secret, mounted at /etc/wirespeed-rogue, leaving the rest (the Secret's
// key at /etc/wirespeed/psk, which the readiness probe proves) as it is.
func serveWithKey(t *testing.T, spec map[string]any, secret string) {
	t.Helper()
	spec["volumes"] = append(spec["volumes"].([]any),
		map[string]any{"name": "psk-rogue", "secret": map[string]any{"secretName": secret, "defaultMode": 0o440}})
	ctr := spec["containers"].([]any)[0].(map[string]any)
	ctr["volumeMounts"] = append(ctr["volumeMounts"].([]any),
		map[string]any{"name": "psk-rogue", "mountPath": "/etc/wirespeed-rogue", "readOnly": true})
	args := ctr["args"].([]any)
	for i := range args[:len(args)-1] {
		if args[i] == "--psk-file" {
			args[i+1] = "/etc/wirespeed-rogue/psk"
			return
		}
	}
	t.Fatal("the server's arguments have no --psk-file")
}

// checkPodSpec is the mesh pod's spec with one container per named check,
// each running `wirespeed check ...` once; the Secret's key is at
// /etc/wirespeed/psk and the rogue's at /etc/wirespeed-rogue/psk.
func checkPodSpec(t *testing.T, spec map[string]any, checks map[string][]string, names ...string) map[string]any {
	t.Helper()
	b, _ := json.Marshal(spec)
	var s map[string]any
	json.Unmarshal(b, &s)
	tmpl := s["containers"].([]any)[0].(map[string]any)
	delete(s, "initContainers") // the checks wait themselves
	var ctrs []any
	for _, n := range names {
		var ctr map[string]any
		b, _ := json.Marshal(tmpl)
		json.Unmarshal(b, &ctr)
		ctr["name"] = n
		ctr["args"] = checks[n]
		delete(ctr, "env")
		ctr["volumeMounts"] = []any{
			map[string]any{"name": "psk", "mountPath": "/etc/wirespeed", "readOnly": true},
			map[string]any{"name": "psk-rogue", "mountPath": "/etc/wirespeed-rogue", "readOnly": true},
		}
		ctrs = append(ctrs, ctr)
	}
	s["containers"] = ctrs
	s["volumes"] = []any{
		map[string]any{"name": "psk", "secret": map[string]any{"secretName": "wirespeed-psk", "defaultMode": 0o440}},
		map[string]any{"name": "psk-rogue", "secret": map[string]any{"secretName": "wirespeed-psk-rogue", "defaultMode": 0o440}},
	}
	return s
}

func createPod(t *testing.T, c *k8sCluster, name string, labels map[string]string, spec map[string]any) {
	t.Helper()
	pod := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": k8sNS, "labels": labels},
		"spec":     spec,
	}
	if _, ok := spec["restartPolicy"]; !ok || spec["restartPolicy"] == "Always" {
		spec["restartPolicy"] = "Always"
	}
	b, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	c.mustKubectl(b, "create", "-f", "-")
}

var probeFailed = regexp.MustCompile(`Readiness probe failed: (.*)`)

// probeFailures counts the readiness probe failures the kubelet reported
// for a pod (an event's count), and lastProbeFailure says the last one.
func probeFailures(c *k8sCluster, pod string) int {
	n, _ := probeEvents(c, pod)
	return n
}

func lastProbeFailure(c *k8sCluster, pod string) string {
	_, msg := probeEvents(c, pod)
	return msg
}

func probeEvents(c *k8sCluster, pod string) (int, string) {
	var evs struct {
		Items []struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
			Count   int    `json:"count"`
			Series  *struct {
				Count int `json:"count"`
			} `json:"series"`
		} `json:"items"`
	}
	c.getJSON(&evs, "events", "--field-selector", "involvedObject.name="+pod)
	n, msg := 0, ""
	for _, e := range evs.Items {
		if e.Reason != "Unhealthy" || !probeFailed.MatchString(e.Message) {
			continue
		}
		k := max(e.Count, 1)
		if e.Series != nil {
			k = max(k, e.Series.Count)
		}
		n += k
		msg = strings.TrimSpace(e.Message)
	}
	return n, msg
}

// waitJob waits for a job to complete, failing at once when it failed.
func waitJob(t *testing.T, c *k8sCluster, name string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		var job struct {
			Status struct {
				Succeeded int `json:"succeeded"`
				Failed    int `json:"failed"`
			} `json:"status"`
		}
		c.getJSON(&job, "job", name)
		if job.Status.Succeeded > 0 {
			return
		}
		if job.Status.Failed > 0 || time.Now().After(deadline) {
			logs, _ := c.kubectl(nil, "-n", k8sNS, "logs", "job/"+name, "--all-containers")
			out, _ := c.kubectl(nil, "-n", k8sNS, "describe", "job", name)
			t.Fatalf("job %s did not complete (failed %d):\n%s\n%s", name, job.Status.Failed, logs, out)
		}
		time.Sleep(time.Second)
	}
}

// checkMeshDoc checks the round's document: the peers are the ready
// servers (what the headless service's name resolved to), every ordered
// pair was measured, relayed by its source, and what each source's pairs
// delivered is no more than its pod's eth0 sent meanwhile, nor much less.
func checkMeshDoc(t *testing.T, doc result.MeshDocument, ips []string, before, after map[string]uint64) {
	t.Helper()
	if doc.Schema != result.MeshSchema || doc.Interrupted {
		t.Errorf("document schema %q, interrupted %v", doc.Schema, doc.Interrupted)
	}
	var peers []string
	for _, p := range doc.Peers {
		peers = append(peers, p.Name)
		if p.Address != net.JoinHostPort(p.Name, "7575") || p.Local {
			t.Errorf("peer %+v: want address %s:7575, relayed", p, p.Name)
		}
	}
	slices.Sort(peers)
	if !slices.Equal(peers, ips) {
		t.Fatalf("the mesh found peers %v through the headless service, want the ready servers %v", peers, ips)
	}
	seen := map[[2]string]bool{}
	sent := map[string]int64{}
	for _, p := range doc.Pairs {
		seen[[2]string{p.Source, p.Destination}] = true
		if p.Result == nil || p.Error != "" {
			t.Errorf("pair %s -> %s: %s", p.Source, p.Destination, p.Error)
			continue
		}
		if p.Via != result.ViaRelay {
			t.Errorf("pair %s -> %s measured %s, want relayed by its source", p.Source, p.Destination, p.Via)
		}
		s := p.Result.Summary
		if s.BitsPerSecond <= 0 || s.Bytes <= 0 {
			t.Errorf("pair %s -> %s: %v bits/s, %d bytes", p.Source, p.Destination, s.BitsPerSecond, s.Bytes)
		}
		sent[p.Source] += max(s.Bytes, s.SenderBytes)
	}
	for _, a := range ips {
		for _, b := range ips {
			if a != b && !seen[[2]string{a, b}] {
				t.Errorf("pair %s -> %s was not measured", a, b)
			}
		}
	}
	if len(doc.Pairs) != len(ips)*(len(ips)-1) {
		t.Errorf("%d pairs, want %d", len(doc.Pairs), len(ips)*(len(ips)-1))
	}
	// The payload a source's tests carried went out of its pod's eth0,
	// headers and the other tests' control traffic besides: the kernel
	// counted at least as much, and (TCP/IP headers of MSS-sized
	// segments being under 5% of them, and the source's other traffic a
	// few kilobytes) less than a fifth more.
	for _, ip := range ips {
		wire := after[ip] - before[ip]
		payload := float64(sent[ip])
		ratio := payload / float64(wire)
		t.Logf("%s: its pairs' payload %.0f bytes, its eth0 sent %d bytes (%.3f)", ip, payload, wire, ratio)
		if math.IsNaN(ratio) || ratio > 1 || ratio < 1/1.2 {
			t.Errorf("%s: the mesh says its pairs carried %.0f bytes, the pod's eth0 sent %d: ratio %.3f, want within [0.83, 1]", ip, payload, wire, ratio)
		}
	}
}

// checkArchive checks that the round's archive holds one row per pair,
// with the document's figures.
func checkArchive(t *testing.T, rows []archive.Row, doc result.MeshDocument) {
	t.Helper()
	want := map[[2]string]float64{}
	for _, p := range doc.Pairs {
		if p.Result != nil {
			want[[2]string{p.Source, p.Destination}] = p.Result.Summary.BitsPerSecond
		}
	}
	got := map[[2]string]float64{}
	for _, r := range rows {
		if r.Command != "mesh" {
			t.Errorf("archive row %d: command %q, want mesh", r.ID, r.Command)
		}
		got[[2]string{r.Source, r.Destination}] = r.Figures[record.Throughput.Name]
	}
	if len(rows) != len(want) {
		t.Errorf("the archive holds %d rows, the round measured %d pairs", len(rows), len(want))
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || math.Abs(g-v) > 1e-6*v {
			t.Errorf("archive %s -> %s: %v bits/s (present %v), the document says %v", k[0], k[1], g, ok, v)
		}
	}
}

// checkContainer reads a container's process from /proc: user 65532, no
// effective capabilities, no_new_privs, a read-only root mount, and its
// memory cgroup's limit (cgroup v1) equal to limit and not reached.
func checkContainer(t *testing.T, name string, pid int, limit int64) {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	for _, l := range strings.Split(string(status), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			fields[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	if fields["Uid"] != "65532 65532 65532 65532" || fields["Gid"] != "65532 65532 65532 65532" {
		t.Errorf("%s: uid %q gid %q, want 65532", name, fields["Uid"], fields["Gid"])
	}
	for _, k := range []string{"CapEff", "CapPrm", "CapBnd"} {
		if fields[k] != "0000000000000000" {
			t.Errorf("%s: %s %s, want none", name, k, fields[k])
		}
	}
	if fields["NoNewPrivs"] != "1" || fields["Seccomp"] != "2" {
		t.Errorf("%s: NoNewPrivs %q Seccomp %q, want 1 and 2 (filter)", name, fields["NoNewPrivs"], fields["Seccomp"])
	}
	mi, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		t.Fatal(err)
	}
	rootRO := false
	for _, l := range strings.Split(string(mi), "\n") {
		f := strings.Fields(l)
		if len(f) > 5 && f[4] == "/" {
			rootRO = slices.Contains(strings.Split(f[5], ","), "ro")
		}
	}
	if !rootRO {
		t.Errorf("%s: its root file system is mounted read-write", name)
	}
	cg, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(cg), "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 || !slices.Contains(strings.Split(parts[1], ","), "memory") {
			continue
		}
		dir := filepath.Join("/sys/fs/cgroup/memory", parts[2])
		lim := readInt(t, filepath.Join(dir, "memory.limit_in_bytes"))
		peak := readInt(t, filepath.Join(dir, "memory.max_usage_in_bytes"))
		failcnt := readInt(t, filepath.Join(dir, "memory.failcnt"))
		t.Logf("%s: memory peak %.1f MiB of its %.0f MiB limit", name, float64(peak)/(1<<20), float64(lim)/(1<<20))
		if lim != limit || peak >= lim || failcnt != 0 {
			t.Errorf("%s: memory limit %d (want %d), peak %d, hit %d times", name, lim, limit, peak, failcnt)
		}
		return
	}
	t.Errorf("%s: no memory cgroup in /proc/%d/cgroup", name, pid)
}

func readInt(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n
}
