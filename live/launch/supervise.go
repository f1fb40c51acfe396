package launch

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nexar-go/nexar-go/realnet"
)

// The supervision policy, a state machine: Launcher.Run turns what its
// workers, the clock, the membership coordinator and its context do into
// events, steps the supervisor with each, and carries out the actions it
// returns. The supervisor starts nothing, reads no clock and runs no
// goroutine (each event comes with the time it happened), so
// testdata/*.txt can play runs through it line by line (supervise_test.go).

// An event is something the launcher saw.
type event interface{ isEvent() }

type (
	// started: rank's worker started as process pid (ranks start in
	// order, 0, 1, ...; one from the policy's np on is a member that
	// joins late).
	started struct{ rank, pid int }
	// startFailed: a worker could not start; Run returns the error.
	startFailed struct{}
	// wrote: rank wrote line on its status pipe (protocol.go).
	wrote struct {
		rank int
		line string
	}
	// exited: rank's process ended: end says how ("exit status 3",
	// "killed by signal killed", ...), "" for exit status 0.
	exited struct {
		rank int
		end  string
	}
	// tick: the clock ticked (every 250 ms).
	tick struct{}
	// interrupted: the launcher's context ended (Ctrl-C).
	interrupted struct{}
	// membership: the membership coordinator noticed or decided
	// something (Shrink only).
	membership struct{ realnet.MembershipEvent }
	// closing: Run returns; no worker may outlive it.
	closing struct{}
)

func (started) isEvent()     {}
func (startFailed) isEvent() {}
func (wrote) isEvent()       {}
func (exited) isEvent()      {}
func (tick) isEvent()        {}
func (interrupted) isEvent() {}
func (membership) isEvent()  {}
func (closing) isEvent()     {}

// An action is something the supervisor asks the launcher to do.
type action interface{ isAction() }

type (
	// startRank: start the worker of a member that joins late, rank
	// being its member id; report it started (or failed to).
	startRank struct{ rank int }
	// killRank: kill rank's process group (SIGKILL), for why.
	killRank struct {
		rank int
		why  string
	}
	// interruptRank: interrupt rank's process group as Ctrl-C would.
	interruptRank struct{ rank int }
	// say: print a line on the launcher's standard error.
	say struct{ line string }
	// finish: every rank ended; Run returns err, or the context's cause
	// when it was interrupted.
	finish struct {
		err         error
		interrupted bool
	}
)

func (startRank) isAction()     {}
func (killRank) isAction()      {}
func (interruptRank) isAction() {}
func (say) isAction()           {}
func (finish) isAction()        {}

// policy is what a Launcher's fields say about supervising its ranks,
// with the defaults filled in.
type policy struct {
	np                        int
	timeout, grace, stopGrace time.Duration
	kill                      map[int]int // rank -> the point at which to kill it
	joinLate                  []int       // points at which rank 0's start starts a late member
	shrink                    bool        // a lost rank is not fatal (with a coordinator)
	minNP                     int         // with shrink: fewest ranks to go on with (at least 1)
}

// rankState is what the supervisor knows of one rank.
type rankState struct {
	pid     int
	exited  bool
	end     string // how its process ended ("" for exit status 0)
	killed  string // why the launcher killed it, if it did
	hung    bool
	point   string
	errLine string
	blamed  int
	done    bool // said "done"
}

// supervisor is the policy's state: what every rank did, and the clocks
// it runs (a failed rank's grace, Ctrl-C's, the progress watchdog).
type supervisor struct {
	p     policy
	now   time.Time
	out   []action // of the current step
	ranks []*rankState
	alive int

	lateStarted  int // of p.joinLate
	lastProgress time.Time
	firstFailed  int // -1 until a rank fails
	graceUntil   time.Time
	hung         bool
	stopping     bool // the context ended
	stopUntil    time.Time
	finished     bool

	// With shrink, what recovery knows of the ranks it lost.
	lost     map[int]bool      // ranks whose process ended and that the survivors go on without
	killedAt map[int]time.Time // ranks nexar-live killed (--kill), when
	endedAt  map[int]time.Time // ranks whose process ended unfinished, when
	aborted  bool              // too few survivors: the coordinator gave up
}

func newSupervisor(p policy) *supervisor {
	return &supervisor{p: p, firstFailed: -1,
		lost: map[int]bool{}, killedAt: map[int]time.Time{}, endedAt: map[int]time.Time{}}
}

