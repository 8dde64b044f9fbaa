package cli

import (
	"bufio"
	"encoding/json"
	"io"
	"maps"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"wirespeed/internal/server"
)

// The Kubernetes manifests in deploy/kubernetes and the Dockerfile are
// checked against each other and against the binary: names, labels,
// selectors, ports, the Secret and where it is mounted, and every
// wirespeed command line, parsed by the real command tree.

const deployDir = "../../deploy/kubernetes"

type k8sMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type k8sObject struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   k8sMeta           `json:"metadata"`
	Spec       json.RawMessage   `json:"spec"`
	StringData map[string]string `json:"stringData"`
	Data       map[string]string `json:"data"`
	// Kustomization
	Resources []string `json:"resources"`
	Images    []struct {
		Name string `json:"name"`
	} `json:"images"`
	file string
}

type k8sPodTemplate struct {
	Metadata k8sMeta    `json:"metadata"`
	Spec     k8sPodSpec `json:"spec"`
}

type k8sPodSpec struct {
	HostNetwork     bool   `json:"hostNetwork"`
	RestartPolicy   string `json:"restartPolicy"`
	SecurityContext struct {
		RunAsNonRoot *bool `json:"runAsNonRoot"`
		RunAsUser    int   `json:"runAsUser"`
	} `json:"securityContext"`
	Containers     []k8sContainer `json:"containers"`
	InitContainers []k8sContainer `json:"initContainers"`
	Volumes        []struct {
		Name   string `json:"name"`
		Secret *struct {
			SecretName string `json:"secretName"`
			Items      []struct {
				Key  string `json:"key"`
				Path string `json:"path"`
			} `json:"items"`
		} `json:"secret"`
	} `json:"volumes"`
}

