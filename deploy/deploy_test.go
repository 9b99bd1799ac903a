// Package deploy holds the launch files for running fragility on a cluster
// (Slurm, Kubernetes, several GPUs of one machine); this test checks them
// without a cluster. The Slurm files run for real in cmd/fragility's
// TestSlurmArray and the local scripts in TestLocalShardScripts.
package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestShellScriptsParse: every launch script is valid bash and executable.
func TestShellScriptsParse(t *testing.T) {
	scripts, _ := filepath.Glob("*/*.sh")
	sb, _ := filepath.Glob("*/*.sbatch")
	scripts = append(scripts, sb...)
	if len(scripts) < 6 {
		t.Fatalf("found %d scripts, want the Slurm, Kubernetes and local ones: %v", len(scripts), scripts)
	}
	for _, s := range scripts {
		if out, err := exec.Command("bash", "-n", s).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", s, err, out)
		}
		if st, err := os.Stat(s); err != nil || st.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable", s)
		}
	}
}

// k8sJob is the part of a batch/v1 Job the test reads.
type k8sJob struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    *int   `yaml:"completions"`
		Parallelism    *int   `yaml:"parallelism"`
		Template       struct {
			Spec struct {
				RestartPolicy string `yaml:"restartPolicy"`
				Containers    []struct {
					Env []struct {
						Name  string `yaml:"name"`
						Value string `yaml:"value"`
					} `yaml:"env"`
					Command      []string `yaml:"command"`
					Args         []string `yaml:"args"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name string `yaml:"name"`
					PVC  struct {
						ClaimName string `yaml:"claimName"`
					} `yaml:"persistentVolumeClaim"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func (j *k8sJob) env(name string) string {
	for _, e := range j.Spec.Template.Spec.Containers[0].Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// TestKubernetesManifests: the shards Job is Indexed with completions equal
// to the SHARDS its pods pass to --shards; both Jobs mount the one PVC at
// the same path and name the same RUN; the merge reads what the shards write.
func TestKubernetesManifests(t *testing.T) {
	var pvc struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Name string `yaml:"name"`
		} `yaml:"metadata"`
		Spec struct {
			AccessModes []string `yaml:"accessModes"`
		} `yaml:"spec"`
	}
	readYAML(t, "kubernetes/fragility-pvc.yaml", &pvc)
	if pvc.Kind != "PersistentVolumeClaim" || len(pvc.Spec.AccessModes) != 1 || pvc.Spec.AccessModes[0] != "ReadWriteMany" {
		t.Errorf("PVC: kind %s, access modes %v; want a ReadWriteMany PersistentVolumeClaim", pvc.Kind, pvc.Spec.AccessModes)
	}
	var shards, merge k8sJob
	readYAML(t, "kubernetes/fragility-shards.yaml", &shards)
	readYAML(t, "kubernetes/fragility-merge.yaml", &merge)
	if shards.Kind != "Job" || shards.Spec.CompletionMode != "Indexed" || shards.Spec.Completions == nil {
		t.Fatalf("shards: kind %s, completionMode %q; want an Indexed Job with completions", shards.Kind, shards.Spec.CompletionMode)
	}
	if got := shards.env("SHARDS"); got != itoa(*shards.Spec.Completions) {
		t.Errorf("shards: SHARDS=%q but completions %d", got, *shards.Spec.Completions)
	}
	if p := shards.Spec.Parallelism; p == nil || *p < 1 || *p > *shards.Spec.Completions {
		t.Errorf("shards: parallelism %v, want 1..completions", p)
	}
	script := strings.Join(shards.Spec.Template.Spec.Containers[0].Args, "\n")
	for _, want := range []string{`--shard auto --shards "$SHARDS"`, "$JOB_COMPLETION_INDEX", "/data/runs/$RUN/shards/", "--resume"} {
		if !strings.Contains(script, want) {
			t.Errorf("shards: the pod's script lacks %q:\n%s", want, script)
		}
	}
	mscript := strings.Join(merge.Spec.Template.Spec.Containers[0].Args, "\n")
	if !strings.Contains(mscript, "fragility merge") || !strings.Contains(mscript, "/data/runs/$RUN/shards/*/") {
		t.Errorf("merge: the pod's script does not merge the shards' directories:\n%s", mscript)
	}
	if shards.env("RUN") == "" || shards.env("RUN") != merge.env("RUN") {
		t.Errorf("RUN is %q in the shards and %q in the merge", shards.env("RUN"), merge.env("RUN"))
	}
	for _, j := range []*k8sJob{&shards, &merge} {
		sp := j.Spec.Template.Spec
		if sp.RestartPolicy != "Never" && sp.RestartPolicy != "OnFailure" {
			t.Errorf("%s: restartPolicy %q", j.Metadata.Name, sp.RestartPolicy)
		}
		if len(sp.Volumes) != 1 || sp.Volumes[0].PVC.ClaimName != pvc.Metadata.Name {
			t.Errorf("%s: volumes %+v, want the PVC %s", j.Metadata.Name, sp.Volumes, pvc.Metadata.Name)
		}
		vm := sp.Containers[0].VolumeMounts
		if len(vm) != 1 || vm[0].MountPath != "/data" || len(sp.Volumes) == 0 || vm[0].Name != sp.Volumes[0].Name {
			t.Errorf("%s: volume mounts %+v, want the PVC at /data", j.Metadata.Name, vm)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
