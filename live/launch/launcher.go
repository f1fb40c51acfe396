package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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

// RankFailure is one rank of a failed run.
type RankFailure struct {
	Rank int
	// End says how the process ended: "killed by signal: killed",
	// "exit status 3", "killed by nexar-live after rank 3 failed", ...
	End string
	// Point is the point it was measuring ("" before the first).
	Point string
	// Err is the error it reported, if any, and Blamed the peer that error
	// names (-1 if none).
	Err    string
	Blamed int
	// Hung is set for a rank killed because the run made no progress.
	Hung bool
}

func (f RankFailure) String() string {
	s := fmt.Sprintf("rank %d: %s", f.Rank, f.End)
	if f.Point != "" && !strings.HasPrefix(f.Err, f.Point) {
		s += ", during " + f.Point
	}
	if f.Err != "" {
		s += ": " + f.Err
	}
	return s
}

// RunError reports a run that did not finish: the ranks to blame and
// what became of every rank that did not end cleanly.
type RunError struct {
	// Culprits are the ranks the failure is attributed to: a rank that
	// died or failed on its own, else the ranks the others' errors name,
	// else the ranks that hung.
	Culprits []int
	// Ranks are every rank that did not finish cleanly, by rank.
	Ranks []RankFailure
	// Hung is set when the run was stopped for making no progress.
	Hung bool
}

func (e *RunError) Error() string {
	var b strings.Builder
	names := make([]string, len(e.Culprits))
	for i, r := range e.Culprits {
		names[i] = strconv.Itoa(r)
	}
	who := "rank " + strings.Join(names, "")
	if len(names) != 1 {
		who = "ranks " + strings.Join(names, ", ")
	}
	switch {
	case e.Hung:
		fmt.Fprintf(&b, "live: %s hung: no rank made progress", who)
	case len(names) == 1:
		for _, f := range e.Ranks {
			if f.Rank != e.Culprits[0] {
				continue
			}
			if f.Err == "" && strings.HasPrefix(f.End, "killed by nexar-live") && !strings.Contains(f.End, "--kill") {
				fmt.Fprintf(&b, "live: %s stopped responding: the other ranks lost it, and nexar-live killed it", who)
			} else {
				fmt.Fprintf(&b, "live: %s failed (%s)", who, f.End)
			}
		}
		if b.Len() == 0 {
			fmt.Fprintf(&b, "live: %s failed (the other ranks lost it)", who)
		}
	default:
		fmt.Fprintf(&b, "live: %s failed", who)
	}
	for _, f := range e.Ranks {
		b.WriteString("\n  " + f.String())
	}
	return b.String()
}

// launchVars are the variables of launchers a worker must not inherit
// from the launcher's own environment: LaunchFromEnv would take them over
// the ones the launcher sets.
var launchVars = []string{"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
	"SLURM_PROCID", "SLURM_NTASKS", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
	"PMI_RANK", "PMI_SIZE", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE",
	"NEXAR_WORLD", "NEXAR_RANK", "NEXAR_SEED", "NEXAR_HOST_SEED", "NEXAR_CA", "NEXAR_CERT", "NEXAR_KEY",
	"NEXAR_TRUSTED_NETWORK", StatusFDEnv}

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

// rankState is what the launcher knows of one rank.
type rankState struct {
	cmd     *exec.Cmd
	exited  bool
	waitErr error
	killed  string // why the launcher killed it, if it did
	hung    bool
	point   string
	errLine string
	blamed  int
	done    bool // said "done"
}

type launchEvent struct {
	rank int
	line string
	exit bool
	err  error
}

