package sim_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// switched is the worked example's network with one switch that reduces
// at 40 GB/s.
var switched = sim.AlphaBeta{Latency: worked.Latency, Bandwidth: worked.Bandwidth, ReduceBandwidth: worked.ReduceBandwidth, SwitchBandwidth: 40e9}

// switchKind is the shape of one switch operation among all ranks.
type switchKind int

const (
	allreduce switchKind = iota // every rank contributes and receives
	multicast                   // root contributes, the others receive
	ldReduce                    // every rank contributes, root receives
)

func (k switchKind) String() string { return [...]string{"allreduce", "multicast", "ld_reduce"}[k] }

// sends and receives say what rank r does in an operation of kind k.
func (k switchKind) sends(r, root int) bool    { return k != multicast || r == root }
func (k switchKind) receives(r, root int) bool { return k != ldReduce || r == root }

// fill writes rank r's contribution: byte j is 3r + 5j + 1 (mod 256).
func fill(b device.Buffer, r int) {
	if h, ok := device.HostBytes(b); ok {
		for j := range h {
			h[j] = byte(3*r + 5*j + 1)
		}
	}
}

// switchOp returns a body in which every rank posts its part in one
// operation of kind k of n bytes (dtype U8, op Sum) among all ranks, and
// waits; with host data, receivers check the result against a naive sum.
func switchOp(k switchKind, root, n int) sim.Body {
	return func(ctx context.Context, l algos.Link) error {
		r, p := l.Rank(), l.Size()
		sr, ok := l.(algos.SwitchReducer)
		if !ok {
			return errors.New("the link is no SwitchReducer")
		}
		group := make([]int, p)
		for i := range group {
			group[i] = i
		}
		var send, recv device.Buffer
		if k.sends(r, root) {
			send = l.Alloc(n)
			fill(send, r)
		}
		if k.receives(r, root) {
			recv = l.Alloc(n)
		}
		if err := l.Wait(ctx, sr.ISwitchReduce(group, 7, send, recv, device.U8, device.Sum)); err != nil {
			return err
		}
		if h, ok := device.HostBytes(recv); ok {
			for j := range h {
				var want byte
				for q := range p {
					if k.sends(q, root) {
						want += byte(3*q + 5*j + 1)
					}
				}
				if h[j] != want {
					return fmt.Errorf("rank %d: byte %d of the result is %d, want %d", r, j, h[j], want)
				}
			}
		}
		return nil
	}
}

// TestSwitchAlphaBeta checks the alpha-beta model's switch operations
// against their closed forms (AlphaBeta's doc comment), to the
// picosecond, with real data checked: a contribution reaches the switch
// at α + sβ, the switch reduces c contributions in (c-1)s/R, the result
// reaches each receiver α + sβ later.
func TestSwitchAlphaBeta(t *testing.T) {
	for _, model := range []sim.AlphaBeta{switched, {Latency: 3 * sim.Microsecond, Bandwidth: 7e9, SwitchBandwidth: math.Inf(1)}} {
		for _, p := range []int{1, 2, 3, 5, 8} {
			for _, n := range []int{0, 1, 4099, 1 << 16} {
				for _, k := range []switchKind{allreduce, multicast, ldReduce} {
					root := p / 2
					res, err := sim.Run(sim.Config{World: p, Model: model, HostData: true}, switchOp(k, root, n))
					if err != nil {
						t.Fatalf("R=%g p=%d n=%d %v: %v", model.SwitchBandwidth, p, n, k, err)
					}
					hop := model.MessageTime(n)
					c := p
					if k == multicast {
						c = 1
					}
					reduce := sim.TransferTime((c-1)*n, model.SwitchBandwidth)
					for r, got := range res.Finish {
						want := 2*hop + reduce
						if !k.receives(r, root) {
							want = hop
						}
						if got != want {
							t.Errorf("R=%g p=%d n=%d %v: rank %d finished at %v (%d ps), want %d ps", model.SwitchBandwidth, p, n, k, r, got, int64(got), int64(want))
						}
					}
					if res.Messages != 0 {
						t.Errorf("%d messages counted, want 0", res.Messages)
					}
				}
			}
		}
	}
}