type k8sContainer struct {
	Name    string   `json:"name"`
	Image   string   `json:"image"`
	Command []string `json:"command"`
	Args    []string `json:"args"`
	Ports   []struct {
		Name          string `json:"name"`
		ContainerPort int    `json:"containerPort"`
	} `json:"ports"`
	ReadinessProbe  *k8sProbe `json:"readinessProbe"`
	LivenessProbe   *k8sProbe `json:"livenessProbe"`
	SecurityContext struct {
		AllowPrivilegeEscalation *bool `json:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   *bool `json:"readOnlyRootFilesystem"`
		Capabilities             struct {
			Drop []string `json:"drop"`
		} `json:"capabilities"`
	} `json:"securityContext"`
	VolumeMounts []struct {
		Name      string `json:"name"`
		MountPath string `json:"mountPath"`
	} `json:"volumeMounts"`
}

type k8sProbe struct {
	Exec *struct {
		Command []string `json:"command"`
	} `json:"exec"`
	TCPSocket *struct {
		Port json.RawMessage `json:"port"`
	} `json:"tcpSocket"`
	HTTPGet *struct {
		Path string          `json:"path"`
		Port json.RawMessage `json:"port"`
	} `json:"httpGet"`
}

// loadManifests parses every YAML file of deploy/kubernetes, by kind.
func loadManifests(t *testing.T) map[string]k8sObject {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(deployDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", deployDir, err)
	}
	objs := map[string]k8sObject{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "\n---") {
			t.Errorf("%s: keep one object per file", f)
		}
		j, err := yaml.YAMLToJSON(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var o k8sObject
		if err := json.Unmarshal(j, &o); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		o.file = filepath.Base(f)
		if o.APIVersion == "" || o.Kind == "" {
			t.Errorf("%s: no apiVersion or kind", f)
		}
		if _, dup := objs[o.Kind]; dup {
			t.Errorf("%s: a second %s", f, o.Kind)
		}
		objs[o.Kind] = o
	}
	for _, kind := range []string{"Namespace", "Secret", "DaemonSet", "Service", "NetworkPolicy", "Job", "CronJob", "Kustomization"} {
		if _, ok := objs[kind]; !ok {
			t.Fatalf("no %s in %s", kind, deployDir)
		}
	}
	return objs
}

func specOf[T any](t *testing.T, o k8sObject) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(o.Spec, &v); err != nil {
		t.Fatalf("%s: spec: %v", o.file, err)
	}
	return v
}

// subset reports whether every label of sel is in labels.
func subset(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// parseArgs parses a container's wirespeed command line with the real
// command tree and returns the command, with its flags set.
func parseArgs(t *testing.T, file string, args []string) *cobra.Command {
	t.Helper()
	root := newRoot(&env{stdout: io.Discard, stderr: io.Discard})
	cmd, rest, err := root.Find(args)
	if err != nil || cmd == root {
		t.Fatalf("%s: wirespeed %s: no such command (%v)", file, strings.Join(args, " "), err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("%s: wirespeed %s: %v", file, strings.Join(args, " "), err)
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		t.Fatalf("%s: wirespeed %s: %v", file, strings.Join(args, " "), err)
	}
	return cmd
}

func flagValue(cmd *cobra.Command, name string) string {
	f := cmd.Flags().Lookup(name)
	if f == nil || !f.Changed {
		return ""
	}
	if sv, ok := f.Value.(interface{ GetSlice() []string }); ok {
		return strings.Join(sv.GetSlice(), ",")
	}
	return f.Value.String()
}

func portOf(t *testing.T, file, hostport string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(hostport)
	n, err2 := strconv.Atoi(p)
	if err != nil || err2 != nil {
		t.Fatalf("%s: %q has no port", file, hostport)
	}
	return n
}

// probePort resolves a probe's port, a number or a container port's name.
func probePort(t *testing.T, c k8sContainer, raw json.RawMessage) int {
	t.Helper()
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return n
	}
	var name string
	json.Unmarshal(raw, &name)
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Fatalf("probe port %s names no port of %s", raw, c.Name)
	return 0
}

func containerPort(c k8sContainer, name string) int {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// checkPod checks what every wirespeed pod must have: non-root, no
// privilege, one container running the image, the key mounted from the
// Secret at the path the command line's --psk-file names.
func checkPod(t *testing.T, file string, pod k8sPodSpec, secret k8sObject, image string) (k8sContainer, *cobra.Command) {
	t.Helper()
	if pod.HostNetwork {
		t.Errorf("%s: hostNetwork is a documented option, not the default", file)
	}
	if sc := pod.SecurityContext; sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == 0 {
		t.Errorf("%s: the pod must run as a non-root user", file)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", file, len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Image != image {
		t.Errorf("%s: image %q, want %q (the kustomization's)", file, c.Image, image)
	}
	if len(c.Command) > 0 {
		t.Errorf("%s: command %q overrides the image's entrypoint; give the wirespeed arguments in args", file, c.Command)
	}
	sc := c.SecurityContext
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		strings.Join(sc.Capabilities.Drop, ",") != "ALL" {
		t.Errorf("%s: container security context %+v: want no privilege escalation, a read-only root and every capability dropped", file, sc)
	}
	cmd := parseArgs(t, file, c.Args)

	psk := flagValue(cmd, "psk-file")
	if psk == "" {
		t.Fatalf("%s: wirespeed %s without --psk-file", file, cmd.Name())
	}
	found := false
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			if v.Secret.SecretName != secret.Metadata.Name {
				t.Errorf("%s: volume %s mounts secret %q, the Secret is %q", file, v.Name, v.Secret.SecretName, secret.Metadata.Name)
			}
			for _, it := range v.Secret.Items {
				if _, ok := secret.StringData[it.Key]; !ok {
					t.Errorf("%s: secret key %q is not in %s", file, it.Key, secret.file)
				}
				if path.Join(m.MountPath, it.Path) == psk {
					found = true
				}
			}
		}
	}
	if !found {
		t.Errorf("%s: --psk-file %s is not where the Secret is mounted", file, psk)
	}
	return c, cmd
}

func TestKubernetesManifests(t *testing.T) {
	objs := loadManifests(t)
	ns := objs["Namespace"].Metadata.Name
	kust := objs["Kustomization"]
	for kind, o := range objs {
		if kind != "Namespace" && kind != "Kustomization" && o.Metadata.Namespace != ns {
			t.Errorf("%s: namespace %q, want %q", o.file, o.Metadata.Namespace, ns)
		}
		if kind != "Kustomization" && o.Metadata.Labels["app.kubernetes.io/name"] != "wirespeed" {
			t.Errorf("%s: no app.kubernetes.io/name: wirespeed label", o.file)
		}
	}

	// What `kubectl apply -k` applies: every file but the Secret (whose
	// placeholder must never overwrite a real key) and the one-off Job.
	var want []string
	for _, o := range objs {
		if o.Kind != "Kustomization" && o.Kind != "Secret" && o.Kind != "Job" {
			want = append(want, o.file)
		}
	}
	for _, r := range kust.Resources {
		if _, err := os.Stat(filepath.Join(deployDir, r)); err != nil {
			t.Errorf("kustomization lists %s: %v", r, err)
		}
	}
	for _, f := range want {
		if !strings.Contains(strings.Join(kust.Resources, " "), f) {
			t.Errorf("kustomization does not list %s", f)
		}
	}
	if len(kust.Images) != 1 {
		t.Fatalf("kustomization images %+v: want the one wirespeed image", kust.Images)
	}
	image := kust.Images[0].Name

	secret := objs["Secret"]
	for k, v := range secret.StringData {
		// The placeholder must not pass for a key: servers refuse to start
		// until it is replaced.
		if len(strings.TrimSpace(v)) >= 16 {
			t.Errorf("%s: %s holds %d bytes, a usable key; keep a placeholder under 16 bytes", secret.file, k, len(v))
		}
	}

	// The servers.
	type selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	}
	ds := specOf[struct {
		Selector selector       `json:"selector"`
		Template k8sPodTemplate `json:"template"`
	}](t, objs["DaemonSet"])
	serverLabels := ds.Template.Metadata.Labels
	if !subset(ds.Selector.MatchLabels, serverLabels) {
		t.Errorf("daemonset selector %v does not select its pods %v", ds.Selector.MatchLabels, serverLabels)
	}
	srv, serve := checkPod(t, "daemonset.yaml", ds.Template.Spec, secret, image)
	if serve.Name() != "serve" {
		t.Fatalf("daemonset runs wirespeed %s, want serve", serve.Name())
	}
	port := portOf(t, "daemonset.yaml", flagValue(serve, "listen"))
	if port != server.DefaultPort || containerPort(srv, "wirespeed") != port {
		t.Errorf("serve listens on %d, the container port is %d, the default %d", port, containerPort(srv, "wirespeed"), server.DefaultPort)
	}
	metrics := portOf(t, "daemonset.yaml", flagValue(serve, "metrics-listen"))
	if containerPort(srv, "metrics") != metrics || ds.Template.Metadata.Annotations["prometheus.io/port"] != strconv.Itoa(metrics) {
		t.Errorf("--metrics-listen port %d, container port %d, scrape annotation %q", metrics, containerPort(srv, "metrics"), ds.Template.Metadata.Annotations["prometheus.io/port"])
	}
	// Ready means the server answers as a wirespeed server and proves the
	// Secret's key (wirespeed check), not that something accepts TCP.
	if p := srv.ReadinessProbe; p == nil || p.Exec == nil || len(p.Exec.Command) < 2 || p.Exec.Command[0] != "/usr/local/bin/wirespeed" {
		t.Errorf("the readiness probe should exec the image's /usr/local/bin/wirespeed check, not %+v", p)
	} else {
		check := parseArgs(t, "daemonset.yaml readinessProbe", p.Exec.Command[1:])
		if check.Name() != "check" {
			t.Errorf("the readiness probe runs wirespeed %s, want check", check.Name())
		}
		if got := check.Flags().Args(); len(got) != 1 || portOf(t, "daemonset.yaml", got[0]) != port {
			t.Errorf("the readiness probe checks %q, want the test port %d on loopback", got, port)
		}
		if k := flagValue(check, "psk-file"); k != flagValue(serve, "psk-file") {
			t.Errorf("the readiness probe proves the key in %q, serve reads %q", k, flagValue(serve, "psk-file"))
		}
	}
	if p := srv.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/metrics" || probePort(t, srv, p.HTTPGet.Port) != metrics {
		t.Errorf("the liveness probe should get /metrics on port %d", metrics)
	}
	if flagValue(serve, "allow-relay") != "true" {
		t.Error("serve without --allow-relay cannot relay the mesh's pairs")
	}
	peers := flagValue(serve, "relay-peers")
	if _, err := server.ParseRelayPeers([]string{peers}); err != nil {
		t.Errorf("--relay-peers %s: %v", peers, err)
	}

	// The headless service in front of them.
	svc := specOf[struct {
		ClusterIP string            `json:"clusterIP"`
		Selector  map[string]string `json:"selector"`
		Ports     []struct {
			Port       int             `json:"port"`
			TargetPort json.RawMessage `json:"targetPort"`
		} `json:"ports"`
	}](t, objs["Service"])
	if svc.ClusterIP != "None" {
		t.Errorf("service clusterIP %q: a headless service (None) resolves to every server", svc.ClusterIP)
	}
	if !subset(svc.Selector, serverLabels) {
		t.Errorf("service selector %v does not select the servers %v", svc.Selector, serverLabels)
	}
	if len(svc.Ports) != 1 || svc.Ports[0].Port != port || probePort(t, srv, svc.Ports[0].TargetPort) != port {
		t.Errorf("service ports %+v: want %d to the servers' %d", svc.Ports, port, port)
	}
	svcDNS := objs["Service"].Metadata.Name + "." + ns + ".svc.cluster.local"
	if !strings.Contains(","+peers+",", ","+svcDNS+",") {
		t.Errorf("--relay-peers %s does not allow the servers behind %s", peers, svcDNS)
	}

	np := specOf[struct {
		PodSelector selector `json:"podSelector"`
		Ingress     []struct {
			From []struct {
				PodSelector selector `json:"podSelector"`
			} `json:"from"`
			Ports []struct {
				Port int `json:"port"`
			} `json:"ports"`
		} `json:"ingress"`
	}](t, objs["NetworkPolicy"])
	if !maps.Equal(np.PodSelector.MatchLabels, ds.Selector.MatchLabels) {
		t.Errorf("network policy selects %v, the servers are %v", np.PodSelector.MatchLabels, ds.Selector.MatchLabels)
	}
	open := map[int]bool{}
	var from []map[string]string
	for _, in := range np.Ingress {
		for _, p := range in.Ports {
			open[p.Port] = true
			if p.Port == port {
				for _, f := range in.From {
					from = append(from, f.PodSelector.MatchLabels)
				}
			}
		}
	}
	if !open[port] || !open[metrics] {
		t.Errorf("network policy opens %v, want %d and %d", open, port, metrics)
	}

	// The mesh, once and every so often.
	job := specOf[struct {
		Template k8sPodTemplate `json:"template"`
	}](t, objs["Job"])
	cron := specOf[struct {
		Schedule          string `json:"schedule"`
		ConcurrencyPolicy string `json:"concurrencyPolicy"`
		JobTemplate       struct {
			Spec struct {
				Template k8sPodTemplate `json:"template"`
			} `json:"spec"`
		} `json:"jobTemplate"`
	}](t, objs["CronJob"])
	if len(strings.Fields(cron.Schedule)) != 5 || cron.ConcurrencyPolicy != "Forbid" {
		t.Errorf("cronjob schedule %q, concurrency %q: want a 5-field schedule and Forbid (meshes must not overlap)", cron.Schedule, cron.ConcurrencyPolicy)
	}
	for _, m := range []struct {
		file string
		tmpl k8sPodTemplate
	}{{objs["Job"].file, job.Template}, {objs["CronJob"].file, cron.JobTemplate.Spec.Template}} {
		if m.tmpl.Spec.RestartPolicy != "Never" {
			t.Errorf("%s: restartPolicy %q: a failed mesh should not rerun in place", m.file, m.tmpl.Spec.RestartPolicy)
		}
		if subset(svc.Selector, m.tmpl.Metadata.Labels) {
			t.Errorf("%s: the service selects the mesh's pods, which are no servers", m.file)
		}
		allowed := false
		for _, sel := range from {
			allowed = allowed || subset(sel, m.tmpl.Metadata.Labels)
		}
		if !allowed {
			t.Errorf("%s: the network policy does not let the mesh pods %v reach port %d", m.file, m.tmpl.Metadata.Labels, port)
		}
		_, mesh := checkPod(t, m.file, m.tmpl.Spec, secret, image)
		if mesh.Name() != "mesh" {
			t.Fatalf("%s runs wirespeed %s, want mesh", m.file, mesh.Name())
		}
		dns := flagValue(mesh, "peers-dns")
		host, p, err := net.SplitHostPort(dns)
		if err != nil {
			host, p = dns, flagValue(mesh, "port")
		}
		if host != svcDNS || p != strconv.Itoa(port) {
			t.Errorf("%s: --peers-dns %s, want %s:%d (the headless service)", m.file, dns, svcDNS, port)
		}
		if flagValue(mesh, "local") != "none" {
			t.Errorf("%s: --local none relays every pair, so that the servers export every pair", m.file)
		}
		// Before the round, an init container waits for the NetworkPolicy
		// to let the new pod through: a check of the service's name with
		// the mesh's key, retried.
		init := m.tmpl.Spec
		init.Containers, init.InitContainers = init.InitContainers, nil
		if len(init.Containers) != 1 {
			t.Errorf("%s: %d init containers, want one waiting for the servers", m.file, len(init.Containers))
			continue
		}
		_, wait := checkPod(t, m.file+" initContainers", init, secret, image)
		if wait.Name() != "check" || len(wait.Flags().Args()) != 1 || wait.Flags().Args()[0] != dns ||
			flagValue(wait, "psk-file") != flagValue(mesh, "psk-file") || flagValue(wait, "wait") == "" {
			t.Errorf("%s: the init container runs wirespeed %s %v (--psk-file %q, --wait %q), want check %s --psk-file %s --wait DURATION",
				m.file, wait.Name(), wait.Flags().Args(), flagValue(wait, "psk-file"), flagValue(wait, "wait"), dns, flagValue(mesh, "psk-file"))
		}
	}
}

// dockerfile returns the Dockerfile's instructions, continuation lines
// joined, comments dropped.
func dockerfile(t *testing.T) [][2]string {
	t.Helper()
	f, err := os.Open("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][2]string
	sc := bufio.NewScanner(f)
	cur := ""
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur == "") {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		cur += line
		ins, rest, _ := strings.Cut(cur, " ")
		out = append(out, [2]string{strings.ToUpper(ins), strings.TrimSpace(rest)})
		cur = ""
	}
	return out
}

// TestDockerfile: the image is built from paths that exist, as a static
// binary of the real main package, run as a non-root user, with the
// entrypoint the manifests' args assume and the ports they use.
func TestDockerfile(t *testing.T) {
	var froms, copies, runs, users, entry, expose []string
	for _, in := range dockerfile(t) {
		switch in[0] {
		case "FROM":
			froms = append(froms, in[1])
		case "COPY":
			copies = append(copies, in[1])
		case "RUN":
			runs = append(runs, in[1])
		case "USER":
			users = append(users, in[1])
		case "ENTRYPOINT":
			entry = append(entry, in[1])
		case "EXPOSE":
			expose = append(expose, strings.Fields(in[1])...)
		}
	}
	if len(froms) < 2 || !strings.Contains(froms[0], " AS build") || strings.Contains(froms[len(froms)-1], "golang") {
		t.Errorf("FROM %q: want a build stage and a final stage without the toolchain", froms)
	}
	// The build image's Go is at least go.mod's.
	gomod, _ := os.ReadFile("../../go.mod")
	want := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	have := regexp.MustCompile(`golang:(\d+\.\d+)`).FindStringSubmatch(froms[0])
	if want == nil || have == nil || have[1] != string(want[1]) {
		t.Errorf("build image %q, go.mod asks for go %s", froms[0], want[1])
	}
	dockerignore, _ := os.ReadFile("../../.dockerignore")
	binary := ""
	for _, c := range copies {
		f := strings.Fields(c)
		if strings.HasPrefix(f[0], "--from=") {
			binary = f[len(f)-1]
			continue
		}
		for _, src := range f[:len(f)-1] {
			if _, err := os.Stat(filepath.Join("../..", src)); err != nil {
				t.Errorf("COPY %s: %v", src, err)
			}
			if !strings.Contains(string(dockerignore), "!"+src) {
				t.Errorf("COPY %s: .dockerignore does not let it into the build context", src)
			}
		}
	}
	build := ""
	for _, r := range runs {
		if strings.Contains(r, "go build") {
			build = r
		}
	}
	if !strings.Contains(build, "CGO_ENABLED=0") || !strings.Contains(build, "./cmd/wirespeed") {
		t.Errorf("RUN %q: want CGO_ENABLED=0 go build of ./cmd/wirespeed", build)
	}
	if _, err := os.Stat("../../cmd/wirespeed/main.go"); err != nil {
		t.Error(err)
	}
	if m := regexp.MustCompile(`-X (\S+)\.(\w+)=`).FindStringSubmatch(build); m == nil || m[1] != "wirespeed/internal/cli" || m[2] != "Version" {
		t.Errorf("RUN %q: the version goes in wirespeed/internal/cli.Version", build)
	}
	_ = Version // the variable -X sets exists
	if len(users) == 0 || strings.HasPrefix(users[len(users)-1], "root") || strings.HasPrefix(users[len(users)-1], "0") {
		t.Errorf("USER %q: run as a non-root user", users)
	}
	var ep []string
	if len(entry) != 1 || json.Unmarshal([]byte(entry[0]), &ep) != nil || len(ep) != 1 || ep[0] != binary {
		t.Errorf("ENTRYPOINT %q: want [%q] alone, so that the manifests' args are wirespeed's", entry, binary)
	}
	for _, p := range []string{strconv.Itoa(server.DefaultPort), "9575"} {
		if !strings.Contains(" "+strings.Join(expose, " ")+" ", " "+p+" ") {
			t.Errorf("EXPOSE %q lacks %s", expose, p)
		}
	}
}

// TestKubernetesDoc: every wirespeed command line of docs/kubernetes.md
// parses.
func TestKubernetesDoc(t *testing.T) {
	b, err := os.ReadFile("../../docs/kubernetes.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	inSh := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			inSh = true
			continue
		case strings.HasPrefix(line, "```"):
			inSh = false
			continue
		}
		cmdline := strings.TrimSpace(strings.SplitN(line, "#", 2)[0])
		if !inSh || !strings.HasPrefix(cmdline, "wirespeed ") {
			continue
		}
		parseArgs(t, "docs/kubernetes.md", strings.Fields(strings.TrimPrefix(cmdline, "wirespeed ")))
		n++
	}
	if n == 0 {
		t.Error("no wirespeed command lines in docs/kubernetes.md")
	}
}
