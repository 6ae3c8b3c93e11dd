package main

// This file starts a real single-node Slurm (Debian's slurm-wlm and
// munge, as root) and runs a work directory's units as its array jobs.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startSlurm starts munged, slurmctld and slurmd with
// testdata/slurm/slurm.conf under a temporary directory, points the Slurm
// commands at it (SLURM_CONF) and stops them when the test ends. Where
// they are not installed, or cannot start, the test is skipped saying
// why; on CI, which installs them, a missing one fails it.
func startSlurm(t *testing.T) {
	t.Helper()
	// The daemons are in /usr/sbin, which a root shell's PATH may lack.
	t.Setenv("PATH", os.Getenv("PATH")+string(os.PathListSeparator)+"/usr/sbin"+string(os.PathListSeparator)+"/sbin")
	for _, n := range []string{"munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo"} {
		if _, err := exec.LookPath(n); err != nil {
			if why := os.Getenv("PATHPROF_SKIP_SLURM"); why != "" {
				t.Skip("skipped: " + why)
			}
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed, and .ci/run installs it (apt-get install slurm-wlm munge)", n)
			}
			t.Skipf("skipped: no %s (on Debian: apt-get install slurm-wlm munge, as .ci/run does)", n)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("skipped: the test Slurm runs as root, and this is not")
	}
	// Not t.TempDir: munged wants its directories unwritable by others,
	// and the daemons' files must outlive the test's cleanup order.
	dir, err := os.MkdirTemp("", "pathprof-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, d := range []string{"munge", "state", "spool"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 1024)
	rand.Read(key)
	if err := os.WriteFile(filepath.Join(dir, "munge", "key"), key, 0o400); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	tmpl, err := os.ReadFile("../../testdata/slurm/slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	conf := strings.NewReplacer("@DIR@", dir, "@HOST@", host, "@CPUS@", strconv.Itoa(runtime.NumCPU()),
		"@CTLD_PORT@", freePort(t), "@SLURMD_PORT@", freePort(t)).Replace(string(tmpl))
	confPath := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLURM_CONF", confPath)

	var daemons []*exec.Cmd
	start := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Skipf("skipped: %s cannot start: %v", name, err)
		}
		daemons = append(daemons, cmd)
	}
	t.Cleanup(func() {
		exec.Command("scontrol", "shutdown").Run()
		for i := len(daemons) - 1; i >= 0; i-- {
			d := daemons[i]
			d.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { d.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				d.Process.Kill()
				<-done
			}
		}
	})
	sock := filepath.Join(dir, "munge", "socket")
	start("munged", "--foreground", "--force", "--socket="+sock, "--key-file="+filepath.Join(dir, "munge", "key"),
		"--log-file="+filepath.Join(dir, "munge", "log"), "--pid-file="+filepath.Join(dir, "munge", "pid"),
		"--seed-file="+filepath.Join(dir, "munge", "seed"))
	waitFor(t, "munged", filepath.Join(dir, "munge", "log"), func() bool {
		_, err := os.Stat(sock)
		return err == nil
	})
	start("slurmctld", "-D", "-i", "-f", confPath)
	start("slurmd", "-D", "-f", confPath)
	waitFor(t, "slurmctld and slurmd", filepath.Join(dir, "slurmctld.log"), func() bool {
		out, err := exec.Command("sinfo", "--noheader", "--format=%T").Output()
		return err == nil && strings.TrimSpace(string(out)) == "idle"
	})
	// A node that cannot launch a job (a container that forbids what
	// slurmstepd does) cannot run the units either.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sbatch", "--wait", "--output=/dev/null", "--wrap=true")
	if out, err := cmd.CombinedOutput(); err != nil {
		b, _ := os.ReadFile(filepath.Join(dir, "slurmd.log"))
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		t.Skipf("skipped: slurmd cannot run a job here (%v: %s); slurmd.log ends:\n%s", err, bytes.TrimSpace(out), strings.Join(lines[max(0, len(lines)-5):], "\n"))
	}
}