// TestSwitchAlphaBetaQueues checks that a contribution waits behind its
// sender's earlier message (FIFO on the egress port), and that the
// switch reduces once the last contribution has arrived: rank 0 sends m
// bytes to rank 1, then all four post an allreduce of s bytes.
func TestSwitchAlphaBetaQueues(t *testing.T) {
	const m, s, p = 25000, 1000, 4
	res, err := sim.Run(sim.Config{World: p, Model: switched}, func(ctx context.Context, l algos.Link) error {
		var reqs []algos.Request
		switch l.Rank() {
		case 0:
			reqs = append(reqs, l.Isend(1, 0, l.Alloc(m)))
		case 1:
			reqs = append(reqs, l.Irecv(0, 0, l.Alloc(m)))
		}
		reqs = append(reqs, l.(algos.SwitchReducer).ISwitchReduce([]int{0, 1, 2, 3}, 1, l.Alloc(s), l.Alloc(s), device.F32, device.Max))
		return l.Wait(ctx, reqs...)
	})
	if err != nil {
		t.Fatal(err)
	}
	a := switched
	want := a.MessageTime(m) + a.MessageTime(s) + sim.TransferTime((p-1)*s, a.SwitchBandwidth) + a.MessageTime(s)
	for r, got := range res.Finish {
		if got != want {
			t.Errorf("rank %d finished at %v, want %v", r, got, want)
		}
	}
}

// TestSwitchAbsent checks that networks without a reducing switch say so
// and fail the request with ErrNoSwitch, and that decorators forward the
// question.
func TestSwitchAbsent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model sim.Model
		can   bool
	}{
		{"alpha-beta without a switch", worked, false},
		{"alpha-beta", switched, true},
		{"protocol", sim.Protocol{Model: switched, EagerLimit: 64, Envelope: 16}, true},
		{"faults", sim.WithFaults(switched, 1, sim.Jitter{Dist: "constant", Mean: sim.Microsecond}), true},
		{"overhead", sim.Overhead{Model: switched, Send: sim.Microsecond}, true},
		{"relayed", sim.Relayed{Model: switched, Mesh: mustSpec(t, "hypercube")}, true},
		{"loggp", sim.LogGP{Latency: sim.Microsecond, Bandwidth: 1e9}, false},
		{"realnet", sim.TwoPaths{QUIC: switched, Bulk: switched}, false},
		{"flow crossbar", sim.FlowCrossbar(worked), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, replay := range []bool{false, true} {
				res, err := sim.Run(sim.Config{World: 4, Model: tc.model, Replay: replay}, func(ctx context.Context, l algos.Link) error {
					sr := l.(algos.SwitchReducer)
					if got := sr.CanSwitchReduce([]int{0, 1, 2, 3}); got != tc.can {
						return fmt.Errorf("CanSwitchReduce %v, want %v", got, tc.can)
					}
					if tc.can {
						return l.Wait(ctx, sr.ISwitchReduce([]int{0, 1, 2, 3}, 0, l.Alloc(64), l.Alloc(64), device.F32, device.Sum))
					}
					err := l.Wait(ctx, sr.ISwitchReduce([]int{0, 1, 2, 3}, 0, l.Alloc(64), l.Alloc(64), device.F32, device.Sum))
					if !errors.Is(err, sim.ErrNoSwitch) {
						return fmt.Errorf("got %v, want ErrNoSwitch", err)
					}
					return nil
				})
				if err != nil {
					t.Fatalf("replay=%v: %v", replay, err)
				}
				if replay && tc.can && !res.Replayed {
					t.Error("not replayed")
				}
			}
		})
	}
}

