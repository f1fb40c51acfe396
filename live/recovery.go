package live

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/internal/atomicfile"
	"github.com/nexar-go/nexar-go/live/harness"
	"github.com/nexar-go/nexar-go/live/launch"
	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/sweep"
)

// Recovery is what a run does when it loses a rank, nexar's recovery
// policy: RecoveryAbort (the default) ends the run, every survivor failing
// with an error naming the lost rank; RecoveryShrink has the survivors
// agree on who failed, rebuild the world with contiguous ranks, and go on
// with the remaining points at the smaller world (realnet/membership.go).
type Recovery string

const (
	RecoveryAbort  Recovery = "abort"
	RecoveryShrink Recovery = "shrink"
)

// ParseRecovery reads a recovery policy's name.
func ParseRecovery(s string) (Recovery, error) {
	switch r := Recovery(s); r {
	case RecoveryAbort, RecoveryShrink:
		return r, nil
	}
	return "", fmt.Errorf("recovery %q: want %q (a lost rank ends the run) or %q (the survivors rebuild a smaller world and go on)", s, RecoveryAbort, RecoveryShrink)
}

// RecoveryFile is where rank 0 writes what recovery did, when it did
// anything.
const RecoveryFile = "recovery.json"

// RecoveryEvent is one rebuild of a run's world, as the rank that is rank 0
// after it saw it.
type RecoveryEvent struct {
	Epoch       int `json:"epoch"`
	WorldBefore int `json:"world_before"`
	WorldAfter  int `json:"world_after"`
	// Failed are the lost ranks, as ranks of the first world, and how the
	// coordinator noticed each.
	Failed []int    `json:"failed"`
	Causes []string `json:"causes"`
	// Joined are the members that joined late (an elastic world), named
	// by their member ids (from the first world's size on).
	Joined []int `json:"joined,omitempty"`
	// Members are the ranks of the first world that make up the new one,
	// by new rank (late members by their ids).
	Members []int `json:"members"`
	// Error is the error that ended this rank's part of the old world
	// (often another survivor's abort, which the coordinator's stop
	// caused); empty when the world was left for members to join.
	Error string `json:"error,omitempty"`
	// ResumePoint is the index of the first point run at the new size.
	ResumePoint int `json:"resume_point"`
	// Agreed is how long after the coordinator's first sign of the
	// failure every survivor had reported it; Rebuild how long this rank
	// took from its failed operation to a new world whose every rank has
	// answered (the new link connected and the job checked).
	AgreedS  float64 `json:"agreed_s"`
	RebuildS float64 `json:"rebuild_s"`
	// LeftOut are the points of the rest of the sweep that cannot run at
	// the new size (an algorithm for powers of two), by index.
	LeftOut []int `json:"left_out,omitempty"`
}

func (e RecoveryEvent) String() string {
	var lost []string
	for i, r := range e.Failed {
		lost = append(lost, fmt.Sprintf("rank %d (%s)", r, e.Causes[i]))
	}
	what := "lost " + strings.Join(lost, ", ")
	if len(lost) == 0 {
		what = "a link broke, no rank lost"
	}
	if len(e.Joined) > 0 {
		if len(lost) == 0 {
			what = fmt.Sprintf("members %v joined", e.Joined)
		} else {
			what += fmt.Sprintf(", and members %v joined", e.Joined)
		}
	}
	s := fmt.Sprintf("recovery %d: %s; the members (first-world ranks %v) agreed in %.1f ms and rebuilt a world of %d ranks (was %d) in %.1f ms; resuming at point %d",
		e.Epoch, what, e.Members, e.AgreedS*1e3, e.WorldAfter, e.WorldBefore, e.RebuildS*1e3, e.ResumePoint)
	if len(e.LeftOut) > 0 {
		s += fmt.Sprintf("; left out at %d ranks: points %v (their algorithm needs a power of two)", e.WorldAfter, e.LeftOut)
	}
	return s
}

// resizeJob returns the job of the points of job from index from on, at
// world ranks, and the indexes of those that cannot run at that size.
// The points keep their indexes; the ID is the job's with the new size,
// so that ranks compare it as they compare the first.
func resizeJob(job *Job, from, world int) (*Job, []int) {
	j := &Job{Options: job.Options}
	var left []int
	for _, p := range job.Points {
		if p.Index < from {
			continue
		}
		if p.Algorithm.PowerOfTwo && world&(world-1) != 0 {
			left = append(left, p.Index)
			continue
		}
		p.World = world
		p.Root %= world
		j.Points = append(j.Points, p)
	}
	h := sha256.New()
	h.Write(job.ID[:])
	var b [16]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(world))
	binary.LittleEndian.PutUint64(b[8:], uint64(from))
	h.Write(b[:])
	copy(j.ID[:], h.Sum(nil))
	return j, left
}

// errRegroup ends a rank's part of a world at a point boundary, so that
// members waiting to join can enter (an elastic world).
var errRegroup = errors.New("live: leaving the world at a point boundary for members that join")