// step applies ev, which happened at now, and returns what to do, in
// order.
func (s *supervisor) step(now time.Time, ev event) []action {
	s.now, s.out = now, nil
	switch ev := ev.(type) {
	case started:
		s.started(ev)
	case startFailed:
		s.killAll("killed by nexar-live: a rank could not start")
	case wrote:
		s.wrote(ev.rank, parseStatus(ev.line))
	case exited:
		s.exited(ev)
	case tick:
		s.tick()
	case interrupted:
		s.interrupt()
	case membership:
		s.membership(ev.MembershipEvent)
	case closing:
		s.killAll("killed by nexar-live on exit")
	}
	return s.out
}

func (s *supervisor) do(a action) { s.out = append(s.out, a) }

func (s *supervisor) sayf(format string, args ...any) { s.do(say{fmt.Sprintf(format, args...)}) }

func (s *supervisor) started(ev started) {
	s.ranks = append(s.ranks, &rankState{pid: ev.pid, blamed: -1})
	s.alive++
	// The run has made no progress before its last rank started.
	s.lastProgress = s.now
}

// killAll kills every rank still running that was not killed yet.
func (s *supervisor) killAll(why string) {
	for r, st := range s.ranks {
		if !st.exited && st.killed == "" {
			st.killed = why
			s.do(killRank{r, why})
		}
	}
}

// failed starts the others' grace period when rank r is the first to
// fail.
func (s *supervisor) failed(r int) {
	if s.firstFailed < 0 {
		s.firstFailed = r
		s.graceUntil = s.now.Add(s.p.grace)
	}
}

// wrote applies a status line of rank r: every line is progress.
func (s *supervisor) wrote(r int, l statusLine) {
	st := s.ranks[r]
	s.lastProgress = s.now
	switch l.word {
	case "point":
		if l.described {
			st.point = l.desc
		}
		s.pointStarted(r, st, l.index)
	case "error":
		st.blamed, st.errLine = l.blamed, l.msg
		s.failed(r)
	case "done":
		st.done = true
	}
}

// pointStarted starts a late member as rank 0 starts a point of
// --join-late, and kills rank r as it starts its point of --kill.
func (s *supervisor) pointStarted(r int, st *rankState, idx int) {
	if r == 0 && s.lateStarted < len(s.p.joinLate) && idx == s.p.joinLate[s.lateStarted] && !s.stopping {
		s.lateStarted++
		s.sayf("nexar-live: starting a late member (id %d) as rank 0 starts point %d, as --join-late asks", len(s.ranks), idx)
		s.do(startRank{len(s.ranks)})
	}
	if at, kill := s.p.kill[r]; kill && idx == at && st.killed == "" {
		st.killed = fmt.Sprintf("killed by nexar-live --kill %d@%d", r, at)
		if s.p.shrink {
			s.killedAt[r] = s.now
		}
		s.sayf("nexar-live: killing rank %d (pid %d) at point %d, as --kill asks", r, st.pid, at)
		s.do(killRank{r, st.killed})
	}
}

// exited applies the end of a rank's process, and finishes the run when
// it was the last.
func (s *supervisor) exited(ev exited) {
	st := s.ranks[ev.rank]
	st.exited, st.end = true, ev.end
	s.alive--
	switch {
	case s.p.shrink && !st.done && s.lose(ev.rank):
		// the survivors rebuild without it
	case (ev.end != "" || !st.done) && st.killed == "":
		s.failed(ev.rank)
	}
	if s.alive == 0 {
		s.finish()
	}
}

// lose notes that rank r's process ended before it finished, and reports
// whether the run goes on without it.
func (s *supervisor) lose(r int) bool {
	s.endedAt[r] = s.now
	if s.aborted || s.p.np-len(s.lost)-1 < s.p.minNP {
		return false
	}
	s.lost[r] = true
	return true
}

// tick runs the clocks: Ctrl-C's grace, a failed rank's, the watchdog.
func (s *supervisor) tick() {
	if s.stopping && s.now.After(s.stopUntil) {
		s.killAll(fmt.Sprintf("killed by nexar-live: interrupted, still running %v later", s.p.stopGrace))
	}
	if !s.graceUntil.IsZero() && s.now.After(s.graceUntil) {
		s.killAll(fmt.Sprintf("killed by nexar-live, still running %v after rank %d failed", s.p.grace, s.firstFailed))
	}
	if s.now.Sub(s.lastProgress) > s.p.timeout && !s.hung {
		s.hung = true
		for _, st := range s.ranks {
			if !st.exited {
				st.hung = true
			}
		}
		s.killAll(fmt.Sprintf("killed by nexar-live: no rank made progress for %v", s.p.timeout))
	}
}