// TestSwitchBadRequests checks that requests the operation cannot carry
// fail, saying why.
func TestSwitchBadRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		post func(r int, sr algos.SwitchReducer, l algos.Link) algos.Request
		want string
	}{
		{"not a member", func(r int, sr algos.SwitchReducer, l algos.Link) algos.Request {
			return sr.ISwitchReduce([]int{(r + 1) % 3}, 0, l.Alloc(8), nil, device.U8, device.Sum)
		}, "does not hold rank"},
		{"not ascending", func(r int, sr algos.SwitchReducer, l algos.Link) algos.Request {
			return sr.ISwitchReduce([]int{2, 1, 0}, 0, l.Alloc(8), nil, device.U8, device.Sum)
		}, "is not ascending"},
		{"outside the world", func(r int, sr algos.SwitchReducer, l algos.Link) algos.Request {
			return sr.ISwitchReduce([]int{0, 1, 2, 3}, 0, l.Alloc(8), nil, device.U8, device.Sum)
		}, "outside the world"},
		{"no buffers", func(r int, sr algos.SwitchReducer, l algos.Link) algos.Request {
			return sr.ISwitchReduce([]int{0, 1, 2}, 0, nil, nil, device.U8, device.Sum)
		}, "neither a buffer"},
		{"buffers differ", func(r int, sr algos.SwitchReducer, l algos.Link) algos.Request {
			return sr.ISwitchReduce([]int{0, 1, 2}, 0, l.Alloc(8), l.Alloc(16), device.U8, device.Sum)
		}, "sends 8 bytes and receives 16"},
		{"partial element", func(r int, sr algos.SwitchReducer, l algos.Link) algos.Request {
			return sr.ISwitchReduce([]int{0, 1, 2}, 0, l.Alloc(6), nil, device.F32, device.Sum)
		}, "whole number of f32"},
		{"sizes differ", func(r int, sr algos.SwitchReducer, l algos.Link) algos.Request {
			return sr.ISwitchReduce([]int{0, 1, 2}, 0, l.Alloc(8*(r+1)), nil, device.U8, device.Sum)
		}, "rank 0 posted 8 bytes of u8 by sum, rank 1 16 bytes"},
		{"ops differ", func(r int, sr algos.SwitchReducer, l algos.Link) algos.Request {
			return sr.ISwitchReduce([]int{0, 1, 2}, 0, l.Alloc(8), l.Alloc(8), device.U8, device.Op(r%2))
		}, "by sum, rank 1 8 bytes of u8 by prod"},
		{"nobody contributes", func(r int, sr algos.SwitchReducer, l algos.Link) algos.Request {
			return sr.ISwitchReduce([]int{0, 1, 2}, 0, nil, l.Alloc(8), device.U8, device.Sum)
		}, "no rank contributes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, replay := range []bool{false, true} {
				_, err := sim.Run(sim.Config{World: 3, Model: switched, Replay: replay}, func(ctx context.Context, l algos.Link) error {
					return l.Wait(ctx, tc.post(l.Rank(), l.(algos.SwitchReducer), l))
				})
				var re *sim.RankErrors
				if !errors.As(err, &re) || len(*re) != 3 || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("replay=%v: got %v, want every rank to fail with %q", replay, err, tc.want)
				}
			}
		})
	}
}

// TestSwitchDeadlock checks that a member that never posts leaves the
// others blocked, and that the deadlock report names the operation and
// the member.
func TestSwitchDeadlock(t *testing.T) {
	for _, m := range switchModels() {
		t.Run(m.name, func(t *testing.T) { testSwitchDeadlock(t, m.model) })
	}
}

func testSwitchDeadlock(t *testing.T, model sim.Model) {
	_, err := sim.Run(sim.Config{World: 4, Model: model, Replay: true}, func(ctx context.Context, l algos.Link) error {
		if l.Rank() == 2 {
			return nil
		}
		return l.Wait(ctx, l.(algos.SwitchReducer).ISwitchReduce([]int{0, 1, 2, 3}, 7, l.Alloc(8), l.Alloc(8), device.U8, device.Sum))
	})
	var d *sim.DeadlockError
	if !errors.As(err, &d) || len(d.Blocked) != 3 {
		t.Fatalf("got %v, want a deadlock of ranks 0, 1 and 3", err)
	}
	want := "rank 0 waits for: switch reduction among ranks [0 1 2 3] (tag 7, 8 bytes), which rank 2 has not posted"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("got\n%v\nwant it to say %q", err, want)
	}
	if w := d.Blocked[0].Waits[0]; !w.Switch || len(w.Missing) != 1 || w.Missing[0] != 2 || w.Peer != -1 {
		t.Errorf("wait %+v", w)
	}
}

// TestSwitchMemberFails checks that a member that fails before it posts
// fails the others' requests with its RankFailedError, at once, rather
// than leaving them to hang; that one that fails after its contribution
// reached the switch does not stop the others; and that a member that
// returns with an error without posting fails them too.
func TestSwitchMemberFails(t *testing.T) {
	for _, m := range switchModels() {
		t.Run(m.name, func(t *testing.T) { testSwitchMemberFails(t, m.model) })
	}
}

