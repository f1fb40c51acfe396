package algos_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// groupPolicy picks hierarchical allreduce with group 3 on 12 ranks and
// leaves everything else to the table.
type groupPolicy struct{ calls int }

func (*groupPolicy) Name() string { return "group" }

func (p *groupPolicy) Select(collective string, m *algos.Machine, world, bytes, count int) (algos.Choice, error) {
	p.calls++
	switch {
	case collective == "allreduce" && world == 12:
		return algos.Choice{Algorithm: "hierarchical", Params: map[string]int{"group": 3}}, nil
	case world == 13:
		return algos.Choice{}, errors.New("thirteen")
	}
	return algos.Choice{}, fmt.Errorf("%s on %d ranks: %w", collective, world, algos.ErrNoChoice)
}

func TestPolicySelectsFirst(t *testing.T) {
	p := &groupPolicy{}
	table := algos.DefaultTuning().WithPolicy(p)
	if algos.DefaultTuning().Policy != nil {
		t.Fatal("WithPolicy changed the default table")
	}
	ch, err := table.SelectFor(nil, "allreduce", 12, 1024, 256)
	if err != nil || ch.Algorithm != "hierarchical" || ch.Params["group"] != 3 || ch.From != "policy group" {
		t.Errorf("12 ranks: %+v, %v", ch, err)
	}
	// Select asks the policy too, on an unknown machine (a Comm's).
	if ch, err := table.Select("allreduce", 12, 1024, 256); err != nil || ch.Algorithm != "hierarchical" {
		t.Errorf("Select on 12 ranks: %+v, %v", ch, err)
	}
	ch, err = table.SelectFor(nil, "allreduce", 4, 1024, 256)
	if want, _ := algos.DefaultTuning().Select("allreduce", 4, 1024, 256); err != nil || ch.Algorithm != want.Algorithm || ch.From != want.From {
		t.Errorf("4 ranks, no choice: %+v, %v; the table says %+v", ch, err, want)
	}
	var pe *algos.PolicyError
	if _, err := table.SelectFor(nil, "allreduce", 13, 1024, 256); !errors.As(err, &pe) || pe.Policy != "group" || err.Error() != "policy group: thirteen" {
		t.Errorf("13 ranks: %v, want the policy's error", err)
	}

	coll, _ := algos.Lookup("allreduce")
	auto, _ := coll.Algorithm("auto")
	got := simTime(t, worked, 12, 12*64, func(ctx context.Context, l algos.Link, buf device.Buffer, dt device.DType, op device.Op) error {
		return auto.Run(ctx, l, algos.Call{Buf: buf, DType: dt, Op: op, Tuning: table})
	})
	want := simTime(t, worked, 12, 12*64, func(ctx context.Context, l algos.Link, buf device.Buffer, dt device.DType, op device.Op) error {
		return algos.HierarchicalAllreduce(ctx, l, buf, dt, op, 3)
	})
	if got != want {
		t.Errorf("auto under the policy took %g s, hierarchical group=3 %g s", got, want)
	}
	if p.calls < 12 {
		t.Errorf("the policy was asked %d times, want once a rank at least", p.calls)
	}
}

// recordPolicy records the messages it is asked about and leaves every
// choice to the table.
type recordPolicy struct {
	mu    sync.Mutex
	asked map[string]int
}

func (*recordPolicy) Name() string { return "record" }

func (p *recordPolicy) Select(collective string, _ *algos.Machine, world, bytes, count int) (algos.Choice, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked[collective] = bytes
	return algos.Choice{}, fmt.Errorf("%s: %w", collective, algos.ErrNoChoice)
}

// TestAutoOfEveryNCCLCollective runs the "auto" of the collectives NCCL
// chooses for: each measures its message as nccl-tests does (the whole
// buffer of p blocks for allgather and reduce_scatter), asks the policy
// with it, and runs the default table's choice, whose time it takes.
func TestAutoOfEveryNCCLCollective(t *testing.T) {
	const p, count = 4, 4 * 1024 // elements, as nccl-tests counts them
	for _, c := range []struct{ coll, table string }{
		{"allreduce", "ring"}, {"allgather", "ring"}, {"reduce_scatter", "ring"},
		{"broadcast", "binary_tree"}, {"reduce", "binomial_tree"},
	} {
		coll, err := algos.Lookup(c.coll)
		if err != nil {
			t.Fatal(err)
		}
		if ch, err := algos.DefaultTuning().Select(c.coll, p, 4*count, count); err != nil || ch.Algorithm != c.table {
			t.Errorf("%s: the default table picks %+v (%v), want %s", c.coll, ch, err, c.table)
		}
		run := func(name string, tuning *algos.Tuning) float64 {
			a, err := coll.Algorithm(name)
			if err != nil {
				t.Fatal(err)
			}
			send, recv, _ := coll.Layout(count, p)
			res, err := sim.Run(sim.Config{World: p, Model: worked}, func(ctx context.Context, l algos.Link) error {
				call := algos.Call{DType: device.F32, Op: device.Sum, Buf: l.Alloc(4 * recv), Tuning: tuning}
				if send > 0 {
					call.Send = l.Alloc(4 * send)
				}
				return a.Run(ctx, l, call)
			})
			if err != nil {
				t.Fatalf("%s %s: %v", c.coll, name, err)
			}
			return res.End.Seconds()
		}
		rec := &recordPolicy{asked: map[string]int{}}
		if got, want := run("auto", algos.DefaultTuning().WithPolicy(rec)), run(c.table, nil); got != want {
			t.Errorf("%s: auto took %g s, %s %g s", c.coll, got, c.table, want)
		}
		if rec.asked[c.coll] != 4*count {
			t.Errorf("%s: the policy was asked about %d bytes, want %d", c.coll, rec.asked[c.coll], 4*count)
		}
	}
}