// interrupt interrupts every rank, once, and starts Ctrl-C's grace.
func (s *supervisor) interrupt() {
	if s.stopping {
		return
	}
	s.stopping = true
	s.stopUntil = s.now.Add(s.p.stopGrace)
	for r, st := range s.ranks {
		if !st.exited && st.killed == "" {
			s.do(interruptRank{r})
		}
	}
}

// finish ends the run: interrupted, recovered, or as the verdict says.
func (s *supervisor) finish() {
	s.finished = true
	switch {
	case s.stopping:
		s.do(finish{interrupted: true})
	case s.p.shrink && s.recovered():
		s.do(finish{})
	default:
		s.do(finish{err: s.verdict()})
	}
}

// recovered reports whether the run lost ranks and every survivor
// finished: then it succeeded; otherwise the verdict stands.
func (s *supervisor) recovered() bool {
	if len(s.lost) == 0 || s.aborted || s.hung {
		return false
	}
	for r, st := range s.ranks {
		if !s.lost[r] && (!st.done || st.killed != "") {
			return false
		}
	}
	return true
}

// verdict turns the ranks' ends into nil or a *RunError.
func (s *supervisor) verdict() error {
	e := &RunError{Hung: s.hung}
	blamedBy := map[int]bool{}
	var own []int
	for r, st := range s.ranks {
		// A rank that said done finished its part, whatever its exit
		// status (wrong data exits 1 after a complete run).
		if st.done && st.killed == "" {
			continue
		}
		f := RankFailure{Rank: r, Point: st.point, Err: st.errLine, Blamed: st.blamed, Hung: st.hung}
		switch {
		case st.killed != "":
			f.End = st.killed
		case st.end != "":
			f.End = st.end
		default:
			f.End = "exited without finishing"
		}
		e.Ranks = append(e.Ranks, f)
		if st.killed != "" && st.errLine == "" {
			continue // a victim of the launcher, not a cause
		}
		if st.errLine != "" && st.blamed >= 0 {
			blamedBy[st.blamed] = true
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
			if f.Hung || !s.hung {
				e.Culprits = append(e.Culprits, f.Rank)
			}
		}
	}
	return e
}

// membership reports what the membership coordinator noticed or
// decided.
func (s *supervisor) membership(e realnet.MembershipEvent) {
	switch e.Kind {
	case "dead":
		since := ""
		if t, ok := s.killedAt[e.Member]; ok {
			since = fmt.Sprintf(", %.1f ms after nexar-live killed it", ms(e.At.Sub(t)))
		} else if t, ok := s.endedAt[e.Member]; ok {
			since = fmt.Sprintf(", %.1f ms after its process ended", ms(e.At.Sub(t)))
		}
		s.sayf("nexar-live: rank %d lost: %s%s", e.Member, e.Cause, since)
	case "rebuild":
		what := fmt.Sprintf("that %s failed", joinInts(e.Failed))
		switch {
		case len(e.Failed) == 0 && len(e.Joined) == 0:
			what = "to rebuild (a link broke, no rank lost)"
		case len(e.Failed) == 0:
			what = fmt.Sprintf("to take in %s", joinInts(e.Joined))
		case len(e.Joined) > 0:
			what += fmt.Sprintf(" and to take in %s", joinInts(e.Joined))
		}
		who := "survivors"
		if len(e.Joined) > 0 {
			who = "members"
		}
		s.sayf("nexar-live: the %s (first-world ranks %s) agreed %s in %.1f ms; rebuilding a world of %d ranks, resuming at point %d",
			who, joinInts(e.Members), what, ms(e.Agreed), len(e.Members), e.Point)
	case "rebuilt":
		s.sayf("nexar-live: world %d of %d ranks connected, %.1f ms after the coordinator noticed the failure (or the member waiting to join)", e.Epoch, len(e.Members), ms(e.Rebuild))
	case "abort":
		s.aborted = true
		s.sayf("nexar-live: no rebuild: %s", e.Cause)
	}
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
