package realnet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// The process-level tests start the test binary itself as the ranks of a
// job: with REALNET_TEST_WORKER set, TestMain runs workerMain instead of
// the tests. The workers find each other as torchrun's would, through
// RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT, with credentials from an
// ephemeral CA written to files.

func TestMain(m *testing.M) {
	if mode := os.Getenv("REALNET_TEST_WORKER"); mode != "" {
		os.Exit(workerMain(mode))
	}
	if addr := os.Getenv("REALNET_TEST_MEMBER"); addr != "" {
		os.Exit(memberMain(addr)) // membership_test.go
	}
	os.Exit(m.Run())
}

// workerMain is one rank of a process-level test. It prints "ready"
// once connected and "ok" when done; on failure it prints "error", the
// rank of the peer blamed (-1 if none) and the error.
func workerMain(mode string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	la, err := LaunchFromEnv(os.Getenv)
	if err != nil {
		fmt.Println("error -1", err)
		return 2
	}
	cfg := Config{Timeout: 20 * time.Second, PeerTimeout: 3 * time.Second}
	l, err := Start(ctx, la, cfg)
	if err != nil {
		fmt.Println("error -1", err)
		return 2
	}
	fmt.Println("ready", l.Rank())
	switch mode {
	case "catalogue":
		err = rankCatalogue(ctx, l, []int{1, 4099}, func(string) {})
	case "loop":
		// Allreduce until a peer is lost (the test kills one).
		buf := make(device.Host, 8<<20)
		for seq := uint64(1); err == nil && ctx.Err() == nil; seq++ {
			err = algos.RingAllreduce(ctx, algos.Scoped(l, 0, seq), buf, device.F32, device.Sum)
		}
	}
	if err != nil {
		blamed := -1
		var pe *PeerError
		if errors.As(err, &pe) {
			blamed = pe.Rank
		}
		fmt.Println("error", blamed, strings.ReplaceAll(err.Error(), "\n", " "))
		l.Abort()
		return 3
	}
	if err := l.Close(); err != nil {
		fmt.Println("error -1 close:", err)
		return 3
	}
	fmt.Println("ok")
	return 0
}

// worker is a running rank process.
type worker struct {
	rank  int
	cmd   *exec.Cmd
	lines chan string
}

// startWorkers starts p workers in mode, as ranks of one job.
func startWorkers(t *testing.T, p int, mode string) []*worker {
	t.Helper()
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	// One certificate per rank, named through {rank} as 'nexar-live ca
	// --ranks' does.
	dir := t.TempDir()
	caFile, err := ca.WriteCA(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	for r := range p {
		if _, _, err := ca.WriteCredentials(dir, RankIdentity("proc", r), false); err != nil {
			t.Fatal(err)
		}
	}
	certFile, keyFile := filepath.Join(dir, "proc-rank{rank}.pem"), filepath.Join(dir, "proc-rank{rank}-key.pem")
	// A free UDP port for the seed (rank 0).
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	ws := make([]*worker, p)
	for r := range ws {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(),
			"REALNET_TEST_WORKER="+mode,
			"RANK="+strconv.Itoa(r), "WORLD_SIZE="+strconv.Itoa(p),
			"MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(port),
			"NEXAR_CA="+caFile, "NEXAR_CERT="+certFile, "NEXAR_KEY="+keyFile,
		)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w := &worker{rank: r, cmd: cmd, lines: make(chan string, 16)}
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				w.lines <- sc.Text()
			}
			close(w.lines)
		}()
		ws[r] = w
	}
	t.Cleanup(func() {
		for _, w := range ws {
			w.cmd.Process.Kill()
			w.cmd.Wait()
		}
	})
	return ws
}

// next returns the worker's next line of output, or fails after timeout.
func (w *worker) next(t *testing.T, timeout time.Duration) string {
	t.Helper()
	select {
	case line, ok := <-w.lines:
		if !ok {
			t.Fatalf("rank %d exited early", w.rank)
		}
		return line
	case <-time.After(timeout):
		t.Fatalf("rank %d said nothing for %v", w.rank, timeout)
	}
	return ""
}

// TestProcesses: the whole catalogue with p = 4 ranks in four processes.
func TestProcesses(t *testing.T) {
	ws := startWorkers(t, 4, "catalogue")
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() {
			if line := w.next(t, 60*time.Second); !strings.HasPrefix(line, "ready") {
				t.Errorf("rank %d: %s", w.rank, line)
				return
			}
			if line := w.next(t, 60*time.Second); line != "ok" {
				t.Errorf("rank %d: %s", w.rank, line)
			}
		})
	}
	wg.Wait()
}

// TestProcessKilled: rank 3's process is killed in the middle of a stream
// of allreduces; every other rank fails with an error naming rank 3.
func TestProcessKilled(t *testing.T) {
	const dead = 3
	ws := startWorkers(t, 4, "loop")
	for _, w := range ws {
		if line := w.next(t, 60*time.Second); !strings.HasPrefix(line, "ready") {
			t.Fatalf("rank %d: %s", w.rank, line)
		}
	}
	time.Sleep(300 * time.Millisecond) // allreduces under way
	killed := time.Now()
	if err := ws[dead].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, w := range ws[:dead] {
		line := w.next(t, 30*time.Second)
		if !strings.HasPrefix(line, fmt.Sprintf("error %d ", dead)) {
			t.Errorf("rank %d: %q, want an error naming rank %d", w.rank, line, dead)
		} else {
			t.Logf("rank %d, %v after the kill: %s", w.rank, time.Since(killed).Round(time.Millisecond), line)
		}
	}
}