func testSwitchMemberFails(t *testing.T, model sim.Model) {
	group := []int{0, 1, 2, 3}
	const s = 1000
	op := func(ctx context.Context, l algos.Link, send, recv bool) error {
		var sb, rb device.Buffer
		if send {
			sb = l.Alloc(s)
		}
		if recv {
			rb = l.Alloc(s)
		}
		return l.Wait(ctx, l.(algos.SwitchReducer).ISwitchReduce(group, 0, sb, rb, device.U8, device.Sum))
	}
	t.Run("before posting", func(t *testing.T) {
		at := sim.Microsecond
		res, err := sim.Run(sim.Config{World: 4, Model: sim.WithFaults(model, 1, sim.RankFailure{Rank: 2, At: at})}, func(ctx context.Context, l algos.Link) error {
			if l.Rank() == 2 {
				if err := algos.Delay(ctx, l, 10*time.Microsecond); err != nil {
					return err
				}
			}
			return op(ctx, l, true, true)
		})
		var re *sim.RankErrors
		if !errors.As(err, &re) || len(*re) != 4 {
			t.Fatalf("got %v, want every rank to fail", err)
		}
		for _, e := range *re {
			var f *sim.RankFailedError
			if !errors.As(e.Err, &f) || f.Rank != 2 {
				t.Errorf("rank %d: %v, want rank 2's failure", e.Rank, e.Err)
			}
		}
		for r, f := range res.Finish {
			if f != at {
				t.Errorf("rank %d finished at %v, want %v", r, f, at)
			}
		}
	})
	t.Run("after contributing", func(t *testing.T) {
		if model != sim.Model(switched) {
			t.Skip("the closed form is alpha-beta's")
		}
		hop := switched.MessageTime(s)
		at := hop + sim.Nanosecond
		res, err := sim.Run(sim.Config{World: 4, Model: sim.WithFaults(model, 1, sim.RankFailure{Rank: 2, At: at})}, func(ctx context.Context, l algos.Link) error {
			if l.Rank() == 2 {
				if err := op(ctx, l, true, false); err != nil {
					return err
				}
				return algos.Delay(ctx, l, time.Second)
			}
			return op(ctx, l, true, l.Rank() == 0)
		})
		var re *sim.RankErrors
		if !errors.As(err, &re) || len(*re) != 1 || (*re)[0].Rank != 2 {
			t.Fatalf("got %v, want rank 2 alone to fail", err)
		}
		want := 2*hop + sim.TransferTime(3*s, switched.SwitchBandwidth)
		if res.Finish[0] != want || res.Finish[1] != hop || res.Finish[2] != at {
			t.Errorf("finish %v, want [%v %v %v %v]", res.Finish, want, hop, at, hop)
		}
	})
	t.Run("returns an error", func(t *testing.T) {
		_, err := sim.Run(sim.Config{World: 4, Model: model}, func(ctx context.Context, l algos.Link) error {
			if l.Rank() == 3 {
				if err := algos.Delay(ctx, l, time.Microsecond); err != nil {
					return err
				}
				return errors.New("gave up")
			}
			return op(ctx, l, true, true)
		})
		var re *sim.RankErrors
		if !errors.As(err, &re) || len(*re) != 4 {
			t.Fatalf("got %v, want every rank to fail", err)
		}
		for _, e := range (*re)[:3] {
			var pe *sim.PeerExitedError
			if !errors.As(e.Err, &pe) || pe.Peer != 3 || pe.Err.Error() != "gave up" {
				t.Errorf("rank %d: %v, want rank 3's error", e.Rank, e.Err)
			}
		}
	})
}

// switchMix is a body of several switch operations on groups that
// overlap, with tags reused, between messages and delays: what a replay
// must give exactly as the coroutines do.
func switchMix(ctx context.Context, l algos.Link) error {
	r, p := l.Rank(), l.Size()
	sr := l.(algos.SwitchReducer)
	all := make([]int, p)
	for i := range all {
		all[i] = i
	}
	evens := []int{}
	for i := 0; i < p; i += 2 {
		evens = append(evens, i)
	}
	if err := algos.Delay(ctx, l, time.Duration(100*r)); err != nil {
		return err
	}
	var reqs []algos.Request
	for i := range 3 {
		var send device.Buffer
		if i != 1 || r == 0 {
			send = l.Alloc(4096 * (i + 1))
		}
		reqs = append(reqs, sr.ISwitchReduce(all, 5, send, l.Alloc(4096*(i+1)), device.F32, device.Sum))
		if r%2 == 0 {
			reqs = append(reqs, sr.ISwitchReduce(evens, 5, l.Alloc(100), nil, device.U8, device.Max))
		}
	}
	if err := algos.RingAllreduce(ctx, l, l.Alloc(8192), device.F32, device.Sum); err != nil {
		return err
	}
	if err := l.Wait(ctx, reqs...); err != nil {
		return err
	}
	var recv device.Buffer
	if r == p-1 {
		recv = l.Alloc(64)
	}
	return l.Wait(ctx, sr.ISwitchReduce(all, 9, l.Alloc(64), recv, device.F32, device.Sum))
}