// boundaryVote is an elastic world's point boundary: rank 0 decides
// whether the ranks leave the world here for members waiting to join
// (the coordinator asked: grow is closed), and tells every rank, so that
// all leave after the same point.
func boundaryVote(ctx context.Context, l algos.Link, grow <-chan struct{}, seq uint64) (bool, error) {
	sl := algos.Scoped(l, harness.CommElastic, seq)
	if l.Rank() != 0 {
		b := make(device.Host, 1)
		if err := algos.Recv(ctx, sl, 0, 0, b); err != nil {
			return false, err
		}
		return b[0] == 1, nil
	}
	b := device.Host{0}
	select {
	case <-grow:
		b[0] = 1
	default:
	}
	reqs := make([]algos.Request, 0, l.Size())
	for r := 1; r < l.Size(); r++ {
		reqs = append(reqs, sl.Isend(r, 0, b))
	}
	return b[0] == 1, l.Wait(ctx, reqs...)
}

// recoverable reports whether a run's error is the loss of a rank (or a
// link the coordinator stopped), which shrink recovers from, rather than
// a problem every world would have.
func recoverable(err error) bool {
	var jm *harness.JobMismatchError
	if err == nil || IsWrongData(err) || errors.As(err, &jm) {
		return false
	}
	var pe *realnet.PeerError
	var te *realnet.TimeoutError
	return errors.As(err, &pe) || errors.As(err, &te) || errors.Is(err, realnet.ErrClosed)
}

// runShrink runs job on link as runLinked does, and when the world loses
// a rank, rebuilds it through the membership coordinator and goes on with
// the remaining points at the smaller world. It returns the report of the
// rank that is rank 0 at the end (nil on the others), and the last link,
// which the caller closes.
//
// In an elastic world (elastic true) the ranks decide at every point
// boundary whether to leave the world for members waiting to join
// (boundaryVote); a member that joined late starts with joined, its
// place in the world it joined.
func runShrink(ctx context.Context, link *realnet.Link, member *realnet.Member, job *Job, out Output, net realnet.Config, st *launch.StatusWriter,
	elastic bool, joined *realnet.Rebuild) (*Report, *realnet.Link, error) {
	r := &shrinkRun{link: link, member: member, job: job, cur: job, out: out, net: net, st: st, elastic: elastic}
	if joined != nil {
		r.cur, _ = resizeJob(job, joined.Point, joined.World)
		r.first = joined.Point
		if err := harness.Hello(ctx, link, r.cur.ID); err != nil {
			err = fmt.Errorf("live: the world joined: %w", err)
			st.Error(err)
			return nil, link, err
		}
	}
	for {
		if r.link.Rank() == 0 && r.rec == nil {
			var err error
			if r.rec, err = newRecorder(out); err != nil {
				st.Error(err)
				return nil, r.link, err
			}
		}
		started, next, err := r.runWorld(ctx)
		regroup := errors.Is(err, errRegroup)
		if !regroup && (!recoverable(err) || ctx.Err() != nil) {
			if err != nil {
				st.Error(err)
			}
			if r.rec == nil {
				return nil, r.link, err
			}
			rep, err := r.rec.finish(err)
			return rep, r.link, err
		}
		if regroup {
			// Every rank left after the same point: a farewell, not a
			// failure.
			started, err = next, nil
		}
		if err := r.rebuild(ctx, started, regroup, err); err != nil {
			return nil, r.link, err
		}
	}
}

// shrinkRun is a run with --recovery shrink across the worlds it
// rebuilds: the current world's link and what is left of the job at its
// size, from point first, and rank 0's recorder (nil on the other ranks,
// and on a rank that became rank 0 in a rebuild until then).
type shrinkRun struct {
	link    *realnet.Link
	member  *realnet.Member
	job     *Job // the whole job, at the first world's size
	cur     *Job // the rest of it, at the current world's size
	first   int
	out     Output
	net     realnet.Config
	st      *launch.StatusWriter
	elastic bool
	rec     *recorder
}

// runWorld runs the rest of the job in the current world until it ends,
// fails, or (elastic) leaves the world at a point boundary (errRegroup).
// It returns the index of the last point started and, after a regroup,
// the point to go on from.
func (r *shrinkRun) runWorld(ctx context.Context) (started, next int, err error) {
	var votes uint64 // each world counts its boundaries from 0
	started, next = r.first, -1
	link := r.link
	hooks := RankHooks{
		Point: func(p sweep.Point) {
			started = p.Index
			r.st.Point(p.Index, p.String())
		},
		Iter: r.st.Beat,
	}
	if r.rec != nil {
		hooks.Result = r.rec.add
	}
	if r.elastic {
		grow := r.member.Grow()
		hooks.Boundary = func(n int) (bool, error) {
			votes++
			next = n
			return boundaryVote(ctx, link, grow, votes)
		}
	}
	ended := make(chan struct{})
	stopped := r.member.Stopped()
	go func() {
		select {
		case <-stopped:
			link.Abort() // another rank is lost: leave this world now
		case <-ended:
		}
	}()
	if len(r.cur.Points) > 0 {
		_, err = RunRank(ctx, link, r.cur, hooks)
	}
	close(ended)
	return started, next, err
}

