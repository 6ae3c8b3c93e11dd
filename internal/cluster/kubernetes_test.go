package cluster

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// checkJob fails unless manifest is an Indexed Job that runs units with
// image, the claim mounted at dir: the fields the Job controller
// requires of an Indexed Job (batch/v1, completionMode Indexed,
// completions, a pod template whose restartPolicy is Never or
// OnFailure, a DNS-label name) and those the units need. The manifest
// is decoded strictly into the fields it may have, so a misspelt one
// fails too.
func checkJob(t *testing.T, manifest []byte, image, claim, dir string, units []int) {
	t.Helper()
	type container struct {
		Name         string   `json:"name"`
		Image        string   `json:"image"`
		Args         []string `json:"args"`
		Resources    struct{ Requests, Limits map[string]string }
		VolumeMounts []struct{ Name, MountPath string }
	}
	var job struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name   string            `json:"name"`
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec struct {
			CompletionMode string `json:"completionMode"`
			Completions    int    `json:"completions"`
			Parallelism    int    `json:"parallelism"`
			BackoffLimit   int    `json:"backoffLimit"`
			Template       struct {
				Metadata struct {
					Labels map[string]string `json:"labels"`
				} `json:"metadata"`
				Spec struct {
					RestartPolicy string      `json:"restartPolicy"`
					Containers    []container `json:"containers"`
					Volumes       []struct {
						Name                  string `json:"name"`
						PersistentVolumeClaim struct {
							ClaimName string `json:"claimName"`
						} `json:"persistentVolumeClaim"`
					} `json:"volumes"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	dec := json.NewDecoder(bytes.NewReader(manifest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&job); err != nil {
		t.Fatalf("not the Job expected: %v\n%s", err, manifest)
	}
	s := &job.Spec
	pod := &s.Template.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || !regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`).MatchString(job.Metadata.Name) {
		t.Fatalf("not a batch/v1 Job with a DNS-label name:\n%s", manifest)
	}
	if s.CompletionMode != "Indexed" || s.Completions != len(units) || s.Parallelism < 1 || s.Parallelism > s.Completions ||
		(pod.RestartPolicy != "Never" && pod.RestartPolicy != "OnFailure") {
		t.Fatalf("not an Indexed Job of %d completions:\n%s", len(units), manifest)
	}
	if len(pod.Containers) != 1 || len(pod.Volumes) != 1 {
		t.Fatalf("want one container and one volume:\n%s", manifest)
	}
	c, v := pod.Containers[0], pod.Volumes[0]
	if c.Image != image || c.Resources.Requests["cpu"] != "1" || c.Resources.Limits["cpu"] != "1" {
		t.Fatalf("container %+v", c)
	}
	if v.PersistentVolumeClaim.ClaimName != claim || len(c.VolumeMounts) != 1 || c.VolumeMounts[0].Name != v.Name || c.VolumeMounts[0].MountPath != dir {
		t.Fatalf("the claim %s is not mounted at %s:\n%s", claim, dir, manifest)
	}
	// The pod with index i runs units[i].
	i := slices.Index(c.Args, "--unit")
	if len(c.Args) < 4 || c.Args[0] != "exec" || c.Args[1] != dir || i < 0 || c.Args[i+1] != "$(JOB_COMPLETION_INDEX)" {
		t.Fatalf("args %q", c.Args)
	}
	if j := slices.Index(c.Args, "--units"); (j >= 0) == consecutiveFromZero(units) || (j >= 0 && c.Args[j+1] != unitList(units)) {
		t.Fatalf("args %q for units %v", c.Args, units)
	}
}

// unitList is units as exec's --units takes them.
func unitList(units []int) string {
	b, _ := json.Marshal(units)
	return string(b[1 : len(b)-1])
}

// TestKubernetesJob checks the Indexed Jobs of a whole work directory
// and of a resubmission of some units. Where kubectl reaches a cluster
// (KUBECONFIG set), the cluster's schema checks them too: kubectl's
// client-side dry run asks the API server for it, so without one only
// the structure is checked.
func TestKubernetesJob(t *testing.T) {
	dir := "/shared/work"
	for _, units := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 8, 11}} {
		m, err := KubernetesJob(KubernetesName(dir, 1), "registry.example/pathprof:1", "work", dir, units, 4)
		if err != nil {
			t.Fatal(err)
		}
		checkJob(t, m, "registry.example/pathprof:1", "work", dir, units)
		if os.Getenv("KUBECONFIG") == "" {
			continue
		}
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			continue
		}
		f := filepath.Join(t.TempDir(), "job.json")
		os.WriteFile(f, m, 0o644)
		if out, err := exec.Command(kubectl, "apply", "--dry-run=client", "-f", f).CombinedOutput(); err != nil {
			t.Fatalf("kubectl apply --dry-run=client: %v\n%s", err, out)
		}
	}
}