// TestSwitchReplay pins replays of bodies that reduce in switches to
// the coroutines' runs, on the networks that have switches.
func TestSwitchReplay(t *testing.T) {
	for _, m := range switchModels() {
		for _, p := range []int{1, 2, 5, 8} {
			compareReplay(t, fmt.Sprintf("%s p=%d", m.name, p), m.model, p, switchMix, true)
		}
	}
}

type namedModel struct {
	name  string
	model sim.Model
}

// switchModels are networks with switches, plain and wrapped.
func switchModels() []namedModel {
	return append([]namedModel{
		{"alpha-beta", switched},
		{"alpha-beta free", sim.AlphaBeta{Latency: sim.Microsecond, Bandwidth: 1e9, SwitchBandwidth: math.Inf(1)}},
		{"protocol", sim.Protocol{Model: switched, EagerLimit: 4096, Envelope: 64, Handshake: sim.Handshake{RTSCTS: true}}},
		{"noisy", sim.WithFaults(sim.Overhead{Model: switched, Send: 100 * sim.Nanosecond}, 7, sim.Jitter{Dist: "exponential", Mean: sim.Microsecond})},
	}, flowSwitchModels()...)
}

// TestSwitchDeterministic checks that a run with switch operations and
// host data gives the same result twice, byte for byte: times,
// observations and the reduced floats, which are those of a sum in
// ascending rank order.
func TestSwitchDeterministic(t *testing.T) {
	const p, n = 6, 4096
	for _, m := range switchModels() {
		run := func() (string, [][]byte) {
			var log logObserver
			out := make([][]byte, p)
			res, err := sim.Run(sim.Config{World: p, Model: m.model, HostData: true, Observer: &log}, func(ctx context.Context, l algos.Link) error {
				if err := switchMix(ctx, l); err != nil {
					return err
				}
				r := l.Rank()
				send, recv := l.Alloc(n), l.Alloc(n)
				h, _ := device.HostBytes(send)
				for j := 0; j < n; j += 4 {
					binary.LittleEndian.PutUint32(h[j:], math.Float32bits(1/float32(r+j+1)))
				}
				err := l.Wait(ctx, l.(algos.SwitchReducer).ISwitchReduce([]int{0, 1, 2, 3, 4, 5}, 1, send, recv, device.F32, device.Sum))
				out[r], _ = device.HostBytes(recv)
				return err
			})
			if err != nil {
				t.Fatalf("%s: %v", m.name, err)
			}
			return fmt.Sprint(*res) + log.String(), out
		}
		a, outA := run()
		b, outB := run()
		if a != b {
			t.Errorf("%s: two runs differ", m.name)
		}
		for r := range p {
			if !bytes.Equal(outA[r], outB[r]) {
				t.Errorf("%s: rank %d's results differ", m.name, r)
			}
		}
		for j := 0; j < n; j += 4 {
			var want float32
			for r := range p {
				want += 1 / float32(r+j+1)
			}
			if got := math.Float32frombits(binary.LittleEndian.Uint32(outA[0][j:])); got != want {
				t.Fatalf("%s: element %d is %g, want %g", m.name, j/4, got, want)
			}
		}
	}
}

// TestSwitchAlphaBetaReduceScatter checks the reduce_scatter row of the
// package's table: p operations, the k-th received by rank k, posted by
// every rank in block order at 0, take (p+1)(α + sβ) + (p-1)s/R: a
// rank's k-th contribution reaches the switch at (k+1)(α + sβ).
func TestSwitchAlphaBetaReduceScatter(t *testing.T) {
	const s = 3001
	for _, p := range []int{1, 2, 3, 7, 8} {
		res, err := sim.Run(sim.Config{World: p, Model: switched, HostData: true}, func(ctx context.Context, l algos.Link) error {
			r := l.Rank()
			group := make([]int, p)
			for i := range group {
				group[i] = i
			}
			reqs := make([]algos.Request, p)
			for k := range p {
				var recv device.Buffer
				if k == r {
					recv = l.Alloc(s)
				}
				reqs[k] = l.(algos.SwitchReducer).ISwitchReduce(group, 0, l.Alloc(s), recv, device.U8, device.Sum)
			}
			return l.Wait(ctx, reqs...)
		})
		if err != nil {
			t.Fatal(err)
		}
		hop := switched.MessageTime(s)
		if want := sim.Time(p+1)*hop + sim.TransferTime((p-1)*s, switched.SwitchBandwidth); res.End != want {
			t.Errorf("p=%d: %v (%d ps), want %d ps", p, res.End, int64(res.End), int64(want))
		}
	}
}
