package launch_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/live/launch"
	"github.com/nexar-go/nexar-go/realnet"
)

// The launcher tests start the test binary itself as the ranks: with
// LIVE_TEST_WORKER set, TestMain runs testWorker instead of the tests.
// The workers are live's (this package's importer), so these tests are
// in a package of their own.

func TestMain(m *testing.M) {
	if os.Getenv("LIVE_TEST_WORKER") != "" {
		os.Exit(testWorker())
	}
	os.Exit(m.Run())
}

// testWorker is one rank: live.Worker with its configuration from the
// environment, as the nexar-live command's worker gets it from flags.
func testWorker() int {
	if os.Getenv("LIVE_TEST_WORKER") == "done" {
		// Says it is alive, many times over (as much as the pipe
		// holds, so that the launcher is still reading when the
		// process has gone), says it finished, and exits at once.
		st, err := launch.OpenStatusPipe()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		st.WriteString(strings.Repeat("alive\n", 8000))
		launch.NewStatusWriter(st, nil).Done()
		return 0
	}
	if os.Getenv("LIVE_TEST_OWN_CERT") != "" {
		// The certificate the launcher gave this worker names its own
		// member (its rank in the first world), and no other.
		c, err := realnet.LoadCredentials(os.Getenv("NEXAR_CA"), os.Getenv("NEXAR_CERT"), os.Getenv("NEXAR_KEY"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		id, err := c.Identity()
		if err != nil || strconv.Itoa(id.Rank) != os.Getenv("NEXAR_RANK") {
			fmt.Fprintf(os.Stderr, "rank %s holds the certificate of %v (%v)\n", os.Getenv("NEXAR_RANK"), id, err)
			return 3
		}
	}
	iters, _ := strconv.Atoi(os.Getenv("LIVE_TEST_ITERS"))
	st, err := launch.OpenStatusPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	_, err = live.Worker(context.Background(), live.WorkerConfig{
		Scenario: os.Getenv("LIVE_TEST_SCENARIO"),
		Options:  live.Options{Warmup: 1, Iters: iters},
		Net:      realnet.Config{Timeout: 20 * time.Second, PeerTimeout: 2 * time.Second},
		Output:   live.Output{Dir: os.Getenv("LIVE_TEST_OUT"), Table: os.Stdout},
		Status:   st,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		if live.IsWrongData(err) {
			return 1
		}
		return 3
	}
	return 0
}

// commands are the commands a launcher started, for the tests to
// inspect while it runs.
type commands struct {
	mu   sync.Mutex
	cmds []*exec.Cmd
}

// rank returns rank r's command: rank r started and its launcher went on
// to start the next rank.
func (c *commands) rank(r int) *exec.Cmd {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cmds[r]
}

// all returns every command, once the launcher returned.
func (c *commands) all() []*exec.Cmd {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cmds
}

// testLauncher returns a launcher of np test workers running scenario
// into out, and the commands it starts.
func testLauncher(t *testing.T, np int, scenario, out string, iters int) (*launch.Launcher, *commands, *bytes.Buffer) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmds := &commands{}
	var stderr bytes.Buffer
	l := &launch.Launcher{
		NP: np,
		Command: func(int) *exec.Cmd {
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), "LIVE_TEST_WORKER=1", "LIVE_TEST_SCENARIO="+scenario,
				"LIVE_TEST_OUT="+out, "LIVE_TEST_ITERS="+strconv.Itoa(iters))
			cmds.mu.Lock()
			cmds.cmds = append(cmds.cmds, cmd)
			cmds.mu.Unlock()
			return cmd
		},
		Timeout: 40 * time.Second,
		Grace:   5 * time.Second,
		Stderr:  &lockedBuffer{b: &stderr},
	}
	return l, cmds, &stderr
}

type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// gone fails the test if a worker process still exists.
func gone(t *testing.T, cmds []*exec.Cmd) {
	t.Helper()
	for i, cmd := range cmds {
		if cmd.Process == nil {
			continue
		}
		if err := syscall.Kill(cmd.Process.Pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("rank %d (pid %d) is still there after Run: kill(0) = %v", i, cmd.Process.Pid, err)
		}
	}
}

// TestLauncher runs every allreduce algorithm on 3 processes and checks
// the data: p = 3 is not a power of two, so the folding paths run too.
func TestLauncher(t *testing.T) {
	out := t.TempDir()
	l, cmds, stderr := testLauncher(t, 3, "../testdata/allreduce.toml", out, 2)
	var stdout bytes.Buffer
	l.Stdout = &stdout
	if err := l.Run(context.Background()); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, stderr)
	}
	gone(t, cmds.all())
	rs, err := live.ReadResultsFile(filepath.Join(out, live.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	// 10 algorithms x 4 sizes of the scenario's world 3.
	if len(rs) != 40 {
		t.Errorf("%d results, want 40", len(rs))
	}
	for _, r := range rs {
		if r.Wrong != 0 || r.World != 3 || r.Time <= 0 || r.Repeats != 2 || r.Messages <= 0 {
			t.Errorf("%s/%s %d B: wrong %d, world %d, time %g, repeats %d, messages %d",
				r.Collective, r.Algorithm, r.Bytes, r.Wrong, r.World, r.Time, r.Repeats, r.Messages)
		}
	}
	if !strings.Contains(stdout.String(), "# Out of bounds values : 0 OK") {
		t.Errorf("no nccl-tests summary in the table:\n%s", stdout.String())
	}
}

// TestLauncherMemberCertificates: with --recovery shrink every worker
// gets a certificate of its own member (its rank in the first world), as
// without it, rather than one good for any rank of the job: no worker holds
// a key that passes for another.
func TestLauncherMemberCertificates(t *testing.T) {
	out := t.TempDir()
	l, cmds, stderr := testLauncher(t, 2, "../testdata/allreduce.toml", out, 1)
	l.Shrink = true
	base := l.Command
	l.Command = func(r int) *exec.Cmd {
		c := base(r)
		c.Env = append(c.Env, "LIVE_TEST_OWN_CERT=1")
		return c
	}
	if err := l.Run(context.Background()); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, stderr)
	}
	gone(t, cmds.all())
}

