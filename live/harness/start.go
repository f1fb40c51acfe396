package harness

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// How the ranks start each iteration together (the Starter: live's
// default timing, TimingStart, and every training step).
//
// The simulator times a collective from one instant at which every rank
// starts to the instant the last one finishes. A barrier cannot give
// real ranks that common start: they leave it up to a message latency
// apart, and a rank that leaves early then waits for the others inside
// the collective, so that with per-rank timers a ring step looks a whole
// latency slower than it is. So the ranks agree on a start time instead
// (as ReproMPI does). Once per point rank 0 learns every rank's clock
// offset: ranks on its own host share its clock (Linux's monotonic clock,
// the same in every process of one boot), and the others' offsets are
// estimated from ping-pongs (the exchange of least round trip, whose
// error is at most half of it). Before each iteration every rank tells
// rank 0 it is ready, rank 0 picks an instant far enough ahead for its
// message to arrive, sends each rank that instant in the rank's own
// clock, and every rank waits for it and starts. A rank's time is from
// that instant to its own end, so the slowest rank's is the simulator's
// time.
//
// The wait must end on time: a sleeping thread wakes tens of microseconds
// late on a busy machine, more than a small collective takes. So a rank
// sleeps (SleepUntil) until a little before the instant and spins for the
// rest; the margin follows how late its sleeps have woken. A rank that
// gets the instant after it has passed starts at once and counts a late
// start (so does one whose sleep woke after it); rank 0 doubles its lead
// when an instant reached a rank with less than leadMargin to spare, and
// shrinks it again, towards two round trips, when they arrive early.
// The empty collective measures what all this costs (nexar-live ladder's
// "empty" rung).

// Ping-pongs per rank in each clock synchronisation of a rank on another
// host.
const syncRounds = 5

// Bounds of the time a wait spins before an instant.
const (
	minSpin = int64(20 * time.Microsecond)
	maxSpin = int64(time.Millisecond)
)

// bootIDLen is the length of a boot id on the wire.
const bootIDLen = 48

// Starter agrees on start instants for the iterations of one point (of a
// sweep, or a training step's), on every rank of a link: make one per
// run with NewStarter, Sync it once per point, then Start each iteration.
type Starter struct {
	l   algos.Link
	seq uint64 // operation sequence of the harness, per message exchange
	// On rank 0: each rank's clock minus rank 0's, and the least round
	// trip to it, in ns (0 for a rank on rank 0's host).
	offset, rtt []int64
	// On rank 0: how far ahead the next instant is set, and the least
	// it may be (two round trips and room for the scheduler).
	lead, minLead int64
	// late counts this rank's late starts: the instant had passed when it
	// arrived, or the wait woke after it.
	late int64
	// margin is by how much the last instant this rank got arrived ahead
	// of it, in ns (negative: after it).
	margin int64
	// spin is how long before an instant the wait stops sleeping, in ns;
	// overs are how late the last sleeps woke (a ring of spinWindow).
	spin  int64
	overs []int64
	next  int
}

// NewStarter returns the starter of the ranks of l.
func NewStarter(l algos.Link) *Starter { return &Starter{l: l} }

// Late counts the iterations this rank started late: the instant had
// passed when it arrived, or the wait woke after it.
func (s *Starter) Late() int64 { return s.late }

func (s *Starter) link() algos.Link {
	s.seq++
	return algos.Scoped(s.l, CommStart, s.seq)
}