// rebuild leaves the current world, which failed with err (regroup: which
// every rank left at a point boundary, err nil), and goes on in the one
// the membership coordinator rebuilds, from point started, with the job
// resized to it; the new rank 0 records the rebuild. An error ends the
// run: rank 0's rows are saved.
func (r *shrinkRun) rebuild(ctx context.Context, started int, regroup bool, err error) error {
	failedAt := time.Now()
	before := r.link.Size()
	if regroup {
		r.link.Close()
		r.st.Regrouping(started)
	} else {
		r.link.Abort()
		r.st.Recovering(err)
	}
	nl, rb, rerr := r.member.Rebuild(ctx, started, err, r.net)
	if rerr != nil {
		return r.fail(fmt.Errorf("live: rebuilding the world after %v: %w", err, rerr))
	}
	r.link = nl
	var left []int
	r.cur, left = resizeJob(r.job, rb.Point, rb.World)
	r.first = rb.Point
	// Every rank answers the new world's hello before its first point:
	// time the rebuild up to there.
	if err := harness.Hello(ctx, r.link, r.cur.ID); err != nil {
		return r.fail(fmt.Errorf("live: the rebuilt world: %w", err))
	}
	ev := RecoveryEvent{Epoch: rb.Epoch, WorldBefore: before, WorldAfter: rb.World, Failed: rb.Failed, Causes: rb.Causes,
		Joined: rb.Joined, Members: rb.Members, ResumePoint: rb.Point, AgreedS: rb.Agreed.Seconds(),
		RebuildS: time.Since(failedAt).Seconds(), LeftOut: left}
	if err != nil {
		ev.Error = err.Error()
	}
	r.st.Rebuilt(r.link.Rank(), r.link.Size())
	if r.link.Rank() != 0 {
		return nil
	}
	if r.rec == nil {
		// This rank was not rank 0 before: the rows of the old rank 0
		// died with it.
		var err error
		if r.rec, err = newRecorder(r.out); err != nil {
			r.st.Error(err)
			return err
		}
	}
	r.rec.recovered(ev)
	return nil
}

// fail reports err, which ends the run, and has rank 0 save its rows.
func (r *shrinkRun) fail(err error) error {
	r.st.Error(err)
	if r.rec != nil {
		r.rec.finish(err)
	}
	return err
}

// recovered records a rebuild: a line in the table, and recovery.json.
func (r *recorder) recovered(ev RecoveryEvent) {
	r.rep.Recoveries = append(r.rep.Recoveries, ev)
	if r.out.Table != nil {
		fmt.Fprintf(r.out.Table, "# %s\n", ev)
	}
	if r.out.Dir == "" {
		return
	}
	b, err := json.MarshalIndent(struct {
		Recoveries []RecoveryEvent `json:"recoveries"`
	}{r.rep.Recoveries}, "", "  ")
	if err == nil {
		err = atomicfile.WriteFile(filepath.Join(r.out.Dir, RecoveryFile), append(b, '\n'))
	}
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("writing %s: %w", RecoveryFile, err)
	}
}

// ReadRecoveryFile reads the recovery.json a run wrote; none is no error.
func ReadRecoveryFile(path string) ([]RecoveryEvent, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f struct {
		Recoveries []RecoveryEvent `json:"recoveries"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f.Recoveries, nil
}

// joinMembership connects a worker of a run with --recovery shrink to its
// launcher's membership coordinator, as member la.Rank. It returns the
// transport configuration with the credentials loaded, for every world the
// worker will join.
func joinMembership(ctx context.Context, cfg WorkerConfig, la realnet.Launch, getenv func(string) string) (*realnet.Member, realnet.Config, error) {
	net := cfg.Net
	addr := getenv(launch.MembershipEnv)
	switch {
	case addr == "":
		return nil, net, fmt.Errorf("live: --recovery shrink needs a membership coordinator: %s is not set (nexar-live run hosts one; other launchers do not)", launch.MembershipEnv)
	case la.Rank < 0 && getenv(launch.LateEnv) == "":
		return nil, net, errors.New("live: --recovery shrink needs ranks known at launch")
	case cfg.Device != "" && cfg.Device != DeviceHost:
		return nil, net, fmt.Errorf("live: --recovery shrink runs on host memory only, not --device %s", cfg.Device)
	}
	if net.Credentials == nil {
		c, err := realnet.LoadCredentials(la.CA, la.Cert, la.Key)
		if err != nil {
			return nil, net, err
		}
		net.Credentials = c
	}
	net.TrustedNetwork = net.TrustedNetwork || la.TrustedNetwork
	id := la.Rank
	if late := getenv(launch.LateEnv); late != "" {
		n, err := strconv.Atoi(late)
		if err != nil || n < la.World {
			return nil, net, fmt.Errorf("live: %s=%q: want a member id of at least the world size %d", launch.LateEnv, late, la.World)
		}
		id = n
	}
	m, err := realnet.JoinMembership(ctx, addr, net.Credentials, id, cfg.Heartbeat)
	return m, net, err
}
