// Package chromium finds and starts the headless Chromium that tests open
// pages in (the HTML report, programs run in a page), or skips the test
// with the reason where there is none.
package chromium

import (
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Flags are what the pages need and nothing more: no sandbox (the tests
// run as root in containers), no GPU, and none of the background traffic
// a browser starts on its own.
var Flags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-default-apps", "--disable-extensions", "--hide-scrollbars", "--mute-audio",
}

// Find returns the browser to test with. Where there is none the test is
// skipped; on CI only when .ci/run could not install it and said so in
// PATHPROF_SKIP_BROWSER.
func Find(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if why := os.Getenv("PATHPROF_SKIP_BROWSER"); why != "" {
		t.Skip("skipped: " + why)
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed, and .ci/run installs it (apt-get install chromium)")
	}
	t.Skip("skipped: no chromium to open the page in (on Debian: apt-get install chromium, as .ci/run does)")
	return ""
}

// Start starts the browser with Flags, a fresh profile directory and
// args, and returns its standard error. It is ended, with its helper
// processes, when the test ends.
func Start(t testing.TB, args ...string) io.Reader {
	t.Helper()
	bin := Find(t)
	// Not t.TempDir: Chromium's helper processes may still be writing
	// to the profile as the test ends, which would fail its cleanup.
	dir, err := os.MkdirTemp("", "pathprof-chromium")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append(append(append([]string{}, Flags...), "--user-data-dir="+dir), args...)...)
	// Its own process group, so that ending it ends its helpers too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		for range 20 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return stderr
}
