package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"wirespeed/internal/archive"
)

// TestCronJobArchive: the CronJob's mesh writes to the archive named by
// the Secret wirespeed-archive (optional: no Secret, no archive), with
// its spool on a writable volume (the root file system is read-only).
func TestCronJobArchive(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(deployDir, "cronjob.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cj struct {
		Spec struct {
			JobTemplate struct {
				Spec struct {
					Template struct {
						Spec struct {
							Containers []struct {
								Args []string `json:"args"`
								Env  []struct {
									Name      string `json:"name"`
									Value     string `json:"value"`
									ValueFrom *struct {
										SecretKeyRef *struct {
											Name     string `json:"name"`
											Key      string `json:"key"`
											Optional *bool  `json:"optional"`
										} `json:"secretKeyRef"`
									} `json:"valueFrom"`
								} `json:"env"`
								VolumeMounts []struct {
									Name      string `json:"name"`
									MountPath string `json:"mountPath"`
									ReadOnly  bool   `json:"readOnly"`
								} `json:"volumeMounts"`
							} `json:"containers"`
							Volumes []struct {
								Name     string    `json:"name"`
								EmptyDir *struct{} `json:"emptyDir"`
							} `json:"volumes"`
						} `json:"spec"`
					} `json:"template"`
				} `json:"spec"`
			} `json:"jobTemplate"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &cj); err != nil {
		t.Fatal(err)
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	if len(pod.Containers) != 1 || len(pod.Containers[0].Args) == 0 || pod.Containers[0].Args[0] != "mesh" {
		t.Fatalf("cronjob.yaml: want one container running mesh")
	}
	c := pod.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			r := e.ValueFrom.SecretKeyRef
			if r.Optional == nil || !*r.Optional {
				t.Errorf("%s from Secret %s is not optional: without the Secret the pod would not start", e.Name, r.Name)
			}
			env[e.Name] = "secret:" + r.Name + "/" + r.Key
		default:
			env[e.Name] = e.Value
		}
	}
	if env[ArchiveEnv] != "secret:wirespeed-archive/url" {
		t.Errorf("%s = %q, want from the Secret wirespeed-archive, key url", ArchiveEnv, env[ArchiveEnv])
	}
	spool := env[SpoolEnv]
	writable := false
	for _, m := range c.VolumeMounts {
		if m.MountPath == spool && !m.ReadOnly {
			for _, v := range pod.Volumes {
				writable = writable || (v.Name == m.Name && v.EmptyDir != nil)
			}
		}
	}
	if spool == "" || !writable {
		t.Errorf("%s = %q is not on a writable volume of the pod", SpoolEnv, spool)
	}
	if !strings.Contains(string(b), "kubectl -n wirespeed create secret generic wirespeed-archive") {
		t.Error("cronjob.yaml does not say how to make the Secret wirespeed-archive")
	}
}

// TestSystemdMeshTimer: the timer's service runs `wirespeed mesh` with
// the environment file's flags, its archive target parses, its spool is
// in the service's state directory and its key is the credential.
func TestSystemdMeshTimer(t *testing.T) {
	u := parseUnit(t, filepath.Join(systemdDir, "wirespeed-mesh.service"))
	exec := strings.Fields(u.one(t, "Service", "ExecStart"))
	if len(exec) != 3 || exec[1] != "mesh" || exec[2] != "$WIRESPEED_MESH_OPTS" {
		t.Fatalf("ExecStart=%v: want /PATH/wirespeed mesh $WIRESPEED_MESH_OPTS", exec)
	}
	if got := u.one(t, "Service", "EnvironmentFile"); got != "/etc/default/wirespeed-mesh" {
		t.Errorf("EnvironmentFile=%s", got)
	}
	state := u.one(t, "Service", "StateDirectory")
	var spool string
	for _, v := range u.values("Service", "Environment") {
		if s, ok := strings.CutPrefix(v, SpoolEnv+"="); ok {
			spool = s
		}
	}
	if !strings.HasPrefix(spool, "/var/lib/"+state+"/") {
		t.Errorf("%s=%q is not in the StateDirectory %s (the only writable place, kept across runs)", SpoolEnv, spool, state)
	}
	tm := parseUnit(t, filepath.Join(systemdDir, "wirespeed-mesh.timer"))
	if tm.one(t, "Timer", "OnCalendar") == "" || tm.one(t, "Install", "WantedBy") != "timers.target" {
		t.Error("wirespeed-mesh.timer: want OnCalendar and WantedBy=timers.target")
	}
	envFile := filepath.Join(systemdDir, "wirespeed-mesh.env")
	b, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	var targets, opts int
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimLeft(line, "#")
		if v, ok := strings.CutPrefix(line, ArchiveEnv+"="); ok {
			targets++
			if _, err := archive.ParseTarget(v); err != nil {
				t.Errorf("%s: %s=%s: %v", envFile, ArchiveEnv, v, err)
			}
		}
		if v, ok := strings.CutPrefix(line, "WIRESPEED_MESH_OPTS="); ok {
			opts++
			cmd := parseArgs(t, envFile, append([]string{"mesh"}, strings.Fields(v)...))
			if psk := flagValue(cmd, "psk-file"); psk != "/run/credentials/wirespeed-mesh.service/psk" {
				t.Errorf("--psk-file %s: want the credential /run/credentials/wirespeed-mesh.service/psk", psk)
			}
		}
	}
	if targets < 2 || opts != 1 {
		t.Errorf("%s: %d archive targets (want PostgreSQL and SQLite), %d WIRESPEED_MESH_OPTS", envFile, targets, opts)
	}
	if u.one(t, "Service", "LoadCredential") != "psk:/etc/wirespeed/psk" {
		t.Error("LoadCredential: want psk:/etc/wirespeed/psk")
	}
}