// waitFor waits up to 30 s for ready, and skips the test with the end of
// log when it never is: the daemons could not start here.
func waitFor(t *testing.T, what, log string, ready func() bool) {
	t.Helper()
	for range 300 {
		if ready() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	t.Skipf("skipped: %s did not start within 30 s; %s ends:\n%s", what, log, strings.Join(lines[max(0, len(lines)-5):], "\n"))
}

// freePort is a TCP port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// TestSlurm profiles spin with P3 at k = 4 over three inputs as 12 tasks
// of a Slurm array job. One task is cancelled while its program runs:
// collect reports it with its log, --resubmit runs it again, and the
// collected profile is the one profile --runs makes on this machine.
func TestSlurm(t *testing.T) {
	startSlurm(t)
	bin := pathprofBinary(t)
	dir := t.TempDir()
	spin, err := filepath.Abs("../../testdata/spin/spin.wasm")
	if err != nil {
		t.Fatal(err)
	}
	// The third run is long enough (a few seconds a copy) to be caught
	// running.
	b, _ := json.Marshal(map[string]any{"runs": []map[string]any{
		{"label": "one", "args": []string{"1"}}, {"label": "two", "args": []string{"2"}}, {"label": "long", "args": []string{"400"}}}})
	runsFile := filepath.Join(dir, "runs.json")
	if err := os.WriteFile(runsFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if code, out, errs := runCmd("instrument", "--strategy", "p3", "--copies", "4", "--runs", runsFile, "-o", work, spin); code != 0 ||
		!strings.Contains(out, "12 work units") {
		t.Fatalf("instrument: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs := runCmd("submit", "--engine", "slurm", "--pathprof", bin, work, "--", "--job-name=pathprof-test")
	var job string
	if _, err := fmt.Sscanf(out, "submitted 12 units of "+work+" as Slurm job %s\n", &job); code != 0 || err != nil {
		t.Fatalf("submit: exit %d (%v)\n%s%s", code, err, out, errs)
	}
	script, _ := os.ReadFile(filepath.Join(work, "slurm.sh"))
	for _, want := range []string{"#SBATCH --cpus-per-task=1\n", `--unit "$SLURM_ARRAY_TASK_ID"`} {
		if !strings.Contains(string(script), want) {
			t.Fatalf("slurm.sh lacks %q:\n%s", want, script)
		}
	}
	// Cancel unit 8 (copy 0 of the long run) once its program runs.
	const victim = 8
	log := filepath.Join(work, "logs", fmt.Sprintf("slurm-%s_%d.out", job, victim))
	deadline := time.Now().Add(time.Minute)
	for {
		if b, _ := os.ReadFile(log); bytes.Contains(b, []byte("pathprof: unit 8 of 12")) {
			break
		}
		if time.Now().After(deadline) {
			q, _ := exec.Command("squeue", "--array").CombinedOutput()
			n, _ := exec.Command("sinfo", "--long").CombinedOutput()
			logs, _ := filepath.Glob(filepath.Join(work, "logs", "*"))
			t.Fatalf("unit %d never started; the queue:\n%s%s\nlogs %v", victim, q, n, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	if out, err := exec.Command("scancel", fmt.Sprintf("%s_%d", job, victim)).CombinedOutput(); err != nil {
		t.Fatalf("scancel: %v\n%s", err, out)
	}
	collected := filepath.Join(dir, "collected.json")
	code, _, errs = runCmd("collect", "--wait", "--poll", "200ms", "-o", collected, work)
	if code != 1 || !strings.Contains(errs, "11 of 12 units done") ||
		!strings.Contains(errs, fmt.Sprintf("unit 8 (copy 0 of run %q): ", "long")) || !strings.Contains(errs, "; log "+log) ||
		!strings.Contains(errs, "collect --resubmit") {
		t.Fatalf("collect after the cancel: exit %d\n%s", code, errs)
	}
	code, out, errs = runCmd("collect", "--resubmit", "--wait", "--poll", "200ms", "-o", collected, work)
	if code != 0 || !strings.Contains(errs, "resubmitting 1 units: 8") || !strings.Contains(out, "12 units of 3 runs merged, 0 failed") {
		t.Fatalf("collect --resubmit: exit %d\n%s%s", code, out, errs)
	}
	local := filepath.Join(dir, "local.json")
	if code, _, errs := runCmd("profile", "-q", "--no-history", "--runs", runsFile, "--strategy", "p3", "--copies", "4", "-o", local, spin); code != 0 {
		t.Fatalf("profile --runs: exit %d\n%s", code, errs)
	}
	sameAsLocal(t, collected, local)
}