// Sync learns the ranks' clock offsets (rank 0 pings every rank in turn;
// a rank on rank 0's host answers the first ping with its boot id, and
// shares rank 0's clock).
func (s *Starter) Sync(ctx context.Context) error {
	p, me := s.l.Size(), s.l.Rank()
	s.offset, s.rtt = make([]int64, p), make([]int64, p)
	ping := make(device.Host, 8)
	pong := make(device.Host, 8+bootIDLen)
	boot := bootID()
	sl := s.link()
	for r := 1; r < p; r++ {
		if me != 0 && me != r {
			continue
		}
		best := int64(math.MaxInt64)
		for i := range syncRounds {
			tag := algos.Tag(3 * i)
			shared := false
			if me == 0 {
				t0 := Now()
				if err := algos.Send(ctx, sl, r, tag, ping); err != nil {
					return err
				}
				if err := algos.Recv(ctx, sl, r, tag+1, pong); err != nil {
					return err
				}
				t1 := Now()
				shared = boot != "" && string(pong[8:8+len(boot)]) == boot
				if t1-t0 < best {
					best = t1 - t0
					s.offset[r] = int64(binary.LittleEndian.Uint64(pong)) - (t0+t1)/2
				}
				if shared {
					s.offset[r] = 0
				}
				// Tell rank r whether to go on.
				ping[0] = 0
				if shared {
					ping[0] = 1
				}
				if err := algos.Send(ctx, sl, r, tag+2, ping); err != nil {
					return err
				}
			} else {
				if err := algos.Recv(ctx, sl, 0, tag, ping); err != nil {
					return err
				}
				binary.LittleEndian.PutUint64(pong, uint64(Now()))
				copy(pong[8:], boot)
				if err := algos.Send(ctx, sl, 0, tag+1, pong); err != nil {
					return err
				}
				if err := algos.Recv(ctx, sl, 0, tag+2, ping); err != nil {
					return err
				}
				shared = ping[0] == 1
			}
			if shared {
				break // one clock: nothing to estimate
			}
		}
		s.rtt[r] = best
	}
	if me == 0 {
		maxRTT := int64(0)
		for _, r := range s.rtt {
			maxRTT = max(maxRTT, r)
		}
		// The start message takes half a round trip; give it two whole
		// ones, and room for the scheduler.
		s.minLead = 2*maxRTT + int64(200*time.Microsecond)
		s.lead = max(s.lead, s.minLead)
	}
	return nil
}

// Bounds of the lead's control: an instant must arrive at least
// leadMargin ahead (a rank then has time to sleep, and to spin); the lead
// never exceeds maxLead.
const (
	leadMargin = int64(100 * time.Microsecond)
	maxLead    = int64(100 * time.Millisecond)
)

// adjustLead sets the next lead from the least margin with which the last
// instant reached a rank: doubled when it came too late, shrunk by an
// eighth towards minLead when it came with room to spare (a long lead
// costs wall time, and a long sleep wakes later).
func (s *Starter) adjustLead(margin int64) {
	switch {
	case margin < leadMargin:
		s.lead = min(2*s.lead, maxLead)
	case margin > 3*leadMargin:
		s.lead = max(s.lead-s.lead/8, s.minLead)
	}
}

// Start returns, on every rank, the local instant at which the next
// iteration starts, once it has come, or more false when rank 0 decides
// (from its argument more, which only rank 0's counts) that the point has
// had iterations enough: then nothing starts.
func (s *Starter) Start(ctx context.Context, more bool) (int64, bool, error) {
	p, me := s.l.Size(), s.l.Rank()
	sl := s.link()
	if me != 0 {
		ready := make(device.Host, 8)
		binary.LittleEndian.PutUint64(ready, uint64(s.margin))
		if err := algos.Send(ctx, sl, 0, 0, ready); err != nil {
			return 0, false, err
		}
		at := make(device.Host, 16)
		if err := algos.Recv(ctx, sl, 0, 1, at); err != nil {
			return 0, false, err
		}
		if binary.LittleEndian.Uint64(at[8:]) == 0 {
			return 0, false, nil
		}
		t := int64(binary.LittleEndian.Uint64(at))
		s.margin = t - Now()
		if s.margin < 0 || s.waitUntil(t) {
			s.late++
		}
		return t, true, nil
	}
	readies := make([]device.Host, p)
	reqs := make([]algos.Request, 0, p)
	for r := 1; r < p; r++ {
		readies[r] = make(device.Host, 8)
		reqs = append(reqs, sl.Irecv(r, 0, readies[r]))
	}
	if err := s.l.Wait(ctx, reqs...); err != nil {
		return 0, false, err
	}
	if p > 1 {
		margin := int64(math.MaxInt64)
		for r := 1; r < p; r++ {
			margin = min(margin, int64(binary.LittleEndian.Uint64(readies[r])))
		}
		s.adjustLead(margin)
	}
	t := Now() + s.lead
	reqs = reqs[:0]
	ats := make([]device.Host, p)
	for r := 1; r < p; r++ {
		ats[r] = make(device.Host, 16)
		binary.LittleEndian.PutUint64(ats[r], uint64(t+s.offset[r]))
		if more {
			ats[r][8] = 1
		}
		reqs = append(reqs, sl.Isend(r, 1, ats[r]))
	}
	if err := s.l.Wait(ctx, reqs...); err != nil {
		return 0, false, err
	}
	if !more {
		return 0, false, nil
	}
	if s.waitUntil(t) {
		s.late++
	}
	return t, true, nil
}

