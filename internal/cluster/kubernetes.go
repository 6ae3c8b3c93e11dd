package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// KubernetesJob is an Indexed Job that runs units with image, one pod
// per unit on one CPU, at most parallelism at once (0: all): the pod
// with completion index i runs units[i]. The work directory is the
// claim, mounted at dir so that the runs' absolute paths inside it hold
// in the pods as on the machine that wrote it.
func KubernetesJob(name, image, claim, dir string, units []int, parallelism int) ([]byte, error) {
	args := []string{"exec", dir, "--unit", "$(JOB_COMPLETION_INDEX)"}
	if !consecutiveFromZero(units) {
		list := make([]string, len(units))
		for i, u := range units {
			list[i] = strconv.Itoa(u)
		}
		args = append(args, "--units", strings.Join(list, ","))
	}
	if parallelism <= 0 || parallelism > len(units) {
		parallelism = len(units)
	}
	cpu := map[string]string{"cpu": "1"}
	job := map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   map[string]any{"name": name, "labels": map[string]string{"app.kubernetes.io/name": "pathprof"}},
		"spec": map[string]any{
			"completionMode": "Indexed",
			"completions":    len(units),
			"parallelism":    parallelism,
			// A unit that fails is reported by collect and resubmitted
			// on demand: retrying it here would hide a lost node.
			"backoffLimit": len(units),
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]string{"app.kubernetes.io/name": "pathprof"}},
				"spec": map[string]any{
					"restartPolicy": "Never",
					"containers": []any{map[string]any{
						"name":         "unit",
						"image":        image,
						"args":         args,
						"resources":    map[string]any{"requests": cpu, "limits": cpu},
						"volumeMounts": []any{map[string]any{"name": "work", "mountPath": dir}},
					}},
					"volumes": []any{map[string]any{
						"name":                  "work",
						"persistentVolumeClaim": map[string]any{"claimName": claim},
					}},
				},
			},
		},
	}
	b, err := json.MarshalIndent(job, "", "  ")
	return append(b, '\n'), err
}

func consecutiveFromZero(units []int) bool {
	for i, u := range units {
		if u != i {
			return false
		}
	}
	return true
}

// KubernetesName is the Job's name for the n-th submission (from 1) of
// the work directory dir: a DNS label.
func KubernetesName(dir string, n int) string {
	s := sha256.Sum256([]byte(dir))
	return fmt.Sprintf("pathprof-%s-%d", hex.EncodeToString(s[:4]), n)
}

// ApplyKubernetes applies the manifest with kubectl, and reports whether
// kubectl is there to do it.
func ApplyKubernetes(ctx context.Context, manifest []byte) (bool, error) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		return false, nil
	}
	cmd := exec.CommandContext(ctx, "kubectl", "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(string(manifest))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return true, fmt.Errorf("kubectl apply: %s", strings.TrimSpace(string(out)))
	}
	return true, nil
}

// kubernetesLog says how to read unit u's log: the pods keep it.
func kubernetesLog(j Job, u int) string {
	idx := u
	if !consecutiveFromZero(j.Units) {
		for i, v := range j.Units {
			if v == u {
				idx = i
			}
		}
	}
	return fmt.Sprintf("kubectl logs -l job-name=%s,batch.kubernetes.io/job-completion-index=%d", j.ID, idx)
}