// Run starts the ranks and waits for them. It returns nil when every rank
// ended cleanly, a *RunError when some did not, or ctx's cause when ctx
// ended first: then every rank is interrupted (SIGINT), given StopGrace to
// leave the world and write what it measured, and killed if it has not.
func (l *Launcher) Run(ctx context.Context) error {
	if l.NP < 1 {
		return fmt.Errorf("live: %d ranks: want at least 1", l.NP)
	}
	timeout, grace, stopGrace := l.Timeout, l.Grace, l.StopGrace
	if timeout <= 0 {
		timeout = 3 * time.Minute
	}
	if grace <= 0 {
		grace = 20 * time.Second
	}
	if stopGrace <= 0 {
		stopGrace = 5 * time.Second
	}
	stdout, stderr := l.Stdout, l.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}

	dir, err := os.MkdirTemp("", "nexar-live-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ca, err := realnet.NewCA()
	if err != nil {
		return err
	}
	// One certificate per rank, each naming its rank, and one good for
	// any rank of the job for the seed: a process of another job, or a
	// rank's certificate used for another rank, is refused.
	job := filepath.Base(dir)
	caFile, err := ca.WriteCA(dir, false)
	if err != nil {
		return err
	}
	seedCreds, err := ca.Credentials(job)
	if err != nil {
		return err
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("live: rendezvous socket: %w", err)
	}
	seedCtx, stopSeed := context.WithCancel(ctx)
	seedDone := make(chan struct{})
	go func() {
		defer close(seedDone)
		realnet.ServeSeed(seedCtx, pc, seedCreds, l.NP) // its failures show as the ranks' join errors
	}()
	defer func() {
		stopSeed()
		<-seedDone
		pc.Close()
	}()

	var coord *coordinator
	if l.Shrink {
		if coord, err = l.startCoordinator(ctx, seedCreds, stderr); err != nil {
			return err
		}
		defer coord.stop()
	}

	vars := map[string]string{
		"NEXAR_WORLD": strconv.Itoa(l.NP), "NEXAR_SEED": pc.LocalAddr().String(), "NEXAR_HOST_SEED": "0",
		"NEXAR_CA":  caFile,
		StatusFDEnv: strconv.Itoa(statusFD),
	}
	if os.Getenv("GOMAXPROCS") == "" {
		vars["GOMAXPROCS"] = strconv.Itoa(RankProcs(l.NP))
	}
	if l.TrustedNetwork {
		vars["NEXAR_TRUSTED_NETWORK"] = "1"
	}
	if coord != nil {
		vars[MembershipEnv] = coord.addr
	}
	ranks := make([]*rankState, l.NP)
	events := make(chan launchEvent, 16*(l.NP+len(l.JoinLate)))
	var readers sync.WaitGroup
	killAll := func(why string) {
		for _, s := range ranks {
			if s != nil && !s.exited && s.killed == "" {
				s.killed = why
				killGroup(s.cmd)
			}
		}
	}
	defer func() {
		// Whatever happened, no worker outlives Run: kill what is left
		// and drain the events until every reader has seen its
		// process end.
		killAll("killed by nexar-live on exit")
		go func() {
			readers.Wait()
			close(events)
		}()
		for range events {
		}
	}()
	// startRank starts rank r's worker; r from NP on is a member that
	// joins an elastic world late.
	startRank := func(r int) error {
		cmd := l.Command(r)
		base := cmd.Env
		if base == nil {
			base = os.Environ()
		}
		vars["NEXAR_RANK"] = strconv.Itoa(r)
		// Rank r's certificate is member r's: with --recovery shrink it
		// stays good when the world is rebuilt and renumbered (the
		// coordinator maps members to ranks, and the ranks check each
		// other's certificates against that map), and a member that
		// joins late gets one for its own id.
		if vars["NEXAR_CERT"], vars["NEXAR_KEY"], err = ca.WriteCredentials(dir, realnet.RankIdentity(job, r), false); err != nil {
			killAll("killed by nexar-live: a rank could not start")
			return err
		}
		vars["LOCAL_RANK"] = strconv.Itoa(r) // every rank is on this host: --device cuda spreads them over its GPUs
		if r >= l.NP {
			delete(vars, "NEXAR_RANK")
			vars[LateEnv] = strconv.Itoa(r)
		}
		cmd.Env = workerEnv(base, vars)
		delete(vars, LateEnv)
		sr, sw, err := statusPipe(cmd)
		if err != nil {
			killAll("killed by nexar-live: a rank could not start")
			return err
		}
		prefix := fmt.Sprintf("rank %d: ", r)
		if r == 0 {
			cmd.Stdout = stdout
		} else {
			cmd.Stdout = &prefixWriter{w: stderr, prefix: prefix}
		}
		cmd.Stderr = &prefixWriter{w: stderr, prefix: prefix}
		cmd.WaitDelay = 2 * time.Second
		setProcAttr(cmd)
		if err := cmd.Start(); err != nil {
			sr.Close()
			sw.Close()
			killAll("killed by nexar-live: a rank could not start")
			return fmt.Errorf("live: starting rank %d: %w", r, err)
		}
		sw.Close()
		if r == len(ranks) {
			ranks = append(ranks, nil)
		}
		ranks[r] = &rankState{cmd: cmd, blamed: -1}
		readers.Add(2)
		go func() {
			defer readers.Done()
			defer sr.Close()
			readStatus(sr, func(line string) { events <- launchEvent{rank: r, line: line} })
		}()
		go func() {
			defer readers.Done()
			err := cmd.Wait()
			events <- launchEvent{rank: r, exit: true, err: err}
		}()
		return nil
	}
	for r := range l.NP {
		if err := startRank(r); err != nil {
			return err
		}
	}

	alive := l.NP
	lateStarted := 0
	stop := ctx.Done()
	var stopUntil time.Time // set once ctx has ended
	lastProgress := time.Now()
	var graceUntil time.Time
	var firstFailed = -1
	hung := false
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for alive > 0 {
		select {
		case ev := <-events:
			s := ranks[ev.rank]
			if ev.exit {
				s.exited, s.waitErr = true, ev.err
				alive--
				if coord != nil && !s.done && coord.lose(ev.rank) {
					continue // the survivors rebuild without it
				}
				if (ev.err != nil || !s.done) && s.killed == "" && firstFailed < 0 {
					firstFailed = ev.rank
					graceUntil = time.Now().Add(grace)
				}
				continue
			}
			lastProgress = time.Now()
			word, rest, _ := strings.Cut(ev.line, " ")
			switch word {
			case "point":
				idx, desc, ok := strings.Cut(rest, " ")
				if ok {
					s.point = desc
				}
				if ev.rank == 0 && lateStarted < len(l.JoinLate) && idx == strconv.Itoa(l.JoinLate[lateStarted]) && stopUntil.IsZero() {
					lateStarted++
					fmt.Fprintf(stderr, "nexar-live: starting a late member (id %d) as rank 0 starts point %s, as --join-late asks\n", len(ranks), idx)
					if err := startRank(len(ranks)); err != nil {
						return err
					}
					alive++
				}
				if at, kill := l.Kill[ev.rank]; kill && idx == strconv.Itoa(at) && s.killed == "" {
					s.killed = fmt.Sprintf("killed by nexar-live --kill %d@%d", ev.rank, at)
					if coord != nil {
						coord.killed(ev.rank)
					}
					fmt.Fprintf(stderr, "nexar-live: killing rank %d (pid %d) at point %d, as --kill asks\n", ev.rank, s.cmd.Process.Pid, at)
					killGroup(s.cmd)
				}
			case "error":
				b, msg, _ := strings.Cut(rest, " ")
				s.blamed, _ = strconv.Atoi(b)
				s.errLine = msg
				if firstFailed < 0 {
					firstFailed = ev.rank
					graceUntil = time.Now().Add(grace)
				}
			case "done":
				s.done = true
			}
		case <-tick.C:
			now := time.Now()
			if !stopUntil.IsZero() && now.After(stopUntil) {
				killAll(fmt.Sprintf("killed by nexar-live: interrupted, still running %v later", stopGrace))
			}
			if !graceUntil.IsZero() && now.After(graceUntil) {
				killAll(fmt.Sprintf("killed by nexar-live, still running %v after rank %d failed", grace, firstFailed))
			}
			if now.Sub(lastProgress) > timeout && !hung {
				hung = true
				for _, s := range ranks {
					if !s.exited {
						s.hung = true
					}
				}
				killAll(fmt.Sprintf("killed by nexar-live: no rank made progress for %v", timeout))
			}
		case <-stop:
			stop = nil
			stopUntil = time.Now().Add(stopGrace)
			for _, s := range ranks {
				if !s.exited && s.killed == "" {
					interruptGroup(s.cmd)
				}
			}
		}
	}
	if stopUntil.IsZero() {
		if coord != nil && coord.recovered(ranks, hung) {
			return nil
		}
		return l.verdict(ranks, hung)
	}
	return context.Cause(ctx)
}

