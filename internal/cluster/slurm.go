package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pathprof/pathprof/internal/atomicfile"
)

// SlurmScript is the array job's batch script: each array task runs one
// unit, the one its SLURM_ARRAY_TASK_ID names, on one CPU, and logs to
// DIR/logs. exe is the pathprof that runs the units, and dir the work
// directory, both as the nodes see them (a shared file system).
func SlurmScript(exe, dir string) string {
	return fmt.Sprintf(`#!/bin/sh
#SBATCH --job-name=pathprof
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --output=%s
# One unit of the work directory: one copy of the program on one run.
# Its part is written under parts/ whole or not at all, so a task run
# twice, or killed and run again, leaves the same part.
exec %s exec %s --unit "$SLURM_ARRAY_TASK_ID"
`, filepath.Join(dir, "logs", "slurm-%A_%a.out"), shellQuote(exe), shellQuote(dir))
}

// SlurmLog is the log that unit u's task of job id writes.
func SlurmLog(dir, id string, u int) string {
	return filepath.Join(dir, "logs", fmt.Sprintf("slurm-%s_%d.out", id, u))
}

// ArraySpec is sbatch's --array value for units: ranges of consecutive
// units, then "%N" when at most throttle tasks may run at once.
func ArraySpec(units []int, throttle int) string {
	var parts []string
	for i := 0; i < len(units); {
		j := i
		for j+1 < len(units) && units[j+1] == units[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, strconv.Itoa(units[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", units[i], units[j]))
		}
		i = j + 1
	}
	s := strings.Join(parts, ",")
	if throttle > 0 {
		s += "%" + strconv.Itoa(throttle)
	}
	return s
}

// SubmitSlurm writes the batch script into dir and submits units as an
// array job with sbatch, the extra arguments after pathprof's own (so
// that they override them), and returns the job id.
func SubmitSlurm(ctx context.Context, exe, dir string, units []int, throttle int, extra []string) (string, error) {
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(dir, "parts"), 0o755); err != nil {
		return "", err
	}
	script := filepath.Join(dir, "slurm.sh")
	if err := atomicfile.WriteFile(script, []byte(SlurmScript(exe, dir)), 0o755); err != nil {
		return "", err
	}
	args := append([]string{"--parsable", "--array=" + ArraySpec(units, throttle)}, extra...)
	out, err := command(ctx, "sbatch", append(args, script)...)
	if err != nil {
		return "", err
	}
	// --parsable prints "ID" or "ID;CLUSTER".
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	if _, err := strconv.ParseUint(id, 10, 64); err != nil {
		return "", fmt.Errorf("sbatch printed %q, not a job id", strings.TrimSpace(out))
	}
	return id, nil
}

// SlurmQueue returns the units of jobs that Slurm has pending or
// running. A job that left the queue has none.
func SlurmQueue(ctx context.Context, jobs []Job) (map[int]State, error) {
	var ids []string
	for _, j := range jobs {
		if j.Engine == Slurm {
			ids = append(ids, j.ID)
		}
	}
	q := map[int]State{}
	if len(ids) == 0 {
		return q, nil
	}
	out, err := command(ctx, "squeue", "--noheader", "--array", "--jobs="+strings.Join(ids, ","), "--format=%i %T")
	if err != nil {
		if strings.Contains(err.Error(), "Invalid job id") {
			return q, nil // every job has left the queue
		}
		return nil, err
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		_, task, ok := strings.Cut(f[0], "_")
		u, err := strconv.Atoi(task)
		if !ok || err != nil {
			continue // a pending remainder ("12_[3-5]") is listed by --array task by task
		}
		switch f[1] {
		case "PENDING", "CONFIGURING", "REQUEUED", "RESIZING", "SUSPENDED":
			q[u] = Pending
		case "RUNNING", "COMPLETING":
			q[u] = Running
		}
	}
	return q, nil
}

// CancelSlurm cancels units of job id, for tests and for a user who
// gives up on them.
func CancelSlurm(ctx context.Context, id string, u int) error {
	_, err := command(ctx, "scancel", fmt.Sprintf("%s_%d", id, u))
	return err
}

// command runs name with args and returns its standard output; its error
// holds the standard error's last line.
func command(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("%s: %s", name, msg)
	}
	return stdout.String(), nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