// waitUntil waits for the local clock to reach t and reports whether it
// woke after t. It sleeps until s.spin before t, then spins, and sets
// s.spin to cover all but the latest tenth of the last spinWindow wakes
// (plus a tenth), within [minSpin, maxSpin]: a wake's lateness has a long
// tail on a busy machine, and a spinning rank holds a core that another
// rank (ranks may outnumber cores) or process may need.
func (s *Starter) waitUntil(t int64) (late bool) {
	if s.spin == 0 {
		s.spin = 4 * minSpin
	}
	wake := t - s.spin
	if wake > Now() {
		SleepUntil(wake)
		over := Now() - wake
		late = over > s.spin
		s.learnOversleep(over)
	}
	for Now() < t {
		// Spin without yielding: runtime.Gosched would wake an idle
		// processor's thread at every turn, a system call and a
		// core taken from the other ranks.
	}
	return late
}

// spinWindow is the number of recent wakes the spin margin is set from.
const spinWindow = 32

// learnOversleep records how late a sleep woke and sets the spin margin
// to the 90th percentile of the recent ones, plus a tenth.
func (s *Starter) learnOversleep(over int64) {
	if len(s.overs) < spinWindow {
		s.overs = append(s.overs, over)
	} else {
		s.overs[s.next] = over
		s.next = (s.next + 1) % spinWindow
	}
	sorted := slices.Clone(s.overs)
	slices.Sort(sorted)
	q := sorted[len(sorted)*9/10]
	s.spin = min(max(q+q/10, minSpin), maxSpin)
}

// Barrier returns on every rank once every rank has called it: rank 0
// hears from every rank, then answers each with n, which barrier returns
// (rank 0's argument; the others' is ignored). Ranks leave it up to a
// latency apart, as they leave any barrier: live's TimingLoop starts its
// back-to-back iterations with one, as nccl-tests does.
func (s *Starter) Barrier(ctx context.Context, n int64) (int64, error) {
	p, me := s.l.Size(), s.l.Rank()
	sl := s.link()
	buf := make(device.Host, 8)
	if me != 0 {
		if err := algos.Send(ctx, sl, 0, 0, buf); err != nil {
			return 0, err
		}
		if err := algos.Recv(ctx, sl, 0, 1, buf); err != nil {
			return 0, err
		}
		return int64(binary.LittleEndian.Uint64(buf)), nil
	}
	bufs := make([]device.Host, p)
	reqs := make([]algos.Request, 0, p)
	for r := 1; r < p; r++ {
		bufs[r] = make(device.Host, 8)
		reqs = append(reqs, sl.Irecv(r, 0, bufs[r]))
	}
	if err := s.l.Wait(ctx, reqs...); err != nil {
		return 0, err
	}
	binary.LittleEndian.PutUint64(buf, uint64(n))
	reqs = reqs[:0]
	for r := 1; r < p; r++ {
		reqs = append(reqs, sl.Isend(r, 1, buf))
	}
	return n, s.l.Wait(ctx, reqs...)
}

func (s *Starter) String() string {
	return fmt.Sprintf("lead %v, spin %v, offsets %v ns, round trips %v ns", time.Duration(s.lead), time.Duration(s.spin), s.offset, s.rtt)
}
