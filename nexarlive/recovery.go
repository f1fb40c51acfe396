package nexarlive

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/live/launch"
	"github.com/nexar-go/nexar-go/realnet"
)

// recoveryFlags are the flags of what a run does when it loses a rank
// (run and worker), and of the failures nexar-live run injects.
type recoveryFlags struct {
	recovery  string
	interval  time.Duration
	deadAfter time.Duration
	minNP     int
	maxNP     int
	kill      map[int]int // run only: rank -> point
	late      []int       // run only: points at which a member joins
}

const recoveryFlagsHelp = `  --recovery P         what a lost rank does to the run: "abort" (default: every
                       rank fails with an error naming it, exit status 3) or
                       "shrink" (the survivors agree on who failed, rebuild the
                       world with contiguous ranks, and run the remaining points
                       at the smaller world; results.csv's world column says
                       which points ran at which size, the table and
                       DIR/recovery.json the failure and the rebuild's time)
  --heartbeat D        shrink: heartbeat interval of each rank (default 1s)
  --dead-after D       shrink: a rank without a heartbeat for D is dead (default
                       5s, at least twice --heartbeat): a killed rank is
                       noticed at once (its kernel closes its connections), a
                       hung one or a lost host within D plus a quarter of
                       --heartbeat; a rank that has not reported its broken
                       link D after the others were told to stop is dead too
  --min-np N           shrink: fewest ranks to go on with (default 1)
  --max-np N           shrink: an elastic world of up to N ranks: members that
                       join late enter at the next point boundary (the ranks
                       leave the world together after a point and rebuild it
                       with the newcomers as the last ranks)
`

const killFlagHelp = `  --kill R@P           inject a failure: kill rank R's process (SIGKILL) when it
                       starts point P (the index of the point in the run, from
                       0); repeatable. With --recovery shrink the run goes on.
  --join-late P        with --max-np: start one more worker when rank 0 starts
                       point P; repeatable
`

func (f *recoveryFlags) register(fs *flag.FlagSet, withKill bool) {
	fs.StringVar(&f.recovery, "recovery", string(live.RecoveryAbort), `"abort" or "shrink": what a lost rank does to the run`)
	fs.DurationVar(&f.interval, "heartbeat", realnet.DefaultHeartbeatInterval, "shrink: heartbeat interval")
	fs.DurationVar(&f.deadAfter, "dead-after", realnet.DefaultDeadAfter, "shrink: a rank silent this long is dead")
	fs.IntVar(&f.minNP, "min-np", 1, "shrink: fewest ranks to go on with")
	fs.IntVar(&f.maxNP, "max-np", 0, "shrink: an elastic world of up to this many ranks (members may join late)")
	if !withKill {
		return
	}
	fs.Func("join-late", "with --max-np: start one more worker when rank 0 starts point P (repeatable)", func(v string) error {
		p, err := strconv.Atoi(v)
		if err != nil || p < 1 {
			return fmt.Errorf("%q: want a point index of at least 1", v)
		}
		f.late = append(f.late, p)
		return nil
	})
	f.kill = map[int]int{}
	fs.Func("kill", "inject a failure: kill rank R when it starts point P (R@P; repeatable)", func(v string) error {
		rs, ps, ok := strings.Cut(v, "@")
		r, err1 := strconv.Atoi(rs)
		p, err2 := strconv.Atoi(ps)
		if !ok || err1 != nil || err2 != nil || r < 0 || p < 0 {
			return fmt.Errorf("%q: want RANK@POINT, e.g. 2@3", v)
		}
		f.kill[r] = p
		return nil
	})
}

// check validates the flags for a run of np ranks (np 0: a worker).
func (f *recoveryFlags) check(np int) (live.Recovery, realnet.Heartbeat, error) {
	rec, err := live.ParseRecovery(f.recovery)
	if err != nil {
		return "", realnet.Heartbeat{}, fmt.Errorf("--recovery: %v", err)
	}
	hb := realnet.Heartbeat{Interval: f.interval, DeadAfter: f.deadAfter}
	switch {
	case f.interval <= 0:
		return "", hb, fmt.Errorf("--heartbeat %v: want a positive duration", f.interval)
	case f.deadAfter < 2*f.interval:
		return "", hb, fmt.Errorf("--dead-after %v: want at least twice --heartbeat (%v)", f.deadAfter, f.interval)
	case f.minNP < 1 || np > 0 && f.minNP > np:
		return "", hb, fmt.Errorf("--min-np %d: want 1 to --np", f.minNP)
	}
	switch {
	case f.maxNP != 0 && (rec != live.RecoveryShrink || np > 0 && f.maxNP < np):
		return "", hb, fmt.Errorf("--max-np %d: an elastic world needs --recovery shrink and at least --np ranks", f.maxNP)
	case len(f.late) > 0 && f.maxNP == 0:
		return "", hb, errors.New("--join-late needs --max-np")
	case !slices.IsSorted(f.late):
		return "", hb, errors.New("--join-late: give the points in increasing order")
	}
	for r := range f.kill {
		if np > 0 && r >= np {
			return "", hb, fmt.Errorf("--kill %d@...: no rank %d in a run of %d", r, r, np)
		}
	}
	return rec, hb, nil
}

// workerArgs are the flags a launcher passes on to its workers.
func (f *recoveryFlags) workerArgs() []string {
	return []string{"--recovery", f.recovery, "--heartbeat", f.interval.String(), "--dead-after", f.deadAfter.String(),
		"--min-np", strconv.Itoa(f.minNP), "--max-np", strconv.Itoa(f.maxNP)}
}

// apply sets the launcher's recovery.
func (f *recoveryFlags) apply(l *launch.Launcher, rec live.Recovery, hb realnet.Heartbeat) {
	l.Shrink, l.Heartbeat, l.MinNP, l.Kill = rec == live.RecoveryShrink, hb, f.minNP, f.kill
	l.MaxNP, l.JoinLate = f.maxNP, f.late
}
