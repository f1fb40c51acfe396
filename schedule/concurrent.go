package schedule

import (
	"context"
	"fmt"
	"slices"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// signalTag is the tag of the signals threadblock a sends threadblock d:
// messages from the rank to itself, which cost nothing.
func signalTag(a, d int) algos.Tag { return 0x8000 + algos.Tag(a*maxTBs+d) }

// signals says, for each pair of threadblocks (a, d), the steps of a that d
// waits for, in order: a signals d after each.
type signals map[[2]int][]int

func (r *rank) signals() signals {
	sig := signals{}
	for d, tb := range r.g.TBs {
		for _, st := range tb.Steps {
			// A step that depends on an earlier step of its own
			// threadblock waits for nothing: that step is done.
			if st.DepID >= 0 && st.DepID != d {
				k := [2]int{st.DepID, d}
				if !slices.Contains(sig[k], st.Deps) {
					sig[k] = append(sig[k], st.Deps)
				}
			}
		}
	}
	for _, v := range sig {
		slices.Sort(v)
	}
	return sig
}

// concurrent runs every threadblock as a process of its own (the link's
// Spawner), as the executor runs them on a GPU: each runs its steps in
// order, waiting for what it receives and for the steps it depends on,
// which their threadblocks signal with messages to the rank itself.
func (r *rank) concurrent(ctx context.Context, sp algos.Spawner) error {
	sig := r.signals()
	empty := r.l.Alloc(0)
	reqs := make([]algos.Request, len(r.tbs))
	for i, t := range r.tbs {
		reqs[i] = sp.Spawn(func(ctx context.Context) error { return r.runTB(ctx, t, sig, empty) })
	}
	if err := r.l.Wait(ctx, reqs...); err != nil {
		return fmt.Errorf("%s: gpu %d: %w", r.s.File, r.g.ID, err)
	}
	return nil
}

func (r *rank) runTB(ctx context.Context, t *tbRun, sig signals, empty device.Buffer) error {
	me := t.tb.ID
	got := map[int]int{} // signals received from each threadblock
	var sent []algos.Request
	for it := range r.iters {
		for i := range t.tb.Steps {
			st := &t.tb.Steps[i]
			if st.DepID >= 0 && st.DepID != me {
				list := sig[[2]int{st.DepID, me}]
				need := it*len(list) + slices.Index(list, st.Deps) + 1
				for ; got[st.DepID] < need; got[st.DepID]++ {
					if err := algos.Recv(ctx, r.l, r.g.ID, signalTag(st.DepID, me), empty); err != nil {
						return err
					}
				}
			}
			t.pc = it*len(t.tb.Steps) + i
			if err := r.stepOn(ctx, t, st, it); err != nil {
				return fmt.Errorf("tb %d step %d: %w", me, st.S, err)
			}
			for d := range r.tbs {
				if slices.Contains(sig[[2]int{me, d}], i) {
					sent = append(sent, r.l.Isend(r.g.ID, signalTag(me, d), empty))
				}
			}
		}
	}
	return r.l.Wait(ctx, sent...)
}

// stepOn runs one step of t, in iteration it, to its end.
func (r *rank) stepOn(ctx context.Context, t *tbRun, st *Step, it int) error {
	if !st.Type.recvs() && !st.Type.sends() {
		return r.localStep(st, it)
	}
	t.phase = 0
	if st.Type.recvs() {
		if err := r.l.Wait(ctx, r.postRecv(t, st, it)...); err != nil {
			return err
		}
		if err := r.complete(t); err != nil || t.phase == 0 {
			return err // r and rrc end with their receive
		}
	}
	err := r.l.Wait(ctx, r.postSend(t)...)
	t.phase = 0
	return err
}
