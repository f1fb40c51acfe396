package schedule

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// check validates s as the executor does and more: see Parse.
func (s *Schedule) check() error {
	if len(s.GPUs) != s.NGPUs {
		return fmt.Errorf("%s: <algo ngpus=%d> but %d <gpu> elements", s.where(s.line), s.NGPUs, len(s.GPUs))
	}
	slices.SortStableFunc(s.GPUs, func(a, b GPU) int { return a.ID - b.ID })
	for i := range s.GPUs {
		g := &s.GPUs[i]
		if g.ID != i {
			return fmt.Errorf("%s: <gpu id=%d>: want ids 0 to %d, each once", s.where(g.line), g.ID, s.NGPUs-1)
		}
		if err := s.checkGPU(g); err != nil {
			return err
		}
	}
	return s.dryRun()
}

func (s *Schedule) checkGPU(g *GPU) error {
	slices.SortStableFunc(g.TBs, func(a, b TB) int { return a.ID - b.ID })
	type conn struct{ peer, ch int }
	sends, recvs := map[conn]int{}, map[conn]int{}
	for i := range g.TBs {
		tb := &g.TBs[i]
		if tb.ID != i {
			return fmt.Errorf("%s: gpu %d <tb id=%d>: want ids 0 to %d, each once", s.where(tb.line), g.ID, tb.ID, len(g.TBs)-1)
		}
		for _, p := range []int{tb.Send, tb.Recv} {
			if p == g.ID || p >= s.NGPUs {
				return fmt.Errorf("%s: gpu %d tb %d: peer %d: want another gpu of 0 to %d, or -1", s.where(tb.line), g.ID, tb.ID, p, s.NGPUs-1)
			}
		}
		if tb.Chan >= s.NChannels {
			return fmt.Errorf("%s: gpu %d tb %d: chan %d: want below nchannels %d", s.where(tb.line), g.ID, tb.ID, tb.Chan, s.NChannels)
		}
		if tb.Send >= 0 {
			if j, dup := sends[conn{tb.Send, tb.Chan}]; dup {
				return fmt.Errorf("%s: gpu %d tb %d sends to gpu %d on channel %d, as tb %d does: want one threadblock per connection", s.where(tb.line), g.ID, tb.ID, tb.Send, tb.Chan, j)
			}
			sends[conn{tb.Send, tb.Chan}] = tb.ID
		}
		if tb.Recv >= 0 {
			if j, dup := recvs[conn{tb.Recv, tb.Chan}]; dup {
				return fmt.Errorf("%s: gpu %d tb %d receives from gpu %d on channel %d, as tb %d does: want one threadblock per connection", s.where(tb.line), g.ID, tb.ID, tb.Recv, tb.Chan, j)
			}
			recvs[conn{tb.Recv, tb.Chan}] = tb.ID
		}
	}
	for i := range g.TBs {
		for j := range g.TBs[i].Steps {
			if err := s.checkStep(g, &g.TBs[i], j); err != nil {
				return err
			}
		}
	}
	return nil
}

// chunks returns how many chunks buffer b of g holds.
func (g *GPU) chunks(b byte) int {
	switch b {
	case 'i':
		return g.IChunks
	case 'o':
		return g.OChunks
	}
	return g.SChunks
}

func (s *Schedule) checkStep(g *GPU, tb *TB, j int) error {
	st := &tb.Steps[j]
	at := func(format string, args ...any) error {
		return fmt.Errorf("%s: gpu %d tb %d step %d (%s): %s", s.where(st.line), g.ID, tb.ID, st.S, st.Type, fmt.Sprintf(format, args...))
	}
	if st.S != j {
		return at("s=%d: want steps numbered 0, 1, ... in order (this is step %d)", st.S, j)
	}
	if st.Type.sends() && tb.Send < 0 {
		return at("sends, but the threadblock has no send peer")
	}
	if st.Type.recvs() && tb.Recv < 0 {
		return at("receives, but the threadblock has no recv peer")
	}
	if st.Type != Nop && st.Cnt < 1 {
		return at("cnt=%d: want at least 1", st.Cnt)
	}
	for _, r := range []struct {
		use      bool
		name     string
		buf      byte
		off, cnt int
	}{{st.Type.reads(), "src", st.SrcBuf, st.SrcOff, st.Cnt}, {st.Type.writes(), "dst", st.DstBuf, st.DstOff, st.Cnt}} {
		if !r.use {
			continue
		}
		if n := g.chunks(r.buf); r.off < 0 || r.off+r.cnt > n {
			return at("%s chunks %d to %d of buffer %c: want within its %d chunks", r.name, r.off, r.off+r.cnt-1, r.buf, n)
		}
	}
	if st.DepID < 0 {
		return nil
	}
	if st.DepID >= len(g.TBs) {
		return at("depid=%d: want a threadblock of gpu %d, 0 to %d", st.DepID, g.ID, len(g.TBs)-1)
	}
	if st.DepID == tb.ID && st.Deps >= j {
		// The executor waits on the flag of threadblock depid, which
		// only this threadblock's own later steps could set.
		return at("depid=%d deps=%d: a step of its own threadblock that is not an earlier one: the executor would wait for it forever", st.DepID, st.Deps)
	}
	d := &g.TBs[st.DepID]
	if st.Deps < 0 || st.Deps >= len(d.Steps) {
		return at("deps=%d: tb %d has steps 0 to %d", st.Deps, d.ID, len(d.Steps)-1)
	}
	if !d.Steps[st.Deps].HasDep {
		return at("depends on tb %d step %d, which lacks hasdep=\"1\" (the executor would never signal it)", d.ID, st.Deps)
	}
	return nil
}

