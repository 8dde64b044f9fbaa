package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"wirespeed/internal/exporter"
)

// The exporter's deployment files: the systemd unit and its example
// modules, the Kubernetes Deployment with its ConfigMap and Service, and
// the Prometheus scrape jobs, checked against each other and against the
// command tree; the modules files are loaded by the exporter's own parser
// with run's flags.

const (
	exporterK8sDir = "../../deploy/kubernetes/exporter"
	prometheusDir  = "../../deploy/prometheus"
)

// loadModules parses a modules file as the exporter would. A psk-file
// that names keyPath is read from a key made for the test (the real one
// lives on the host or in the cluster); any other is a mistake.
func loadModules(t *testing.T, file string, data []byte, keyPath string) *exporter.Config {
	t.Helper()
	key := filepath.Join(t.TempDir(), "psk")
	os.WriteFile(key, []byte("0123456789abcdef0123456789abcdef\n"), 0o600)
	for _, line := range strings.Split(string(data), "\n") {
		if _, v, ok := strings.Cut(line, "psk-file:"); ok && !strings.HasPrefix(strings.TrimSpace(line), "#") && strings.TrimSpace(v) != keyPath {
			t.Errorf("%s: psk-file %s, but the key is at %s", file, strings.TrimSpace(v), keyPath)
		}
	}
	data = []byte(strings.ReplaceAll(string(data), "psk-file: "+keyPath, "psk-file: "+key))
	c, err := exporter.Parse(data, moduleBuilder(&env{}))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return c
}

func TestSystemdExporterUnit(t *testing.T) {
	u := parseUnit(t, filepath.Join(systemdDir, "wirespeed-exporter.service"))
	svc := func(key string) string { return u.one(t, "Service", key) }
	exec := strings.Fields(svc("ExecStart"))
	if len(exec) != 5 || filepath.Base(exec[0]) != "wirespeed" || exec[1] != "exporter" || exec[2] != "--config" || exec[4] != "$WIRESPEED_EXPORTER_OPTS" {
		t.Fatalf("ExecStart=%s: want /PATH/wirespeed exporter --config FILE $WIRESPEED_EXPORTER_OPTS", svc("ExecStart"))
	}
	config := exec[3]
	raw, _ := os.ReadFile(filepath.Join(systemdDir, "wirespeed-exporter.service"))
	if !strings.Contains(string(raw), "install -D -m 0644 probes.yml "+config) {
		t.Errorf("the unit's install steps do not put probes.yml at --config %s", config)
	}
	if got := svc("EnvironmentFile"); got != "-/etc/default/wirespeed-exporter" {
		t.Errorf("EnvironmentFile=%s, want -/etc/default/wirespeed-exporter", got)
	}
	if got := svc("ExecReload"); got != "/bin/kill -HUP $MAINPID" {
		t.Errorf("ExecReload=%s: the exporter reloads its modules on SIGHUP", got)
	}
	envFile := filepath.Join(systemdDir, "wirespeed-exporter.env")
	if b, _ := os.ReadFile(envFile); !strings.HasPrefix(string(b), "# /etc/default/wirespeed-exporter") {
		t.Errorf("%s does not say it is /etc/default/wirespeed-exporter", envFile)
	}
	var opts []string
	b, _ := os.ReadFile(envFile)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), "WIRESPEED_EXPORTER_OPTS="); ok {
			opts = append(opts, v)
		}
	}
	if len(opts) < 1 {
		t.Fatalf("%s: no WIRESPEED_EXPORTER_OPTS", envFile)
	}
	for i, o := range opts {
		cmd := parseArgs(t, envFile, append(exec[1:4], strings.Fields(o)...))
		if flagValue(cmd, "allow-targets") == "" {
			t.Errorf("WIRESPEED_EXPORTER_OPTS %d has no --allow-targets: the example must not open the exporter to any address", i)
		}
		if _, err := parseAllowTargets(strings.Split(flagValue(cmd, "allow-targets"), ",")); err != nil {
			t.Errorf("WIRESPEED_EXPORTER_OPTS %d: %v", i, err)
		}
	}
	if stop, err := time.ParseDuration(svc("TimeoutStopSec")); err != nil || stop <= 2*time.Second {
		t.Errorf("TimeoutStopSec=%s: not longer than the exporter's 2 s shutdown", svc("TimeoutStopSec"))
	}
	// The hardening is the server's, setting for setting.
	srv := parseUnit(t, filepath.Join(systemdDir, "wirespeed.service"))
	for _, key := range []string{"DynamicUser", "NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateDevices",
		"ProtectKernelTunables", "ProtectKernelModules", "ProtectControlGroups", "RestrictNamespaces", "RestrictSUIDSGID",
		"LockPersonality", "MemoryDenyWriteExecute", "SystemCallArchitectures", "CapabilityBoundingSet", "AmbientCapabilities",
		"RestrictAddressFamilies", "SystemCallErrorNumber", "ProtectClock", "ProtectKernelLogs", "MemoryMax"} {
		if a, b := strings.Join(u.values("Service", key), "|"), strings.Join(srv.values("Service", key), "|"); a != b {
			t.Errorf("%s=%q, the server's unit has %q", key, a, b)
		}
	}
	if a, b := strings.Join(u.values("Service", "SystemCallFilter"), "|"), strings.Join(srv.values("Service", "SystemCallFilter"), "|"); a != b {
		t.Errorf("SystemCallFilter %q, the server's %q", a, b)
	}
	// The example modules load, and fit the scrape the Prometheus job gives.
	mods, err := os.ReadFile(filepath.Join(systemdDir, "probes.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(mods), "# "+config) {
		t.Errorf("probes.yml does not say it is %s", config)
	}
	c := loadModules(t, "probes.yml", mods, "/run/credentials/wirespeed-exporter.service/psk")
	if len(c.Modules) < 4 {
		t.Errorf("probes.yml has %d modules: %v", len(c.Modules), c.Names())
	}
}

