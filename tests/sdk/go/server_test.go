// Servers of the test's own (AZTABLE_BINARY on a free port), for the tests of account-wide
// state (service properties), fault injection and restarts, which must not touch the
// shared server.
package aztablesuite

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"testing"
	"time"
)

var listening = regexp.MustCompile(`listening on http://([0-9.]+):(\d+)`)

// process is a started server: its port, and kill (SIGKILL, then reaped; idempotent).
type process struct {
	port string
	kill func()
}

// startServer runs AZTABLE_BINARY on 127.0.0.1 with a port of its choosing and args;
// killed at the end of the test at the latest. Skips the test without AZTABLE_BINARY.
func startServer(t *testing.T, args ...string) process {
	t.Helper()
	bin := os.Getenv("AZTABLE_BINARY")
	if bin == "" {
		t.Skip("AZTABLE_BINARY not set: this test starts a server of its own")
	}
	cmd := exec.Command(bin, append([]string{"--tableHost", "127.0.0.1", "--tablePort", "0"}, args...)...)
	out, err := cmd.StdoutPipe()
	must(t, err, "stdout pipe")
	cmd.Stderr = os.Stderr
	must(t, cmd.Start(), "start "+bin)
	var once sync.Once
	kill := func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(kill)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[2]
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case port := <-found:
		return process{port: port, kill: kill}
	case <-time.After(30 * time.Second):
		t.Fatal("the server reported no listening port within 30 s")
	}
	return process{}
}

// suitesAt: both URL styles of the well-known account on a server of the test's own.
func suitesAt(t *testing.T, port string) []*suite {
	t.Helper()
	var own []*suite
	for _, s := range suites(t) {
		c := *s
		if c.style == "path" {
			c.endpoint = "http://127.0.0.1:" + port + "/" + s.account
			c.secondary = c.endpoint + "-secondary"
		} else {
			c.endpoint = "http://" + s.account + ".table.localhost:" + port
			c.secondary = "http://" + s.account + "-secondary.table.localhost:" + port
		}
		own = append(own, &c)
	}
	return own
}

// ownServer: an in-memory server of the test's own (with extraArgs), in both URL styles.
func ownServer(t *testing.T, extraArgs ...string) []*suite {
	t.Helper()
	p := startServer(t, append([]string{"--inMemoryPersistence"}, extraArgs...)...)
	return suitesAt(t, p.port)
}