// verdict turns the ranks' ends into nil or a *RunError.
func (l *Launcher) verdict(ranks []*rankState, hung bool) error {
	e := &RunError{Hung: hung}
	blamedBy := map[int]bool{}
	var own []int
	for r, s := range ranks {
		// A rank that said done finished its part, whatever its exit
		// status (wrong data exits 1 after a complete run).
		clean := s.done && s.killed == ""
		if clean {
			continue
		}
		f := RankFailure{Rank: r, Point: s.point, Err: s.errLine, Blamed: s.blamed, Hung: s.hung}
		switch {
		case s.killed != "":
			f.End = s.killed
		case s.waitErr != nil:
			f.End = describeExit(s.waitErr)
		default:
			f.End = "exited without finishing"
		}
		e.Ranks = append(e.Ranks, f)
		if s.killed != "" && s.errLine == "" {
			continue // a victim of the launcher, not a cause
		}
		if s.errLine != "" && s.blamed >= 0 {
			blamedBy[s.blamed] = true
			continue
		}
		own = append(own, r) // died, or failed for a reason of its own
	}
	if len(e.Ranks) == 0 {
		return nil
	}
	switch {
	case len(own) > 0:
		e.Culprits = own
	case len(blamedBy) > 0:
		for r := range blamedBy {
			e.Culprits = append(e.Culprits, r)
		}
		slices.Sort(e.Culprits)
	default:
		for _, f := range e.Ranks {
			if f.Hung || !hung {
				e.Culprits = append(e.Culprits, f.Rank)
			}
		}
	}
	return e
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
