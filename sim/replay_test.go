package sim_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// TestReplayMatchesCoroutines runs every algorithm of the catalogue on
// every model, at several world sizes and counts (0, fewer than ranks,
// many), once on coroutines and once replayed, and requires the same
// result in every field and the same observations, byte for byte, and
// that both are the results pinned in testdata/engine_golden.txt, which
// the engine gave before it could replay.
func TestReplayMatchesCoroutines(t *testing.T) {
	golden := readGolden(t)
	n := 0
	goldenCases(testing.Short(), func(name string, model sim.Model, p int, body sim.Body) {
		t.Run(name, func(t *testing.T) {
			var log logObserver
			res, err := sim.Run(sim.Config{World: p, Model: model, Observer: &log}, body)
			if h := goldenHash(res, err, log.Bytes()); h != golden[name] {
				t.Errorf("coroutines: hash %s, the pinned result's %s", h, golden[name])
			}
			compareReplay(t, name, model, p, body, true)
		})
		n++
	})
	if n == 0 || len(golden) < n {
		t.Fatalf("%d cases, %d pinned", n, len(golden))
	}
}

// compareReplay runs body both ways and fails t where they differ, or
// where wantReplay is set and the replay fell back to coroutines.
func compareReplay(t *testing.T, what string, model sim.Model, p int, body sim.Body, wantReplay bool) {
	t.Helper()
	var logA, logB logObserver
	a, errA := sim.Run(sim.Config{World: p, Model: model, Observer: &logA}, body)
	b, errB := sim.Run(sim.Config{World: p, Model: model, Observer: &logB, Replay: true}, body)
	if stackless(errA) != stackless(errB) {
		t.Fatalf("%s: coroutines: %v\nreplay: %v", what, errA, errB)
	}
	if (a == nil) != (b == nil) {
		t.Fatalf("%s: results %v and %v", what, a, b)
	}
	if a == nil {
		return
	}
	if a.Replayed || (wantReplay && !b.Replayed) {
		t.Fatalf("%s: replayed %v and %v, want false and %v", what, a.Replayed, b.Replayed, wantReplay)
	}
	b.Replayed = false
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%s: results differ:\ncoroutines %+v\nreplay     %+v", what, a, b)
	}
	if !bytes.Equal(logA.Bytes(), logB.Bytes()) {
		la, lb := bytes.Split(logA.Bytes(), []byte("\n")), bytes.Split(logB.Bytes(), []byte("\n"))
		i := 0
		for i < min(len(la), len(lb)) && bytes.Equal(la[i], lb[i]) {
			i++
		}
		t.Fatalf("%s: observations differ at line %d of %d/%d:\ncoroutines %s\nreplay     %s", what, i+1, len(la), len(lb), get(la, i), get(lb, i))
	}
}

func get(lines [][]byte, i int) []byte {
	if i < len(lines) {
		return lines[i]
	}
	return []byte("(end)")
}

// TestReplayFallsBack checks the bodies and networks a replay cannot run:
// each gives exactly the coroutines' outcome, errors included.
func TestReplayFallsBack(t *testing.T) {
	send := func(n int) sim.Body {
		return func(ctx context.Context, l algos.Link) error {
			if l.Rank() == 0 {
				return algos.Send(ctx, l, 1, 0, l.Alloc(n))
			}
			return algos.Recv(ctx, l, 0, 0, l.Alloc(1000))
		}
	}
	ring := func(ctx context.Context, l algos.Link) error {
		return algos.RingAllreduce(ctx, l, l.Alloc(1<<16), device.F32, device.Sum)
	}
	for _, tc := range []struct {
		name  string
		model sim.Model
		body  sim.Body
	}{
		{"reads the clock", worked, func(ctx context.Context, l algos.Link) error {
			if l.Now() > 0 {
				return errors.New("late")
			}
			return ring(ctx, l)
		}},
		{"spawns", worked, func(ctx context.Context, l algos.Link) error {
			req := l.(algos.Spawner).Spawn(func(ctx context.Context) error { return ring(ctx, l) })
			return l.Wait(ctx, req)
		}},
		{"returns an error", worked, func(ctx context.Context, l algos.Link) error {
			if l.Rank() == 1 {
				return errors.New("no")
			}
			return nil
		}},
		{"panics", worked, func(ctx context.Context, l algos.Link) error { panic("oops") }},
		{"message too long", worked, send(2000)},
		{"deadlock", worked, func(ctx context.Context, l algos.Link) error {
			return algos.Recv(ctx, l, (l.Rank()+1)%l.Size(), 0, l.Alloc(8))
		}},
		{"bad peer", worked, func(ctx context.Context, l algos.Link) error {
			return algos.Send(ctx, l, 7, 0, l.Alloc(8))
		}},
		{"rank failure", sim.WithFaults(worked, 1, sim.RankFailure{Rank: 2, At: 3 * sim.Microsecond}), ring},
		// A link whose loss cuts a host off (one that leaves every host
		// reachable replays: TestLinkFailureReplays).
		{"link failure", sim.WithFaults(sim.Flow{Topology: sim.FatTree{Tiers: 2, Radix: 4, Link: sim.LinkParams{Bandwidth: 10e9, Latency: sim.Microsecond}}}, 1,
			sim.LinkFailure{Link: "host0<->leaf0", At: 2 * sim.Microsecond}), ring},
	} {
		t.Run(tc.name, func(t *testing.T) {
			compareReplay(t, tc.name, tc.model, 4, tc.body, false)
			res, _ := sim.Run(sim.Config{World: 4, Model: tc.model, Replay: true}, tc.body)
			if res != nil && res.Replayed {
				t.Error("replayed")
			}
		})
	}
}

