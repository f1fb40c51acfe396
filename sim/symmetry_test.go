package sim_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// The shortcut of Config.Symmetry is checked against the full run on
// every algorithm of the catalogue (default parameters, phantom data) at
// worlds of powers of two and not; testdata/symmetry_golden.txt pins
// which runs took it, under which group, and their times. Rewrite it
// with
//
//	go test ./sim -run TestSymmetryExact -sim.update-symmetry

var updateSymmetry = flag.Bool("sim.update-symmetry", false, "rewrite testdata/symmetry_golden.txt")

const symmetryGolden = "testdata/symmetry_golden.txt"

// symmetryModels are the models the shortcut is checked on: the worked
// example, and one with messages of no time (no latency, empty messages)
// and free reductions, where many events share an instant.
var symmetryModels = []struct {
	name  string
	model sim.Model
}{{"worked", worked}, {"no-latency", sim.AlphaBeta{Bandwidth: 1e9}}}

// symmetryCases calls fn with every checked run.
func symmetryCases(fn func(name string, model sim.Model, p int, body sim.Body)) {
	for _, cname := range algos.CollectiveNames() {
		c, err := algos.Lookup(cname)
		if err != nil {
			panic(err)
		}
		for _, a := range c.Algorithms {
			for _, p := range []int{1, 2, 3, 4, 5, 8, 16, 64} {
				if a.PowerOfTwo && p&(p-1) != 0 {
					continue
				}
				for _, count := range []int{max(p-1, 1), p * 4096, p*1024 + 7} {
					send, recv, _ := c.Layout(count, p)
					body := func(ctx context.Context, l algos.Link) error {
						call := algos.Call{Buf: l.Alloc(recv * 4), DType: device.F32, Op: device.Sum, Root: 0}
						if send > 0 {
							call.Send = l.Alloc(send * 4)
						}
						return a.Run(ctx, l, call)
					}
					for _, m := range symmetryModels {
						fn(fmt.Sprintf("%s/%s/%s/p=%d/count=%d", cname, a.Name, m.name, p, count), m.model, p, body)
					}
				}
			}
		}
	}
}

