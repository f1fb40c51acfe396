package algos

import "context"

// Tags of the barrier algorithms (the low 16 bits; see tags.go).
const (
	tagBarrierArrive        Tag = 0x4000
	tagBarrierRelease       Tag = 0x4001
	tagBarrierDissemination Tag = 0x4100 // + round
)

// BarrierTwoPhase returns on every rank only once every rank has entered
// it: every other rank sends an empty message to rank 0, and rank 0, once
// it has them all, sends an empty message back to each.
//
// Rank 0's ingress takes the p-1 arrivals one after another and its egress
// sends the p-1 releases one after another, so on alpha-beta the time is
// 2(p-1)α. It is what nexar uses up to 4 ranks, where it costs at most 4α
// more than dissemination (6α against 2α at p = 4) and uses only the p-1
// links to rank 0, which matters where connections are set up lazily.
func BarrierTwoPhase(ctx context.Context, l Link) error {
	r, p := l.Rank(), l.Size()
	if p == 1 {
		return nil
	}
	none := l.Alloc(0)
	if r != 0 {
		release := l.Irecv(0, tagBarrierRelease, none)
		arrive := l.Isend(0, tagBarrierArrive, none)
		return l.Wait(ctx, arrive, release)
	}
	reqs := make([]Request, 0, p-1)
	for i := 1; i < p; i++ {
		reqs = append(reqs, l.Irecv(i, tagBarrierArrive, none))
	}
	if err := l.Wait(ctx, reqs...); err != nil {
		return err
	}
	reqs = reqs[:0]
	for i := 1; i < p; i++ {
		reqs = append(reqs, l.Isend(i, tagBarrierRelease, none))
	}
	return l.Wait(ctx, reqs...)
}

// BarrierDissemination returns on every rank only once every rank has
// entered it (Hensgen, Finkel and Manber 1988): in the round at distance
// d = 1, 2, 4, ... rank r sends an empty message to rank r+d and waits for
// one from rank r-d. After round k a rank has heard, directly or not, from
// the 2^(k+1)-1 ranks before it, so after ceil(lg p) rounds from all of
// them. Every round costs one latency, so on alpha-beta the time is
// ceil(lg p)α for any p: the barrier of choice beyond a handful of ranks.
func BarrierDissemination(ctx context.Context, l Link) error {
	r, p := l.Rank(), l.Size()
	none := l.Alloc(0)
	round := 0
	for d := 1; d < p; d *= 2 {
		if err := SendRecv(ctx, l, mod(r+d, p), none, mod(r-d, p), none, tagBarrierDissemination+Tag(round)); err != nil {
			return err
		}
		round++
	}
	return nil
}
