package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nexar-go/nexar-go/realnet"
)

// Launcher starts the ranks of a run as processes on this machine, joined
// over 127.0.0.1: it generates an ephemeral cluster CA, hosts the
// rendezvous on a free UDP port of its own (so no port is guessed), starts
// one worker process per rank with nexar's launch variables (NEXAR_WORLD,
// NEXAR_RANK, NEXAR_SEED, NEXAR_CA, ...), and watches them.
//
// Each worker gets GOMAXPROCS = RankProcs(NP) unless the launcher's own
// environment sets GOMAXPROCS (which the workers then inherit).
//
// Every worker runs in a process group of its own, dies with the launcher
// (on Linux, through the parent-death signal) and is killed, group and
// all, before Run returns, so a run leaves no stray processes. When a
// rank fails (crashes, is killed, reports an error), the others get Grace
// to notice and end on their own (realnet makes every survivor fail with
// an error naming the lost rank), then are killed; when no rank makes
// progress for Timeout, all are killed as hung. Run then returns a
// *RunError naming the ranks to blame.
type Launcher struct {
	// NP is the number of ranks.
	NP int
	// Command returns the command of rank's worker: the nexar-live binary
	// with "worker" and the run's arguments. The launcher sets its
	// environment (adding to cmd.Env, or to this process's environment if
	// that is nil), standard output and error, extra files and process
	// attributes.
	Command func(rank int) *exec.Cmd
	// Timeout is how long the ranks may go without any progress (a
	// finished iteration) before they count as hung; default 3 minutes.
	Timeout time.Duration
	// Grace is how long the other ranks have to end after one failed
	// before they are killed; default 20 s.
	Grace time.Duration
	// StopGrace is how long the ranks have to end when ctx ends (the user
	// pressed Ctrl-C): each is interrupted as Ctrl-C would (SIGINT to its
	// process group), rank 0 writes what was measured, and only ranks
	// still running after StopGrace are killed; default 5 s.
	StopGrace time.Duration
	// TrustedNetwork lets the ranks send bulk payloads over plaintext TCP
	// (NEXAR_TRUSTED_NETWORK=1).
	TrustedNetwork bool
	// NoLocalSockets connects the ranks over TCP rather than Unix sockets
	// (NEXAR_LOCAL_SOCKETS=0; realnet.Config.NoLocalSockets).
	NoLocalSockets bool
	// Shrink is what the run does when it loses a rank, as the workers'
	// --recovery shrink: the launcher hosts the membership coordinator
	// the workers report to (their heartbeats as Heartbeat says), a rank
	// that dies is lost rather than fatal while at least MinNP ranks
	// survive, and Run returns nil when the survivors finish. Without it
	// a lost rank ends the run.
	Shrink    bool
	Heartbeat realnet.Heartbeat
	MinNP     int
	// Kill injects failures: rank r's process is killed (SIGKILL to its
	// process group) when it starts the point whose index is Kill[r].
	Kill map[int]int
	// MaxNP, with Shrink, makes the world elastic: members may
	// join late while it has fewer than MaxNP ranks, at a point boundary.
	// JoinLate lists points, in increasing order: as rank 0 starts each,
	// one more worker starts and joins.
	MaxNP    int
	JoinLate []int
	// Progress, if not nil, is called with the index of each point rank
	// 0 starts, from the goroutine that reads its status pipe.
	Progress func(index int)
	// Stdout receives rank 0's standard output (the results table).
	// Stderr receives every rank's standard error, and the other ranks'
	// standard output, each line prefixed with "rank N: ".
	Stdout, Stderr io.Writer
}

// RankProcs is the processors (GOMAXPROCS) each of np ranks on this
// machine gets: its share of the CPUs, at least one, as MPI launchers bind
// a rank to its cores. More would not run a rank faster, but its idle
// processors would be woken, a system call each, at every hand-off between
// its goroutines, and their threads would take the CPUs the other ranks
// need (on 2 CPUs, GOMAXPROCS=1 cut the eager path's cost between two
// processes by 15-45% against GOMAXPROCS=2 in four alternating runs of
// nexar-live ladder).
func RankProcs(np int) int { return max(1, runtime.NumCPU()/max(np, 1)) }