// TestReplayUserOps replays hand-written programs that exercise the
// program encoding: tags far apart and going down, requests waited for
// more than once or never, waits on many requests, self messages, long
// programs over many chunks.
func TestReplayUserOps(t *testing.T) {
	body := func(ctx context.Context, l algos.Link) error {
		r, p := l.Rank(), l.Size()
		var never []algos.Request
		for i := range 150 {
			tag := algos.Tag(1<<60 - uint64(i)*977)
			peer := (r + i + 1) % p
			from := (r - i - 1 + 2*p*(i+1)) % p
			rq := l.Irecv(from, tag, l.Alloc(64+i))
			sq := l.Isend(peer, tag, l.Alloc(64+i))
			if err := l.Wait(ctx, sq, rq); err != nil {
				return err
			}
			if i%7 == 0 {
				if err := l.Wait(ctx, rq); err != nil {
					return err
				}
			}
			if i%13 == 0 {
				never = append(never, l.Isend(r, algos.Tag(i), l.Alloc(8)))
				if err := algos.Recv(ctx, l, r, algos.Tag(i), l.Alloc(8)); err != nil {
					return err
				}
			}
			if err := l.Reduce(l.Alloc(256), l.Alloc(256), device.F32, device.Sum); err != nil {
				return err
			}
		}
		// Every rank sends to every rank at once, and waits on all.
		var reqs []algos.Request
		for q := range p {
			reqs = append(reqs, l.Irecv(q, 9, l.Alloc(100)))
		}
		for q := range p {
			reqs = append(reqs, l.Isend((r+q)%p, 9, l.Alloc(100)))
		}
		_ = never
		return l.Wait(ctx, reqs...)
	}
	worlds := []int{1, 2, 7, 40}
	if testing.Short() {
		worlds = []int{1, 2, 7}
	}
	for _, m := range goldenModels {
		for _, p := range worlds {
			if p > 8 && m.name == "flow-slow-link" {
				continue
			}
			compareReplay(t, fmt.Sprintf("%s p=%d", m.name, p), m.model, p, body, true)
		}
	}
}

// TestReplaySharesPrograms checks that the recording keeps what ranks
// share once: ranks of a halving-doubling allreduce need a handful of
// programs, which is what lets a million of them fit.
func TestReplaySharesPrograms(t *testing.T) {
	for _, p := range []int{64, 1024} {
		st := sim.RecordStats(p, func(ctx context.Context, l algos.Link) error {
			return algos.HalvingDoublingAllreduce(ctx, l, l.Alloc(1<<20), device.F32, device.Sum)
		})
		if st.Err != nil {
			t.Fatal(st.Err)
		}
		if st.Programs > 8 || st.Chunks > 16 {
			t.Errorf("p=%d: %d programs, %d chunks", p, st.Programs, st.Chunks)
		}
		if want := int64(p) * (7 * int64(slices.Index([]int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}, p))); st.Ops != want {
			t.Errorf("p=%d: %d operations, want %d", p, st.Ops, want)
		}
	}
}