// TestSymmetryExact runs every case in full and with the shortcut: a
// shortcut taken must give the full run's result exactly.
func TestSymmetryExact(t *testing.T) {
	if testing.Short() {
		t.Skip("the whole catalogue at eight worlds")
	}
	var b bytes.Buffer
	b.WriteString("# name group end: see symmetry_test.go (group - : run in full)\n")
	taken := 0
	symmetryCases(func(name string, model sim.Model, p int, body sim.Body) {
		full, ferr := sim.Run(sim.Config{World: p, Model: model, Replay: true}, body)
		short, serr := sim.Run(sim.Config{World: p, Model: model, Replay: true, Symmetry: sim.SymmetryAuto}, body)
		if (ferr == nil) != (serr == nil) || (ferr != nil && ferr.Error() != serr.Error()) {
			t.Errorf("%s: errors differ: full %v, shortcut %v", name, ferr, serr)
			return
		}
		if ferr != nil {
			fmt.Fprintf(&b, "%s - error\n", name)
			return
		}
		if full.SymmetryGroup != "" {
			t.Errorf("%s: the full run says it took the shortcut (%s)", name, full.SymmetryGroup)
		}
		group := short.SymmetryGroup
		if group == "" {
			group = "-"
		} else {
			taken++
		}
		if !slices.Equal(full.Finish, short.Finish) || full.End != short.End || full.Messages != short.Messages ||
			full.Events != short.Events || !slices.Equal(full.Links, short.Links) {
			t.Errorf("%s: shortcut (%s) differs from the full run:\nfull     end %v messages %d events %d finish %v\nshortcut end %v messages %d events %d finish %v",
				name, group, full.End, full.Messages, full.Events, head(full.Finish), short.End, short.Messages, short.Events, head(short.Finish))
		}
		fmt.Fprintf(&b, "%s %s %d\n", name, group, int64(short.End))
	})
	if taken == 0 {
		t.Error("no run took the shortcut")
	}
	if *updateSymmetry {
		if err := os.WriteFile(symmetryGolden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(symmetryGolden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, b.Bytes()) {
		t.Errorf("%s differs from this run (rewrite with -sim.update-symmetry if meant):\n%s", symmetryGolden, firstDiff(want, b.Bytes()))
	}
}

func head(ts []sim.Time) []sim.Time { return ts[:min(len(ts), 8)] }

// firstDiff is the first line where a and b differ.
func firstDiff(a, b []byte) string {
	al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range max(len(al), len(bl)) {
		var x, y []byte
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if !bytes.Equal(x, y) {
			return fmt.Sprintf("line %d: want %q, got %q", i+1, x, y)
		}
	}
	return ""
}

// TestSymmetryRefused: the shortcut is not taken where it would not be
// exact or was not asked for.
func TestSymmetryRefused(t *testing.T) {
	ring := func(ctx context.Context, l algos.Link) error {
		return algos.RingAllreduce(ctx, l, l.Alloc(1<<16), device.F32, device.Sum)
	}
	for _, c := range []struct {
		name string
		cfg  sim.Config
	}{
		{"off", sim.Config{World: 8, Model: worked, Replay: true}},
		{"no replay", sim.Config{World: 8, Model: worked, Symmetry: sim.SymmetryAuto}},
		{"host data", sim.Config{World: 8, Model: worked, Replay: true, HostData: true, Symmetry: sim.SymmetryAuto}},
		{"observer", sim.Config{World: 8, Model: worked, Replay: true, Observer: &logObserver{}, Symmetry: sim.SymmetryAuto}},
		{"straggler", sim.Config{World: 8, Model: sim.WithFaults(worked, 1, sim.Straggler{Rank: 1, Factor: 2}), Replay: true, Symmetry: sim.SymmetryAuto}},
		{"flow", sim.Config{World: 8, Model: sim.Flow{Topology: sim.Crossbar{Bandwidth: 12.5e9, Latency: sim.Microsecond}}, Replay: true, Symmetry: sim.SymmetryAuto}},
	} {
		res, err := sim.Run(c.cfg, ring)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.SymmetryGroup != "" {
			t.Errorf("%s: took the shortcut (%s)", c.name, res.SymmetryGroup)
		}
	}
	// A body whose ranks differ beyond a group: rank 0 sends to every
	// other rank, which receives.
	star := func(ctx context.Context, l algos.Link) error {
		buf := l.Alloc(64)
		if l.Rank() != 0 {
			return l.Wait(ctx, l.Irecv(0, 1, buf))
		}
		var reqs []algos.Request
		for d := 1; d < l.Size(); d++ {
			reqs = append(reqs, l.Isend(d, 1, buf))
		}
		return l.Wait(ctx, reqs...)
	}
	res, err := sim.Run(sim.Config{World: 8, Model: worked, Replay: true, Symmetry: sim.SymmetryAuto}, star)
	if err != nil || res.SymmetryGroup != "" {
		t.Errorf("star: group %q, error %v; want a full run", res.SymmetryGroup, err)
	}
}

// ExampleSymmetryAuto simulates a ring allreduce on 256 ranks as one,
// beside the full run.
func ExampleSymmetryAuto() {
	ring := func(ctx context.Context, l algos.Link) error {
		return algos.RingAllreduce(ctx, l, l.Alloc(1<<20), device.F32, device.Sum)
	}
	for _, sym := range []sim.Symmetry{sim.SymmetryOff, sim.SymmetryAuto} {
		res, err := sim.Run(sim.Config{World: 256, Model: worked, Replay: true, Symmetry: sym}, ring)
		if err != nil {
			panic(err)
		}
		fmt.Printf("group %q: %d messages, %v\n", res.SymmetryGroup, res.Messages, res.End)
	}
	// Output:
	// group "": 130560 messages, 2.758896ms
	// group "cyclic": 130560 messages, 2.758896ms
}

// TestIsSymmetryGroup: the names a run's SymmetryGroup can hold, and no
// other.
func TestIsSymmetryGroup(t *testing.T) {
	for s, want := range map[string]bool{"cyclic": true, "xor": true, "": false, "ring": false, "Cyclic": false, "auto": false} {
		if got := sim.IsSymmetryGroup(s); got != want {
			t.Errorf("IsSymmetryGroup(%q) = %t, want %t", s, got, want)
		}
	}
}