// SpinRead is how long each of np ranks on this machine spins for its
// next eager frame (realnet.Config.SpinRead): DefaultSpinRead where each
// rank has a CPU of its own, else 0, since a spinning rank would take
// the CPU another needs (MPI libraries stop polling so when a node is
// oversubscribed).
func SpinRead(np int) time.Duration {
	if np <= runtime.NumCPU() {
		return DefaultSpinRead
	}
	return 0
}

// DefaultSpinRead is SpinRead's spin where each rank has a CPU: the 8 B
// eager allreduce between two processes on two CPUs took 12.6-14.0 µs a
// loop iteration with it against 20.9-25.2 µs without, and a Send/Recv
// one way 6.7 µs against 13-14 (nexar-live ladder, 3 alternating
// pairs); a wait longer than that is the peer's, not the kernel's.
const DefaultSpinRead = 50 * time.Microsecond

// launchVars are the variables of launchers a worker must not inherit
// from the launcher's own environment: realnet.LaunchFromEnv and
// realnet.LocalRankFromEnv read them, and would take an inherited one
// over, or beside, the ones the launcher sets.
var launchVars = slices.Concat([]string{"RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
	"TORCHELASTIC_RUN_ID", "PET_NPROC_PER_NODE",
	"SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS",
	"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
	"PMI_RANK", "PMI_SIZE", "PMI_ID", "PMI_PORT",
	"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE",
	"NEXAR_WORLD", "NEXAR_RANK", "NEXAR_SEED", "NEXAR_HOST_SEED", "NEXAR_CA", "NEXAR_CERT", "NEXAR_KEY",
	"NEXAR_TRUSTED_NETWORK", "NEXAR_LOCAL_SOCKETS", StatusFDEnv}, realnet.LocalRankVars)

func workerEnv(base []string, vars map[string]string) []string {
	out := make([]string, 0, len(base)+len(vars))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(launchVars, k) {
			continue
		}
		out = append(out, kv)
	}
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out = append(out, k+"="+vars[k])
	}
	return out
}

// Run starts the ranks and waits for them. It returns nil when every rank
// ended cleanly, a *RunError when some did not, or ctx's cause when ctx
// ended first: then every rank is interrupted (SIGINT), given StopGrace to
// leave the world and write what it measured, and killed if it has not.
//
// Run carries out the supervision policy (supervise.go): it turns what
// the workers write and do, the clock, the membership coordinator and
// ctx into events, and does what the policy answers.
func (l *Launcher) Run(ctx context.Context) error {
	if l.NP < 1 {
		return fmt.Errorf("live: %d ranks: want at least 1", l.NP)
	}
	s := &session{l: l, stdout: orDiscard(l.Stdout), stderr: orDiscard(l.Stderr),
		sup: newSupervisor(l.policy()), events: make(chan event, 16*(l.NP+len(l.JoinLate)))}
	defer s.close()
	if err := s.prepare(ctx); err != nil {
		return err
	}
	for r := range l.NP {
		if s.carryOut(s.startRank(r)); s.done {
			return s.err
		}
	}
	ticker := time.NewTicker(250 * time.Millisecond)
	defer ticker.Stop()
	stop := ctx.Done()
	for !s.done {
		var ev event
		select {
		case ev = <-s.events:
		case <-ticker.C:
			ev = tick{}
		case <-stop:
			stop, ev = nil, interrupted{}
		}
		s.carryOut(s.sup.step(time.Now(), ev))
	}
	if s.interrupted {
		return context.Cause(ctx)
	}
	return s.err
}

