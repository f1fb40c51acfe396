package workload

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/nexar-go/nexar-go/algos"
)

// Stats accounts for a step from its ranks' stream records: it is the
// algos.StreamObserver of every rank (safe for concurrent use, as real
// links need). For each rank it adds up
//
//   - compute: the time the compute stream spent computing;
//   - exposed communication: the time the compute stream spent waiting
//     for a communication stream, by the process group and collective
//     of the last work queued on that stream before the event it waited
//     for (the collective that held it up); collectives on the critical
//     path (tensor and expert parallelism) are exposed whole, gradient
//     buckets only where the compute ran out of work before them;
//   - the pipeline bubble: the time the compute stream spent waiting
//     for a pipeline receive (the schedule's bubble, with the transfers
//     of activations and gradients on its critical path), and, with
//     more than one stage, the time from the rank's end to the step's
//     (the stages end at different times: the first stage last);
//   - idle: without pipeline stages, the time from the rank's end to
//     the step's;
//   - the busy time of each group's streams (their collectives and
//     messages, overlapped or not).
//
// A rank's step is then its compute, its exposed communication (which
// includes its waits for its collectives' slower peers), its bubble and
// its idle time.
type Stats struct {
	mu    sync.Mutex
	ranks []rankStats
	keep  func(rank int) bool
	recs  []algos.StreamRecord
}

type expKey struct {
	group Group
	coll  string
}

type rankStats struct {
	compute, bubble, end time.Duration
	exposed              map[expKey]time.Duration
	busy                 [len(groupNames)]time.Duration
}

// NewStats returns the accounts of a world of ranks; keep, if not nil,
// says which ranks' records to keep whole (Records), for a timeline.
func NewStats(world int, keep func(rank int) bool) *Stats {
	return &Stats{ranks: make([]rankStats, world), keep: keep}
}

var _ algos.StreamObserver = (*Stats)(nil)

// StreamItem implements algos.StreamObserver.
func (s *Stats) StreamItem(r algos.StreamRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keep != nil && s.keep(r.Rank) {
		s.recs = append(s.recs, r)
	}
	rs := &s.ranks[r.Rank]
	rs.end = max(rs.end, r.End)
	d := r.End - r.Start
	if r.Stream != StreamCompute {
		if g, ok := streamGroup[r.Stream]; ok && r.Kind != algos.KindWait {
			rs.busy[g] += d
		}
		return
	}
	switch r.Kind {
	case algos.KindCompute:
		rs.compute += d
	case algos.KindWait:
		if d == 0 {
			return
		}
		g, ok := streamGroup[r.Waited.Stream]
		switch {
		case ok && g == PP:
			rs.bubble += d
		case ok:
			if rs.exposed == nil {
				rs.exposed = map[expKey]time.Duration{}
			}
			rs.exposed[expKey{g, r.Waited.Collective}] += d
		}
	}
}

// Records returns the records kept (of the ranks NewStats's keep names),
// in the order they came.
func (s *Stats) Records() []algos.StreamRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.recs)
}

// Exposed is the exposed communication of one collective of one group.
type Exposed struct {
	Group      Group
	Collective string
	// Seconds is the mean over the ranks of the compute stream's wait
	// for it, Max the most any rank waited.
	Seconds, Max float64
}

// GroupTime is a process group's communication time.
type GroupTime struct {
	Group Group
	// Busy is the mean over the ranks of the time its streams were busy
	// with its collectives and messages; Exposed the mean time the
	// compute waited for them (for PP: the bubble).
	Busy, Exposed float64
}

// RankResult is one rank's account of the step, in seconds.
type RankResult struct {
	Rank, Stage int
	// Speed is the rank's compute factor (skew and stragglers).
	Speed float64
	// End is when the rank finished; Compute, Bubble, Exposed and Idle
	// its compute, pipeline bubble, exposed communication and idle time
	// (see Stats).
	End, Compute, Bubble, Exposed, Idle float64
}

// Result is what a simulated step measured.
type Result struct {
	// Step is the step's time in seconds: when the last rank finished.
	Step float64
	// Compute is the mean over the ranks of their compute time, and
	// Utilisation the mean of compute / Step.
	Compute, Utilisation float64
	// Bubble is the mean pipeline bubble, BubbleFraction Bubble / Step;
	// Idle the mean idle time (see Stats).
	Bubble, BubbleFraction, Idle float64
	// ExposedTotal is the mean exposed communication, all groups
	// together; Exposed breaks it down by group and collective, largest
	// first; Groups gives each group's busy and exposed time.
	ExposedTotal float64
	Exposed      []Exposed
	Groups       []GroupTime
	// Ranks are the ranks' own accounts, in rank order.
	Ranks []RankResult
	// Messages and Events are the simulator's counts (0 on real links).
	Messages, Events int64
}

// Result sums the accounts up: step is the step's time in seconds (the
// simulator's, to its picosecond; on real links the slowest rank's).
func (s *Stats) Result(p *Plan, step float64) *Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := float64(len(s.ranks))
	res := &Result{Step: step}
	exp := map[expKey][2]float64{}
	var groups [len(groupNames)][2]float64
	for r := range s.ranks {
		rs := &s.ranks[r]
		rr := RankResult{Rank: r, Stage: p.Stage(r), Speed: p.Speed(r), End: rs.end.Seconds(),
			Compute: rs.compute.Seconds(), Bubble: rs.bubble.Seconds()}
		if tail := max(step-rr.End, 0); p.Spec.PP > 1 {
			rr.Bubble += tail
		} else {
			rr.Idle = tail
		}
		for k, d := range rs.exposed {
			e := exp[k]
			e[0] += d.Seconds()
			e[1] = max(e[1], d.Seconds())
			exp[k] = e
			rr.Exposed += d.Seconds()
			groups[k.group][1] += d.Seconds()
		}
		groups[PP][1] += rr.Bubble
		for g, d := range rs.busy {
			groups[g][0] += d.Seconds()
		}
		res.Compute += rr.Compute / n
		if step > 0 {
			res.Utilisation += rr.Compute / step / n
		}
		res.Bubble += rr.Bubble / n
		res.Idle += rr.Idle / n
		res.ExposedTotal += rr.Exposed / n
		res.Ranks = append(res.Ranks, rr)
	}
	if step > 0 {
		res.BubbleFraction = res.Bubble / step
	}
	for k, e := range exp {
		res.Exposed = append(res.Exposed, Exposed{Group: k.group, Collective: k.coll, Seconds: e[0] / n, Max: e[1]})
	}
	slices.SortFunc(res.Exposed, func(a, b Exposed) int {
		return cmp.Or(cmp.Compare(b.Seconds, a.Seconds), cmp.Compare(a.Group, b.Group), cmp.Compare(a.Collective, b.Collective))
	})
	for _, g := range Groups() {
		if groups[g][0] > 0 || groups[g][1] > 0 {
			res.Groups = append(res.Groups, GroupTime{Group: g, Busy: groups[g][0] / n, Exposed: groups[g][1] / n})
		}
	}
	return res
}

// ExposedOf returns the mean exposed time of group g's collective coll
// ("" for all of the group's).
func (r *Result) ExposedOf(g Group, coll string) float64 {
	t := 0.0
	for _, e := range r.Exposed {
		if e.Group == g && (coll == "" || e.Collective == coll) {
			t += e.Seconds
		}
	}
	return t
}