// TestLauncherRankKilled kills rank 2 from outside in the middle of a run:
// the run must end well within the ranks' timeout with an error naming
// rank 2, leave results.partial.csv, and leave no process behind.
func TestLauncherRankKilled(t *testing.T) {
	const victim = 2
	out := t.TempDir()
	// Many iterations, so the run is still going when the kill comes.
	l, cmds, stderr := testLauncher(t, 4, "../testdata/allreduce.toml", out, 200)
	first := make(chan struct{})
	l.Stdout = &notifyWriter{after: "float", ch: first}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	select {
	case <-first: // rank 0 has printed a result: every rank is measuring
	case err := <-done:
		t.Fatalf("run ended before the kill: %v\n%s", err, stderr)
	case <-ctx.Done():
		t.Fatal("no result printed")
	}
	killed := time.Now()
	if err := cmds.rank(victim).Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-done
	took := time.Since(killed)
	var re *launch.RunError
	if !errors.As(err, &re) {
		t.Fatalf("Run = %v, want a *launch.RunError", err)
	}
	t.Logf("after %v:\n%v", took, err)
	if len(re.Culprits) != 1 || re.Culprits[0] != victim {
		t.Errorf("culprits %v, want [%d]", re.Culprits, victim)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("rank %d failed", victim)) || !strings.Contains(err.Error(), "killed by signal") {
		t.Errorf("error does not say rank %d was killed:\n%v", victim, err)
	}
	// Survivors learn of the loss within the peer timeout (2 s) and end.
	if took > 15*time.Second {
		t.Errorf("the run took %v to end after the kill", took)
	}
	gone(t, cmds.all())
	if _, err := os.Stat(filepath.Join(out, live.PartialResultsFile)); err != nil {
		t.Errorf("no partial results: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, live.ResultsFile)); err == nil {
		t.Errorf("a failed run wrote %s", live.ResultsFile)
	}
}

// TestLauncherMismatch starts ranks with different jobs (another number of
// iterations on one rank): rank 0 must refuse them, naming the rank.
func TestLauncherMismatch(t *testing.T) {
	out := t.TempDir()
	l, _, _ := testLauncher(t, 2, "../testdata/allreduce.toml", out, 2)
	inner := l.Command
	l.Command = func(rank int) *exec.Cmd {
		cmd := inner(rank)
		if rank == 1 {
			cmd.Env = append(cmd.Env, "LIVE_TEST_ITERS=3")
		}
		return cmd
	}
	err := l.Run(context.Background())
	var re *launch.RunError
	if !errors.As(err, &re) {
		t.Fatalf("Run = %v, want a *launch.RunError", err)
	}
	if !strings.Contains(err.Error(), "ranks [1] run another job") {
		t.Errorf("error does not name rank 1:\n%v", err)
	}
}

// notifyWriter closes ch the first time what it is written contains after.
type notifyWriter struct {
	mu    sync.Mutex
	after string
	ch    chan struct{}
	done  bool
}

func (n *notifyWriter) Write(p []byte) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.done && bytes.Contains(p, []byte(n.after)) {
		n.done = true
		close(n.ch)
	}
	return len(p), nil
}

// TestLauncherRankHung stops rank 1 (SIGSTOP) in the middle of a run: the
// others lose it after their peer timeout and end naming it; the launcher
// then kills the stopped rank.
func TestLauncherRankHung(t *testing.T) {
	const victim = 1
	out := t.TempDir()
	l, cmds, stderr := testLauncher(t, 3, "../testdata/allreduce.toml", out, 200)
	first := make(chan struct{})
	l.Stdout = &notifyWriter{after: "float", ch: first}
	l.Grace = 2 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	select {
	case <-first:
	case err := <-done:
		t.Fatalf("run ended before the stop: %v\n%s", err, stderr)
	}
	stopped := time.Now()
	if err := cmds.rank(victim).Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	err := <-done
	took := time.Since(stopped)
	var re *launch.RunError
	if !errors.As(err, &re) {
		t.Fatalf("Run = %v, want a *launch.RunError", err)
	}
	t.Logf("after %v:\n%v", took, err)
	if len(re.Culprits) != 1 || re.Culprits[0] != victim {
		t.Errorf("culprits %v, want [%d]", re.Culprits, victim)
	}
	if took > 20*time.Second {
		t.Errorf("the run took %v to end after the stop", took)
	}
	gone(t, cmds.all())
}

// TestLauncherDoneThenExit: ranks that say they are done and exit at
// once finished, however the launcher reads their status and their exits
// interleave (a rank's "done" once came after its exit and it was
// counted as having died).
func TestLauncherDoneThenExit(t *testing.T) {
	l, _, stderr := testLauncher(t, 8, "", t.TempDir(), 1)
	command := l.Command
	l.Command = func(r int) *exec.Cmd {
		cmd := command(r)
		cmd.Env = append(cmd.Env, "LIVE_TEST_WORKER=done")
		return cmd
	}
	for i := range 20 {
		if err := l.Run(context.Background()); err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, stderr)
		}
	}
}
