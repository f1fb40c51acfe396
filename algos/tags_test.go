package algos_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// hiding decorates a link and hides every optional interface of it,
// Unwrapper included.
type hiding struct{ algos.Link }

// through decorates a link and implements Unwrapper only: the optional
// interfaces of the inner link are found through it.
type through struct{ algos.Link }

func (t through) Unwrap() algos.Link { return t.Link }

// optional lists which of the optional interfaces whose presence changes
// what callers do l answers to a type assertion for.
func optional(l algos.Link) string {
	_, s := l.(algos.Spawner)
	_, d := l.(algos.Delayer)
	_, g := l.(algos.Signaler)
	return fmt.Sprintf("spawner %t, delayer %t, signaler %t", s, d, g)
}

// TestScopedKeepsOptional checks that a scoped link is a Spawner, a
// Delayer and a Signaler exactly where the link it scopes is one, itself
// or through an Unwrapper, so that an algorithm asking its link directly
// for a Spawner runs concurrently through Comm's scope; and that it keeps
// the inner link's machine and its scope's ids.
func TestScopedKeepsOptional(t *testing.T) {
	const all, none = "spawner true, delayer true, signaler true", "spawner false, delayer false, signaler false"
	spawnOnly := &goLink{net: &goNet{}, size: 1}
	if got, want := optional(algos.Scoped(spawnOnly, 0, 1)), "spawner true, delayer false, signaler false"; got != want {
		t.Errorf("scoped realnet-like link: %s; want %s", got, want)
	}
	_, err := sim.Run(sim.Config{World: 4, Model: splitModel, HostData: true}, func(ctx context.Context, l algos.Link) error {
		for _, c := range []struct {
			name string
			l    algos.Link
			want string
		}{
			{"simulator's link", l, all},
			{"scoped", algos.Scoped(l, 0, 1), all},
			{"scoped decorator with Unwrap", algos.Scoped(through{l}, 0, 1), all},
			{"scoped decorator that hides", algos.Scoped(hiding{l}, 0, 1), none},
		} {
			if got := optional(c.l); got != c.want {
				return fmt.Errorf("%s: %s; want %s", c.name, got, c.want)
			}
		}
		sl := algos.Scoped(l, 7, 3)
		if algos.CommID(sl) != 7 {
			return fmt.Errorf("CommID of a scoped link %d, want 7", algos.CommID(sl))
		}
		if m, ok := sl.(algos.MachineLink); !ok || m.Machine() != algos.MachineOf(l) {
			return fmt.Errorf("scoped link's machine: %v, want the simulator link's %p", m, algos.MachineOf(l))
		}
		sub, err := algos.Sub(sl, []int{0, 1, 2, 3}, 9)
		if err != nil {
			return err
		}
		if got := optional(sub); got != all || algos.CommID(sub) != 9 {
			return fmt.Errorf("sub-communicator of a scoped link: %s, id %d; want %s, id 9", got, algos.CommID(sub), all)
		}
		// An allreduce through the scope, spawned as a second process of
		// the rank, as an algorithm that asks its link for a Spawner does.
		buf := device.Host(make([]byte, 4*16))
		req := sl.(algos.Spawner).Spawn(func(ctx context.Context) error {
			return algos.RingAllreduce(ctx, sl, buf, device.I32, device.Sum)
		})
		return sl.Wait(ctx, req)
	})
	if err != nil {
		t.Fatal(err)
	}
}