// dryRun runs every GPU's program together without data, sends never
// blocking, to find receives that no send matches and waits that never
// end: a schedule that deadlocks on the executor.
func (s *Schedule) dryRun() error {
	type conn struct{ from, to, ch int }
	type msg struct {
		cnt  int
		from stepRef
	}
	queues := map[conn][]msg{}
	s.pairs = nil
	pc := make([][]int, len(s.GPUs))
	for i, g := range s.GPUs {
		pc[i] = make([]int, len(g.TBs))
	}
	done := func(g, tb, step int) bool { return pc[g][tb] > step }
	for progress := true; progress; {
		progress = false
		for gi := range s.GPUs {
			g := &s.GPUs[gi]
			for ti := range g.TBs {
				tb := &g.TBs[ti]
				for pc[gi][ti] < len(tb.Steps) {
					st := &tb.Steps[pc[gi][ti]]
					if st.DepID >= 0 && !done(gi, st.DepID, st.Deps) {
						break
					}
					if st.Type.recvs() {
						k := conn{tb.Recv, gi, tb.Chan}
						q := queues[k]
						if len(q) == 0 {
							break
						}
						if q[0].cnt != st.Cnt {
							return fmt.Errorf("%s: gpu %d tb %d step %d (%s) receives %d chunk(s) from gpu %d on channel %d, where that message has %d", s.where(st.line), gi, ti, st.S, st.Type, st.Cnt, tb.Recv, tb.Chan, q[0].cnt)
						}
						s.pairs = append(s.pairs, pair{q[0].from, stepRef{gi, ti, pc[gi][ti]}})
						queues[k] = q[1:]
					}
					if st.Type.sends() {
						k := conn{gi, tb.Send, tb.Chan}
						queues[k] = append(queues[k], msg{st.Cnt, stepRef{gi, ti, pc[gi][ti]}})
					}
					pc[gi][ti]++
					progress = true
				}
			}
		}
	}
	var stuck []string
	for gi := range s.GPUs {
		g := &s.GPUs[gi]
		for ti := range g.TBs {
			tb := &g.TBs[ti]
			if pc[gi][ti] == len(tb.Steps) {
				continue
			}
			st := &tb.Steps[pc[gi][ti]]
			why := fmt.Sprintf("a message from gpu %d on channel %d that no step sends", tb.Recv, tb.Chan)
			if st.DepID >= 0 && !done(gi, st.DepID, st.Deps) {
				why = fmt.Sprintf("tb %d step %d", st.DepID, st.Deps)
			}
			stuck = append(stuck, fmt.Sprintf("\n  gpu %d tb %d step %d (%s, line %d) waits for %s", gi, ti, st.S, st.Type, st.line, why))
		}
	}
	if len(stuck) > 0 {
		return fmt.Errorf("%s: the schedule deadlocks:%s", s.File, strings.Join(stuck, ""))
	}
	keys := make([]conn, 0, len(queues))
	for k, q := range queues {
		if len(q) > 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		slices.SortFunc(keys, func(a, b conn) int {
			return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to), cmp.Compare(a.ch, b.ch))
		})
		k := keys[0]
		return fmt.Errorf("%s: gpu %d sends %d message(s) to gpu %d on channel %d that no step receives", s.File, k.from, len(queues[k]), k.to, k.ch)
	}
	return nil
}

// stepRef names a step: gpu, threadblock, step.
type stepRef struct{ gpu, tb, step int }

// pair is a send and the receive it matches.
type pair struct{ send, recv stepRef }

func (s *Schedule) step(r stepRef) *Step { return &s.GPUs[r.gpu].TBs[r.tb].Steps[r.step] }

// sentRange and recvRange are the chunks a step sends and receives into:
// what a step forwards is its dst where it keeps what it received.
func sentRange(st *Step) (off, cnt int) {
	if st.Type == RecvCopySend || st.Type == RecvReduceCopySd {
		return st.DstOff, st.Cnt
	}
	return st.SrcOff, st.Cnt
}

func recvRange(st *Step) (off, cnt int) {
	if st.Type == Recv || st.Type == RecvCopySend {
		return st.DstOff, st.Cnt
	}
	return st.SrcOff, st.Cnt
}

// checkSizes returns an error if, with chunks laid out by y, a message
// would be longer or shorter than the receive it matches: chunks of
// uneven counts differ by an element.
func (s *Schedule) checkSizes(y layout) error {
	size := func(off, cnt int) int { return y.off(off+cnt) - y.off(off) }
	for _, p := range s.pairs {
		snd, rcv := s.step(p.send), s.step(p.recv)
		a, b := size(sentRange(snd)), size(recvRange(rcv))
		if a != b {
			return fmt.Errorf("%s:%d: at %d elements gpu %d tb %d step %d sends %d elements where gpu %d tb %d step %d (line %d) receives %d: the schedule runs at counts that are multiples of nchunksperloop (%d)",
				s.File, snd.line, y.total, p.send.gpu, p.send.tb, snd.S, a, p.recv.gpu, p.recv.tb, rcv.S, rcv.line, b, s.NChunksPerLoop)
		}
	}
	return nil
}
