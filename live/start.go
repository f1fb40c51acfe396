package live

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// How the ranks start each iteration together.
//
// The simulator times a collective from one instant at which every rank
// starts to the instant the last one finishes. A barrier cannot give
// real ranks that common start: they leave it up to a message latency
// apart, and a rank that leaves early then waits for the others inside
// the collective, so that with per-rank timers a ring step looks a whole
// latency slower than it is. So the ranks agree on a start time instead
// (as ReproMPI does): once per point rank 0 estimates every rank's clock
// offset from ping-pongs (the exchange of least round trip, whose error
// is at most half of it); before each iteration every rank tells rank 0
// it is ready, rank 0 picks an instant far enough ahead for its message
// to arrive, sends each rank that instant in the rank's own clock, and
// every rank waits for it (in a system call, since Go's timers may be
// late by a millisecond; see sleepFor) and starts. A rank's
// time is from that instant to its own end, so the slowest rank's is the
// simulator's time. A rank that gets the instant after it has passed
// starts at once and reports a late start; rank 0 then doubles its lead.

// epoch is this process's clock origin: ranks in one process share it.
var epoch = time.Now()

// clock reads the local clock in nanoseconds.
func clock() int64 { return int64(time.Since(epoch)) }

// Ping-pongs per rank in each clock synchronisation.
const syncRounds = 5

// starter agrees on start instants for the iterations of one point.
type starter struct {
	l   algos.Link
	seq uint64 // operation sequence of the harness, per message exchange
	// On rank 0: each rank's clock minus rank 0's, and the least round
	// trip to it, in ns.
	offset, rtt []int64
	lead        int64
	// late counts this rank's late starts; on rank 0, the other ranks'
	// as last reported.
	late int64
}

func (s *starter) link() algos.Link {
	s.seq++
	return algos.Scoped(s.l, commBarrier, s.seq)
}

// sync estimates the ranks' clock offsets (rank 0 pings every rank in
// turn).
func (s *starter) sync(ctx context.Context) error {
	p, me := s.l.Size(), s.l.Rank()
	s.offset, s.rtt = make([]int64, p), make([]int64, p)
	buf := make(device.Host, 8)
	for r := 1; r < p; r++ {
		best := int64(math.MaxInt64)
		for range syncRounds {
			sl := s.link()
			switch me {
			case 0:
				t0 := clock()
				if err := algos.Send(ctx, sl, r, 0, buf); err != nil {
					return err
				}
				if err := algos.Recv(ctx, sl, r, 1, buf); err != nil {
					return err
				}
				t1 := clock()
				if t1-t0 < best {
					best = t1 - t0
					s.offset[r] = int64(binary.LittleEndian.Uint64(buf)) - (t0+t1)/2
				}
			case r:
				if err := algos.Recv(ctx, sl, 0, 0, buf); err != nil {
					return err
				}
				binary.LittleEndian.PutUint64(buf, uint64(clock()))
				if err := algos.Send(ctx, sl, 0, 1, buf); err != nil {
					return err
				}
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
		s.lead = 2*maxRTT + int64(200*time.Microsecond)
	}
	return nil
}

// start returns, on every rank, the local instant at which the next
// iteration starts, once it has come, or more false when rank 0 decides
// (from its argument more, which only rank 0's counts) that the point has
// had iterations enough: then nothing starts.
func (s *starter) start(ctx context.Context, more bool) (int64, bool, error) {
	p, me := s.l.Size(), s.l.Rank()
	sl := s.link()
	if me != 0 {
		ready := make(device.Host, 8)
		binary.LittleEndian.PutUint64(ready, uint64(s.late))
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
		if clock() > t {
			s.late++
		}
		waitUntil(t)
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
	var late int64
	for r := 1; r < p; r++ {
		late += int64(binary.LittleEndian.Uint64(readies[r]))
	}
	if late > s.late {
		// Somebody got the last instant too late: look further ahead.
		s.lead = min(2*s.lead, int64(100*time.Millisecond))
		s.late = late
	}
	t := clock() + s.lead
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
	waitUntil(t)
	return t, true, nil
}

// waitUntil waits for the local clock to reach t without spinning:
// ranks outnumber cores on one machine, and a spinning rank would hold a
// core that a rank it is about to wait for needs. sleepFor does the
// sleeping as precisely as the system allows.
func waitUntil(t int64) {
	for {
		d := t - clock()
		if d <= 0 {
			return
		}
		sleepFor(time.Duration(d))
	}
}

func (s *starter) String() string {
	return fmt.Sprintf("lead %v, offsets %v ns, round trips %v ns", time.Duration(s.lead), s.offset, s.rtt)
}