// policy is the supervision policy l's fields ask for.
func (l *Launcher) policy() policy {
	p := policy{np: l.NP, timeout: l.Timeout, grace: l.Grace, stopGrace: l.StopGrace,
		kill: l.Kill, joinLate: l.JoinLate, shrink: l.Shrink, minNP: max(l.MinNP, 1)}
	if p.timeout <= 0 {
		p.timeout = 3 * time.Minute
	}
	if p.grace <= 0 {
		p.grace = 20 * time.Second
	}
	if p.stopGrace <= 0 {
		p.stopGrace = 5 * time.Second
	}
	return p
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// session is one Run: its credentials, rendezvous and coordinator, the
// workers' processes, and the events their goroutines send.
type session struct {
	l              *Launcher
	stdout, stderr io.Writer
	sup            *supervisor

	dir, job  string
	ca        *realnet.CA
	vars      map[string]string // the variables every worker gets (rankVars adds its own)
	cmds      []*exec.Cmd       // by rank
	events    chan event
	readers   sync.WaitGroup // the goroutines that send events of the workers
	stopCoord func()         // stops the membership coordinator, if any
	cleanup   []func()       // run last to first when Run returns

	done        bool  // the supervisor finished, or a rank could not start
	err         error // what Run returns then
	interrupted bool  // or, when set, ctx's cause
}

// prepare makes the run's cluster CA and credentials, and serves its
// rendezvous and (with Shrink) its membership coordinator.
func (s *session) prepare(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "nexar-live-*")
	if err != nil {
		return err
	}
	s.cleanup = append(s.cleanup, func() { os.RemoveAll(dir) })
	if s.ca, err = realnet.NewCA(); err != nil {
		return err
	}
	// One certificate per rank, each naming its rank, and one good for
	// any rank of the job for the seed: a process of another job, or a
	// rank's certificate used for another rank, is refused.
	s.dir, s.job = dir, filepath.Base(dir)
	caFile, err := s.ca.WriteCA(dir, false)
	if err != nil {
		return err
	}
	seedCreds, err := s.ca.Credentials(s.job)
	if err != nil {
		return err
	}
	seed, err := s.serveSeed(ctx, seedCreds)
	if err != nil {
		return err
	}
	s.vars = map[string]string{
		"NEXAR_WORLD": strconv.Itoa(s.l.NP), "NEXAR_SEED": seed, "NEXAR_HOST_SEED": "0",
		"NEXAR_CA": caFile,
	}
	if os.Getenv("GOMAXPROCS") == "" {
		s.vars["GOMAXPROCS"] = strconv.Itoa(RankProcs(s.l.NP))
	}
	if os.Getenv("NEXAR_SPIN_READ") == "" {
		s.vars["NEXAR_SPIN_READ"] = SpinRead(s.l.NP).String()
	}
	if s.l.TrustedNetwork {
		s.vars["NEXAR_TRUSTED_NETWORK"] = "1"
	}
	if s.l.NoLocalSockets {
		s.vars["NEXAR_LOCAL_SOCKETS"] = "0"
	}
	if s.l.Shrink {
		var addr string
		if addr, s.stopCoord, err = s.l.serveMembership(ctx, seedCreds, s.events); err != nil {
			return err
		}
		s.vars[MembershipEnv] = addr
	}
	return nil
}

// serveSeed serves the rendezvous on a free UDP port of 127.0.0.1 until
// Run returns, and returns its address.
func (s *session) serveSeed(ctx context.Context, creds *realnet.Credentials) (string, error) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("live: rendezvous socket: %w", err)
	}
	seedCtx, stopSeed := context.WithCancel(ctx)
	seedDone := make(chan struct{})
	go func() {
		defer close(seedDone)
		realnet.ServeSeed(seedCtx, pc, creds, s.l.NP) // its failures show as the ranks' join errors
	}()
	s.cleanup = append(s.cleanup, func() {
		stopSeed()
		<-seedDone
		pc.Close()
	})
	return pc.LocalAddr().String(), nil
}

// close leaves no worker behind: it kills what is left and drains the
// events until every goroutine that sends them has ended.
func (s *session) close() {
	s.carryOut(s.sup.step(time.Now(), closing{}))
	go func() {
		if s.stopCoord != nil {
			s.stopCoord()
		}
		s.readers.Wait()
		close(s.events)
	}()
	for ev := range s.events {
		if m, ok := ev.(membership); ok {
			s.carryOut(s.sup.step(time.Now(), m)) // the coordinator's last words
		}
	}
	for i := len(s.cleanup) - 1; i >= 0; i-- {
		s.cleanup[i]()
	}
}

// carryOut does what the supervisor asks, and what that leads to.
func (s *session) carryOut(acts []action) {
	for len(acts) > 0 {
		a := acts[0]
		acts = acts[1:]
		switch a := a.(type) {
		case killRank:
			killGroup(s.cmds[a.rank])
		case interruptRank:
			interruptGroup(s.cmds[a.rank])
		case say:
			fmt.Fprintln(s.stderr, a.line)
		case startRank:
			acts = append(acts, s.startRank(a.rank)...)
		case finish:
			s.done, s.err, s.interrupted = true, a.err, a.interrupted
		}
	}
}