// scrapeJob is the part of a Prometheus scrape job the tests read.
type scrapeJob struct {
	JobName        string              `json:"job_name"`
	MetricsPath    string              `json:"metrics_path"`
	Params         map[string][]string `json:"params"`
	ScrapeTimeout  string              `json:"scrape_timeout"`
	RelabelConfigs []struct {
		SourceLabels []string `json:"source_labels"`
		TargetLabel  string   `json:"target_label"`
		Replacement  string   `json:"replacement"`
		Regex        string   `json:"regex"`
		Action       string   `json:"action"`
	} `json:"relabel_configs"`
}

func loadJobs(t *testing.T, file string) map[string]scrapeJob {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(prometheusDir, file))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ScrapeConfigs []scrapeJob `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	jobs := map[string]scrapeJob{}
	for _, j := range doc.ScrapeConfigs {
		jobs[j.JobName] = j
	}
	return jobs
}

// checkProbeJob checks a probe job's relabelling (the target becomes
// target= and instance; the exporter at exporterAddr is scraped), that
// its module is one of mods, and that the scrape's timeout leaves the
// module its test and set-up.
func checkProbeJob(t *testing.T, file string, j scrapeJob, exporterAddr string, mods *exporter.Config) {
	t.Helper()
	if j.MetricsPath != "/probe" {
		t.Errorf("%s %s: metrics_path %q, want /probe", file, j.JobName, j.MetricsPath)
	}
	step := 0 // 1: target set from __address__, 2: instance from it, 3: the exporter scraped
	module := ""
	if m := j.Params["module"]; len(m) == 1 {
		module = m[0]
	}
	for _, r := range j.RelabelConfigs {
		switch {
		case step == 0 && r.TargetLabel == "__param_target" && strings.Join(r.SourceLabels, ",") == "__address__":
			step = 1
		case step == 1 && r.TargetLabel == "instance" && strings.Join(r.SourceLabels, ",") == "__param_target":
			step = 2
		case step == 2 && r.TargetLabel == "__address__" && len(r.SourceLabels) == 0:
			if r.Replacement != exporterAddr {
				t.Errorf("%s %s: scrapes %s, the exporter is at %s", file, j.JobName, r.Replacement, exporterAddr)
			}
			step = 3
		case r.TargetLabel == "__param_module":
			module = r.Replacement
		}
	}
	if step != 3 {
		t.Errorf("%s %s: the relabelling does not move __address__ to target= and instance, then scrape the exporter (reached step %d)", file, j.JobName, step)
	}
	m, ok := mods.Modules[module]
	if !ok {
		t.Fatalf("%s %s: module %q is not one of %v", file, j.JobName, module, mods.Names())
	}
	timeout, err := time.ParseDuration(j.ScrapeTimeout)
	if err != nil {
		t.Fatalf("%s %s: scrape_timeout %q", file, j.JobName, j.ScrapeTimeout)
	}
	need := m.Plan.Test.Omit + exporter.MinFittedLength
	if m.Plan.LengthSet {
		need = m.Plan.Test.Omit + m.Plan.Test.Duration
	}
	if need += exporter.DefaultSetup + exporter.DefaultTimeoutOffset; timeout < need {
		t.Errorf("%s %s: scrape_timeout %v, module %s needs %v", file, j.JobName, timeout, module, need)
	}
}

func TestPrometheusJobs(t *testing.T) {
	// The job for the exporter of the systemd unit, on the Prometheus host.
	b, _ := os.ReadFile(filepath.Join(systemdDir, "probes.yml"))
	sysMods := loadModules(t, "probes.yml", b, "/run/credentials/wirespeed-exporter.service/psk")
	jobs := loadJobs(t, "prometheus.yml")
	env, _ := os.ReadFile(filepath.Join(systemdDir, "wirespeed-exporter.env"))
	opts, _, _ := strings.Cut(strings.SplitN(string(env), "WIRESPEED_EXPORTER_OPTS=", 2)[1], "\n")
	cmd := parseArgs(t, "wirespeed-exporter.env", append([]string{"exporter"}, strings.Fields(opts)...))
	port := portOf(t, "wirespeed-exporter.env", flagValue(cmd, "listen"))
	checkProbeJob(t, "prometheus.yml", jobs["wirespeed"], "127.0.0.1:"+strconv.Itoa(port), sysMods)

	// The Kubernetes job, for the exporter of deploy/kubernetes/exporter.
	objs := loadExporterManifests(t)
	k8sMods := loadModules(t, "configmap.yaml", []byte(objs["ConfigMap"].Data["probes.yml"]), "/etc/wirespeed/psk")
	svc := objs["Service"]
	var ss struct {
		Ports []struct {
			Port int `json:"port"`
		} `json:"ports"`
	}
	json.Unmarshal(svc.Spec, &ss)
	kjobs := loadJobs(t, "prometheus-kubernetes.yml")
	kj := kjobs["wirespeed-k8s"]
	checkProbeJob(t, "prometheus-kubernetes.yml", kj, svc.Metadata.Name+"."+svc.Metadata.Namespace+".svc:"+strconv.Itoa(ss.Ports[0].Port), k8sMods)
	// It keeps the servers' endpoints: the headless service and its port.
	servers := loadManifests(t)["Service"]
	var sp struct {
		Ports []struct {
			Name string `json:"name"`
		} `json:"ports"`
	}
	json.Unmarshal(servers.Spec, &sp)
	if r := kj.RelabelConfigs[0]; r.Action != "keep" || r.Regex != servers.Metadata.Name+";"+sp.Ports[0].Name {
		t.Errorf("prometheus-kubernetes.yml: the first rule %+v should keep the endpoints of service %s, port %s", r, servers.Metadata.Name, sp.Ports[0].Name)
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("no promtool (Debian's prometheus package): prometheus.yml checked by these rules only")
		return
	}
	if out, err := exec.Command(promtool, "check", "config", filepath.Join(prometheusDir, "prometheus.yml")).CombinedOutput(); err != nil {
		t.Errorf("promtool check config prometheus.yml: %v\n%s", err, out)
	}
}

// loadExporterManifests parses deploy/kubernetes/exporter, by kind.
func loadExporterManifests(t *testing.T) map[string]k8sObject {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(exporterK8sDir, "*.yaml"))
	objs := map[string]k8sObject{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
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
		if _, dup := objs[o.Kind]; dup {
			t.Errorf("%s: a second %s", f, o.Kind)
		}
		objs[o.Kind] = o
	}
	for _, kind := range []string{"ConfigMap", "Deployment", "Service", "Kustomization"} {
		if _, ok := objs[kind]; !ok {
			t.Fatalf("no %s in %s", kind, exporterK8sDir)
		}
	}
	return objs
}

func TestKubernetesExporter(t *testing.T) {
	objs := loadExporterManifests(t)
	main := loadManifests(t)
	ns := main["Namespace"].Metadata.Name
	kust := objs["Kustomization"]
	for kind, o := range objs {
		if kind == "Kustomization" {
			continue
		}
		if o.Metadata.Namespace != ns || o.Metadata.Labels["app.kubernetes.io/name"] != "wirespeed" {
			t.Errorf("%s: namespace %q, labels %v: want %s and app.kubernetes.io/name: wirespeed", o.file, o.Metadata.Namespace, o.Metadata.Labels, ns)
		}
		if !strings.Contains(strings.Join(kust.Resources, " "), o.file) {
			t.Errorf("the exporter's kustomization does not list %s", o.file)
		}
	}
	if len(kust.Images) != 1 || kust.Images[0].Name != main["Kustomization"].Images[0].Name {
		t.Fatalf("exporter kustomization images %+v: want the servers' image", kust.Images)
	}
	image := kust.Images[0].Name

	dep := specOf[struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Template k8sPodTemplate `json:"template"`
		Volumes  []any          `json:"volumes"`
	}](t, objs["Deployment"])
	labels := dep.Template.Metadata.Labels
	if !subset(dep.Selector.MatchLabels, labels) {
		t.Errorf("deployment selector %v does not select its pods %v", dep.Selector.MatchLabels, labels)
	}
	pod := dep.Template.Spec
	if sc := pod.SecurityContext; sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == 0 {
		t.Error("deployment.yaml: the pod must run as a non-root user")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("deployment.yaml: %d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Image != image || len(c.Command) > 0 {
		t.Errorf("deployment.yaml: image %q, command %q: want %q and the arguments in args", c.Image, c.Command, image)
	}
	sc := c.SecurityContext
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		strings.Join(sc.Capabilities.Drop, ",") != "ALL" {
		t.Errorf("deployment.yaml: container security context %+v", sc)
	}
	cmd := parseArgs(t, "deployment.yaml", c.Args)
	if cmd.Name() != "exporter" {
		t.Fatalf("deployment runs wirespeed %s, want exporter", cmd.Name())
	}
	if flagValue(cmd, "allow-targets") == "" {
		t.Error("deployment.yaml: no --allow-targets")
	}
	port := portOf(t, "deployment.yaml", flagValue(cmd, "listen"))
	if containerPort(c, "http") != port {
		t.Errorf("--listen port %d, container port http %d", port, containerPort(c, "http"))
	}
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || probePort(t, c, p.HTTPGet.Port) != port {
		t.Errorf("the readiness probe should get a page on port %d", port)
	}

	// The modules are the ConfigMap's, mounted where --config reads them,
	// and the key the Secret's, mounted where the modules' psk-file reads it.
	cm := objs["ConfigMap"]
	config := flagValue(cmd, "config")
	secret := main["Secret"]
	mounted := map[string]bool{}
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.Secret != nil && v.Secret.SecretName == secret.Metadata.Name {
				for _, it := range v.Secret.Items {
					if _, ok := secret.StringData[it.Key]; ok {
						mounted[path.Join(m.MountPath, it.Path)] = true
					}
				}
			}
		}
	}
	var vols struct {
		Template struct {
			Spec struct {
				Volumes []struct {
					Name      string `json:"name"`
					ConfigMap *struct {
						Name string `json:"name"`
					} `json:"configMap"`
				} `json:"volumes"`
			} `json:"spec"`
		} `json:"template"`
	}
	json.Unmarshal(objs["Deployment"].Spec, &vols)
	for _, m := range c.VolumeMounts {
		for _, v := range vols.Template.Spec.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil && v.ConfigMap.Name == cm.Metadata.Name {
				for key := range cm.Data {
					mounted[path.Join(m.MountPath, key)] = true
				}
			}
		}
	}
	if !mounted[config] {
		t.Errorf("--config %s is not where the ConfigMap is mounted (%v)", config, mounted)
	}
	if !mounted["/etc/wirespeed/psk"] {
		t.Errorf("the Secret's key is not mounted at /etc/wirespeed/psk, where the modules read it (%v)", mounted)
	}
	mods := loadModules(t, "configmap.yaml", []byte(cm.Data[path.Base(config)]), "/etc/wirespeed/psk")
	for _, n := range mods.Names() {
		if k := mods.Modules[n].Plan.Test.Kind; k == "UDP_STREAM" || k == "UDP_RR" || k == "TCP_CRR" {
			t.Errorf("module %s runs %s, whose ports the servers' NetworkPolicy does not open", n, k)
		}
	}

	// Its Service, and the servers' NetworkPolicy letting it in.
	svc := specOf[struct {
		Selector map[string]string `json:"selector"`
		Ports    []struct {
			Port       int             `json:"port"`
			TargetPort json.RawMessage `json:"targetPort"`
		} `json:"ports"`
	}](t, objs["Service"])
	if !subset(svc.Selector, labels) || len(svc.Ports) != 1 || probePort(t, c, svc.Ports[0].TargetPort) != port {
		t.Errorf("exporter service %+v: want it to select %v and reach port %d", svc, labels, port)
	}
	if servers := main["Service"]; subset(specOf[struct {
		Selector map[string]string `json:"selector"`
	}](t, servers).Selector, labels) {
		t.Error("the servers' headless service selects the exporter, which is no server")
	}
	np := specOf[struct {
		Ingress []struct {
			From []struct {
				PodSelector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				} `json:"podSelector"`
			} `json:"from"`
		} `json:"ingress"`
	}](t, main["NetworkPolicy"])
	admitted := false
	for _, in := range np.Ingress {
		for _, f := range in.From {
			admitted = admitted || subset(f.PodSelector.MatchLabels, labels)
		}
	}
	if !admitted {
		t.Errorf("the servers' NetworkPolicy does not admit the exporter's pods %v", labels)
	}
}
