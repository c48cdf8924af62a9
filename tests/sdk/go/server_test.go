// A server of the test's own (AZTABLE_BINARY on a free port, in memory), for the tests of
// account-wide state (service properties) that must not touch the shared server.
package aztablesuite

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

var listening = regexp.MustCompile(`listening on http://([0-9.]+):(\d+)`)

// ownServer starts AZTABLE_BINARY (with extraArgs) and returns a suite per URL style for it, or nil when
// AZTABLE_BINARY is unset (the caller then uses the shared server).
func ownServer(t *testing.T, extraArgs ...string) []*suite {
	t.Helper()
	bin := os.Getenv("AZTABLE_BINARY")
	if bin == "" {
		return nil
	}
	args := append([]string{"--tableHost", "127.0.0.1", "--tablePort", "0", "--inMemoryPersistence"}, extraArgs...)
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	must(t, err, "stdout pipe")
	cmd.Stderr = os.Stderr
	must(t, cmd.Start(), "start "+bin)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if m := listening.FindStringSubmatch(line); m != nil && !sent {
				found <- m[2]
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	var port string
	select {
	case port = <-found:
	case <-time.After(30 * time.Second):
		t.Fatal("the server reported no listening port within 30 s")
	}
	shared := suites(t)
	var own []*suite
	for _, s := range shared {
		c := *s
		if c.style == "path" {
			c.endpoint = "http://127.0.0.1:" + port + "/" + s.account
			c.secondary = c.endpoint + "-secondary"
		} else {
			c.endpoint = "http://" + s.account + ".table.localhost:" + port
			c.secondary = "http://" + s.account + "-secondary.table.localhost:" + port
		}
		if !strings.Contains(c.endpoint, port) {
			t.Fatal("own server endpoint")
		}
		own = append(own, &c)
	}
	return own
}
