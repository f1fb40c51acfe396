package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/live/launch"
	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// DefaultJoinTimeout bounds how long a worker waits for the world to
// assemble.
const DefaultJoinTimeout = 60 * time.Second

// WorkerConfig configures one rank process of a run.
type WorkerConfig struct {
	// Scenario is the path of the scenario file; every rank reads it, and
	// all must read the same (the ranks compare a hash before starting).
	Scenario string
	Options  Options
	// Net tunes the transport. Credentials, if nil, are loaded from the
	// files the environment names (NEXAR_CA, NEXAR_CERT, NEXAR_KEY).
	Net realnet.Config
	// Output is where rank 0 writes; its Scenario is set by Worker.
	Output Output
	// Getenv reads the launcher's environment (os.Getenv if nil).
	Getenv func(string) string
	// Status, if not nil, receives status lines for a launcher (see
	// launch.StatusWriter).
	Status io.Writer
	// JoinTimeout bounds assembling the world (DefaultJoinTimeout if 0).
	JoinTimeout time.Duration
	// Device is where the rank's buffers live: DeviceHost (or "") or
	// DeviceCUDA, the GPU of its local rank (see device.go).
	Device string
	// Recovery is what the run does when it loses a rank (recovery.go);
	// RecoveryShrink needs the membership coordinator the environment's
	// launch.MembershipEnv names, whose heartbeats Heartbeat configures.
	Recovery  Recovery
	Heartbeat realnet.Heartbeat
	// Elastic, with RecoveryShrink, lets members join late: the ranks
	// decide at every point boundary whether to make room for them. A
	// worker whose environment sets launch.LateEnv is such a member.
	Elastic bool
	// ResumeFrom, when positive, continues a run that measured the
	// first ResumeFrom points already: every rank skips them, and rank 0
	// takes their rows from the partial file in Output.Dir (which must
	// hold them) and writes them first (nexar-live run --resume).
	ResumeFrom int
}

// Worker runs one rank of a run under any launcher: it reads its rank,
// the world size and the rendezvous from the environment as
// realnet.LaunchFromEnv defines it (torchrun, Slurm, MPI launchers or nexar's
// own variables), joins the world over QUIC, measures the scenario's
// points of that world size, and on rank 0 writes the results. It returns
// rank 0's report (nil on other ranks).
//
// On failure the rank leaves the world at once (realnet.Link.Abort), so
// the others learn which rank gave up instead of waiting for a timeout.
func Worker(ctx context.Context, cfg WorkerConfig) (*Report, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	st := launch.NewStatusWriter(cfg.Status, Blamed)
	fail := func(err error) (*Report, error) {
		st.Error(err)
		return nil, err
	}
	la, err := realnet.LaunchFromEnv(getenv)
	if err != nil {
		return fail(err)
	}
	s, err := scenario.Load(cfg.Scenario)
	if err != nil {
		return fail(err)
	}
	job, err := NewJob(s, la.World, cfg.Options)
	if err != nil {
		return fail(err)
	}
	full := job
	if cfg.ResumeFrom > 0 {
		if cfg.Recovery == RecoveryShrink {
			return fail(errors.New("live: a run with --recovery shrink cannot be resumed"))
		}
		if job, err = job.From(cfg.ResumeFrom); err != nil {
			return fail(err)
		}
	}
	dev, err := openRankDevice(cfg.Device, getenv)
	if err != nil {
		return fail(err)
	}
	var rankLink algos.Link                // what the collectives run on (dev.stage)
	defer func() { dev.close(rankLink) }() // after link is closed
	jt := cfg.JoinTimeout
	if jt <= 0 {
		jt = DefaultJoinTimeout
	}
	jctx, cancel := context.WithTimeout(ctx, jt)
	var member *realnet.Member
	if cfg.Recovery == RecoveryShrink {
		if member, cfg.Net, err = joinMembership(jctx, cfg, la, getenv); err != nil {
			cancel()
			return fail(err)
		}
		defer member.Close()
	}
	var link *realnet.Link
	var joined *realnet.Rebuild
	if member != nil && getenv(launch.LateEnv) != "" {
		cancel()
		var rb realnet.Rebuild
		if link, rb, err = member.JoinLate(ctx, cfg.Net); err != nil {
			var rej *realnet.JoinRejectedError
			if errors.As(err, &rej) {
				// The run ended, or stays at its largest size: nothing
				// for this member to do.
				fmt.Fprintf(os.Stderr, "nexar-live worker: not taken in: %s\n", rej.Reason)
				member.Done()
				st.Done()
				return nil, nil
			}
			return fail(fmt.Errorf("live: joining late: %w", err))
		}
		joined = &rb
	} else {
		link, err = realnet.Start(jctx, la, cfg.Net)
		cancel()
	}
	if err != nil {
		return fail(fmt.Errorf("live: joining a world of %d through %s: %w", la.World, la.Seed, err))
	}
	st.Ready(link.Rank())
	out, err := rankOutput(cfg, la, s, job, full, dev, link.Rank())
	if err != nil {
		link.Abort()
		return fail(err)
	}
	if rankLink, job, err = dev.stage(link, job); err != nil {
		link.Abort()
		return fail(err)
	}
	var rep *Report
	if member != nil {
		rep, link, err = runShrink(ctx, link, member, job, out, cfg.Net, st, cfg.Elastic, joined)
	} else {
		rep, err = runLinked(ctx, rankLink, job, out, st)
	}
	if err != nil && !IsWrongData(err) {
		link.Abort()
		return rep, err
	}
	if cerr := link.Close(); cerr != nil {
		st.Error(cerr)
		return rep, fmt.Errorf("live: leaving the world: %w", cerr)
	}
	if member != nil {
		member.Done()
	}
	st.Done()
	return rep, err // nil, or wrong data (which every rank finished)
}