// startRank starts rank r's worker and tells the supervisor; a worker
// that cannot start ends the run with its error.
func (s *session) startRank(r int) []action {
	pid, err := s.spawn(r)
	if err != nil {
		s.done, s.err = true, err
		return s.sup.step(time.Now(), startFailed{})
	}
	return s.sup.step(time.Now(), started{r, pid})
}

// spawn starts rank r's worker, r from NP on being a member that joins
// an elastic world late, and the goroutines that send its events.
func (s *session) spawn(r int) (pid int, err error) {
	vars, err := s.rankVars(r)
	if err != nil {
		return 0, err
	}
	cmd := s.l.Command(r)
	base := cmd.Env
	if base == nil {
		base = os.Environ()
	}
	sr, sw, err := statusPipe(cmd, vars)
	if err != nil {
		return 0, err
	}
	cmd.Env = workerEnv(base, vars)
	prefix := fmt.Sprintf("rank %d: ", r)
	if r == 0 {
		cmd.Stdout = s.stdout
	} else {
		cmd.Stdout = &prefixWriter{w: s.stderr, prefix: prefix}
	}
	cmd.Stderr = &prefixWriter{w: s.stderr, prefix: prefix}
	cmd.WaitDelay = 2 * time.Second
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		sr.Close()
		sw.Close()
		return 0, fmt.Errorf("live: starting rank %d: %w", r, err)
	}
	sw.Close()
	s.cmds = append(s.cmds, cmd)
	s.readers.Add(2)
	read := make(chan struct{}) // closed when the status pipe has been read to its end
	go func() {
		defer s.readers.Done()
		defer sr.Close()
		defer close(read)
		readStatus(sr, func(line string) {
			if l := parseStatus(line); r == 0 && l.word == "point" && l.index >= 0 && s.l.Progress != nil {
				s.l.Progress(l.index)
			}
			s.events <- wrote{r, line}
		})
	}()
	go func() {
		defer s.readers.Done()
		end := ""
		if err := cmd.Wait(); err != nil {
			end = describeExit(err)
		}
		// What the rank wrote before it exited comes before its exit:
		// a "done" read after it would leave a rank that finished
		// counted as one that died. The pipe's end is the rank's own,
		// so it is read to its end as the rank exits; a process the
		// rank left behind holding it is waited for no longer than
		// Wait waits for its output.
		select {
		case <-read:
		case <-time.After(cmd.WaitDelay):
		}
		s.events <- exited{r, end}
	}()
	return cmd.Process.Pid, nil
}

// rankVars are the variables of rank r's environment, writing its
// certificate.
func (s *session) rankVars(r int) (map[string]string, error) {
	vars := maps.Clone(s.vars)
	vars["NEXAR_RANK"] = strconv.Itoa(r)
	// Rank r's certificate is member r's: with --recovery shrink it
	// stays good when the world is rebuilt and renumbered (the
	// coordinator maps members to ranks, and the ranks check each
	// other's certificates against that map), and a member that
	// joins late gets one for its own id.
	var err error
	if vars["NEXAR_CERT"], vars["NEXAR_KEY"], err = s.ca.WriteCredentials(s.dir, realnet.RankIdentity(s.job, r), false); err != nil {
		return nil, err
	}
	vars["LOCAL_RANK"] = strconv.Itoa(r) // every rank is on this host: --device cuda spreads them over its GPUs
	if r >= s.l.NP {
		delete(vars, "NEXAR_RANK")
		vars[LateEnv] = strconv.Itoa(r)
	}
	return vars, nil
}

// describeExit says how a process ended.
func describeExit(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by signal " + ws.Signal().String()
		}
		return fmt.Sprintf("exit status %d", ee.ExitCode())
	}
	return err.Error()
}

// prefixWriter writes whole lines to w, each with prefix.
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			break
		}
		if _, err := fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf[:i]); err != nil {
			return len(b), err
		}
		p.buf = p.buf[i+1:]
	}
	return len(b), nil
}