// rankOutput is where rank of the world la describes writes what it
// measures of job (the rest of full after cfg.ResumeFrom points), on
// device dev (nil: host memory): cfg.Output with the scenario s, the
// timing, the table's preamble, the device and the thresholds the
// transport uses, and on rank 0 of a resumed run the rows the partial
// file holds.
func rankOutput(cfg WorkerConfig, la realnet.Launch, s *scenario.Scenario, job, full *Job, dev *rankDevice, rank int) (Output, error) {
	out := cfg.Output
	if cfg.ResumeFrom > 0 && rank == 0 {
		var err error
		if out, err = resumeOutput(out, full, cfg.ResumeFrom); err != nil {
			return out, err
		}
	}
	out.Scenario = s
	out.Timing = job.Options.Timing
	if out.Preamble == nil {
		out.Preamble = Preamble(job, fmt.Sprintf("%d ranks over QUIC, launched by %s, seed %s", la.World, la.Launcher, la.Seed))
	}
	if out.ResumeFile != "" {
		out.Preamble = append(out.Preamble, fmt.Sprintf("resumed after the %d points %s holds", len(out.Resume), out.ResumeFile))
	}
	out.Device = cfg.Device
	used := ThresholdsOf(cfg.Net)
	out.Transport = &used
	if dev != nil {
		out.Preamble = append(out.Preamble, dev.describe(rank))
	}
	return out, nil
}

// runLinked runs job on one connected rank; rank 0 records the results
// in out. A failure is reported on the status pipe.
func runLinked(ctx context.Context, link algos.Link, job *Job, out Output, st *launch.StatusWriter) (*Report, error) {
	var rec *recorder
	if link.Rank() == 0 {
		var err error
		if rec, err = newRecorder(out); err != nil {
			st.Error(err)
			return nil, err
		}
	}
	hooks := RankHooks{
		Point: func(p sweep.Point) {
			st.Point(p.Index, p.String())
			if rec != nil && out.Started != nil {
				out.Started(p.Index)
			}
		},
		Iter: st.Beat,
	}
	if rec != nil {
		hooks.Result = rec.add
	}
	_, err := RunRank(ctx, link, job, hooks)
	if err != nil {
		st.Error(err)
	}
	if rec == nil {
		return nil, err
	}
	return rec.finish(err)
}

// Preamble is the first lines of a run's table: what runs where, and how
// it is timed.
func Preamble(job *Job, where string) []string {
	lines := []string{
		fmt.Sprintf("nexar-live: %s", where),
		job.Options.Describe() + "; #wrong: elements differing from the reference",
	}
	if len(job.Skipped) > 0 {
		lines = append(lines, fmt.Sprintf("left out: the scenario's world sizes %v (this run has %d ranks)", job.Skipped, job.Points[0].World))
	}
	return lines
}

// Blamed returns the rank an error of a run blames: the lost peer of an
// *algos.PeerLostError (which realnet's *PeerError and the simulator's
// errors for a failed or returned rank are found as), or the first peer
// a *realnet.TimeoutError waited for; -1 when it names none.
func Blamed(err error) int {
	var pl *algos.PeerLostError
	if errors.As(err, &pl) {
		return pl.Rank
	}
	var te *realnet.TimeoutError
	if errors.As(err, &te) {
		if ps := te.Peers(); len(ps) > 0 {
			return ps[0]
		}
	}
	return -1
}

// resumeOutput returns out with the rows of the first k points of job,
// read from the partial file in out.Dir, to go first in its results.
func resumeOutput(out Output, job *Job, k int) (Output, error) {
	path := filepath.Join(out.Dir, PartialResultsFile)
	f, err := os.Open(path)
	if err != nil {
		return out, fmt.Errorf("live: resuming after %d points: %w", k, err)
	}
	defer f.Close()
	rows, err := ReadPartialResults(f)
	if err != nil {
		return out, fmt.Errorf("live: resuming: %s: %w", path, err)
	}
	if len(rows) < k {
		return out, fmt.Errorf("live: resuming after %d points: %s holds %d", k, path, len(rows))
	}
	if _, err := job.ResumeRows(rows[:k]); err != nil {
		return out, fmt.Errorf("live: resuming: %s: %w", path, err)
	}
	out.Resume, out.ResumeFile = rows[:k], path
	return out, nil
}
