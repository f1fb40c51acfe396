package sweep

import (
	"errors"
	"fmt"
	"sort"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
)

// Point is one simulated measurement: one algorithm variant of a
// collective at one world size, message size and dtype. It carries
// everything the run needs, so points can be run in any order, in parallel
// or on other machines.
type Point struct {
	// Index is the point's position in the scenario's plan, from 0: the
	// row of results.csv it becomes.
	Index int
	// Sweep is the index of the scenario's sweep the point comes from.
	Sweep      int
	Collective *algos.Collective
	Algorithm  *algos.Algorithm
	// Name is the variant's name, the algorithm column of the results:
	// the algorithm's name, with the parameters the sweep sets in
	// parentheses (see scenario.Variant). Empty means Algorithm.Name.
	Name  string
	World int
	// Bytes is the message size the scenario asked for; the run uses
	// UsedBytes, which the collective's Layout may round down.
	Bytes int
	DType device.DType
	Op    device.Op
	Root  int
	// Params are the parameters the algorithm reads.
	Params map[string]int
	Data   scenario.Data
	// Symmetry lets a phantom run simulate one rank for all where the
	// simulator proves the others repeat it (sim.Config.Symmetry).
	Symmetry sim.Symmetry
	// Seed seeds the first run; repeat k runs with Seed + k.
	Seed uint64
	// Repeat is how many runs the point takes (0 counts as 1).
	Repeat int
	// Network is the scenario's network, which gives the model for each
	// seed.
	Network *scenario.Network
	// Tuning is the table "auto" selects by; nil for nexar's default.
	Tuning *algos.Tuning
	// Shrink, if not nil, is the scenario's rank failure with recovery by
	// shrinking, which strikes during this point: it runs through
	// sim.RunShrink, and its row reports the run again on World-1 ranks
	// and the recovery (Row.Recovery). Plan sets it, and gives every later
	// point one rank fewer than its sweep asks.
	Shrink *sim.ShrinkFailure
	// Join, if not nil, is the scenario's ranks joining an elastic world
	// before this point: it runs through sim.RunGrow from JoinFrom ranks
	// to World, and its row reports the run at World and the growth
	// (Row.Join). Plan sets them, and gives this point and every later one
	// Join.Ranks more ranks than its sweep asks, at most Join.MaxWorld.
	Join     *sim.RankJoin
	JoinFrom int
}

// VariantName is the name results give the point's algorithm: Name, or
// the algorithm's name.
func (p Point) VariantName() string {
	if p.Name != "" {
		return p.Name
	}
	return p.Algorithm.Name
}

// Model returns the network model of the run with seed.
func (p Point) Model(seed uint64) sim.Model { return p.Network.Seeded(seed) }

// Machine returns what the run tells algorithms of its hardware
// (sim.Config.Machine): the scenario network's machine for the point's
// world (scenario.Network.MachineFor), nil if it describes none.
func (p Point) Machine() *algos.Machine { return p.Network.MachineFor(p.World) }

// Layout returns the per-rank send and receive buffer sizes and the count
// the run is measured on, in elements, from the collective's Layout.
func (p Point) Layout() (send, recv, used int) {
	return p.Collective.Layout(p.Bytes/p.DType.Size(), p.World)
}

// UsedBytes is the message size actually run and reported, in bytes: Bytes
// rounded down to what the collective can divide, as nccl-tests does.
func (p Point) UsedBytes() int {
	_, _, used := p.Layout()
	return used * p.DType.Size()
}

// InPlace reports whether the collective works in place on one buffer
// (Call.Send is nil), judged from its Layout: its send buffer is empty.
func (p Point) InPlace() bool {
	send, _, _ := p.Collective.Layout(1024*p.World, p.World)
	return send == 0
}

// String names the point in messages: "allreduce/ring world=8
// bytes=8388608 f32 sum phantom".
func (p Point) String() string {
	s := fmt.Sprintf("%s/%s world=%d bytes=%d %s", p.Collective.Name, p.VariantName(), p.World, p.Bytes, p.DType)
	if p.Collective.Reduces {
		s += " " + p.Op.String()
	}
	if p.Collective.Rooted {
		s += fmt.Sprintf(" root=%d", p.Root)
	}
	if len(p.Params) > 0 && p.Name == "" {
		names := make([]string, 0, len(p.Params))
		for n := range p.Params {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			s += fmt.Sprintf(" %s=%d", n, p.Params[n])
		}
	}
	if p.Repeat > 1 {
		s += fmt.Sprintf(" repeat=%d", p.Repeat)
	}
	return s + " " + p.Data.String()
}

// MaxHostBytes bounds the memory a host-data point may need (every rank's
// buffers, the copies messages carry, the reference result), so that a
// scenario cannot exhaust the machine by accident. Parallel runs share
// the same budget: points run at once need at most MaxHostBytes together.
const MaxHostBytes = 4 << 30

// hostBytes estimates the memory a run of p needs: for host data its
// buffers, the messages' copies and the reference result; phantom runs
// allocate no payload and count as 0.
func (p Point) hostBytes() int {
	if p.Data != scenario.Host {
		return 0
	}
	send, recv, used := p.Layout()
	sz := p.DType.Size()
	return 2*p.World*(send+recv)*sz + 2*used*sz
}

// Plan expands a scenario into its points, in a deterministic order: sweep
// by sweep as in the file, then dtype, algorithm variant, world size and
// message size as each sweep lists them. It also makes the checks that
// need the sweep package or a network built for a world size (the network
// must fit every world; host-data runs need a check for the collective and
// must fit in MaxHostBytes; the tuning table of an "auto" must select an
// algorithm that can run at every point) and returns every problem as
// scenario.Errors, so that a scenario that cannot run is refused before
// anything is simulated.
func Plan(s *scenario.Scenario) ([]Point, error) {
	var points []Point
	var errs scenario.Errors
	checked := map[int]bool{}
	for _, sw := range s.Sweeps {
		// The network must fit every world (a topology large enough, a
		// placement that fits, faults that name existing ranks).
		for _, w := range sw.World {
			if checked[w] {
				continue
			}
			checked[w] = true
			if err := s.Network.Check(w); err != nil {
				errs = append(errs, sw.Errorf("world", "world size %d: the network cannot run it: %v", w, err))
			}
		}
		if sw.Data == scenario.Host && sw.Collective != nil && !HasCheck(sw.Collective) {
			errs = append(errs, sw.Errorf("data", `collective %q has no host-data check yet; use data = "phantom"`, sw.Collective.Name))
		}
		tooBig := false
		badTuning := false
		for _, dt := range sw.DTypes {
			for _, v := range sw.Variants {
				for _, w := range sw.World {
					for _, b := range sw.Bytes {
						p := Point{
							Index: len(points), Sweep: sw.Index, Collective: sw.Collective, Algorithm: v.Algorithm, Name: v.Name,
							World: w, Bytes: b, DType: dt, Op: sw.Op, Root: sw.Root,
							Params: v.Params, Data: sw.Data, Symmetry: sw.Symmetry, Seed: s.Seed, Repeat: sw.Repeat,
							Network: &s.Network, Tuning: sw.Tuning,
						}
						if p.Data == scenario.Host && !tooBig && p.hostBytes() > MaxHostBytes {
							tooBig = true
							errs = append(errs, sw.Errorf("data", `data = "host" at world %d and %d bytes needs about %d MiB, over the limit of %d MiB; use smaller sizes or data = "phantom"`,
								w, b, p.hostBytes()>>20, MaxHostBytes>>20))
						}
						if v.Algorithm.Name == "auto" && !badTuning {
							if err := p.checkAuto(); err != nil {
								badTuning = true
								var pe *algos.PolicyError
								if errors.As(err, &pe) {
									errs = append(errs, sw.PolicyErrorf("auto at world %d and %d bytes: %v", w, b, err))
								} else {
									errs = append(errs, sw.TuningErrorf("auto at world %d and %d bytes: %v", w, b, err))
								}
							}
						}
						points = append(points, p)
					}
				}
			}
		}
	}
	if s.Shrink != nil {
		errs = append(errs, planShrink(s, points)...)
	}
	if s.Join != nil {
		errs = append(errs, planJoin(s, points)...)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return points, nil
}

// planShrink puts the scenario's shrinking rank failure on its point and
// takes one rank from every later point, which then runs on the
// survivors. It returns the problems: a point out of the plan, a rank
// outside its world, a world of one rank that cannot lose one, a network
// that cannot run the smaller worlds.
func planShrink(s *scenario.Scenario, points []Point) scenario.Errors {
	f := s.Shrink
	fail := func(format string, args ...any) scenario.Errors {
		return scenario.Errors{&scenario.Error{File: s.File, Line: s.ShrinkLine, Key: s.ShrinkKey, Msg: fmt.Sprintf("%v: ", f) + fmt.Sprintf(format, args...)}}
	}
	if f.Point >= len(points) {
		return fail("the scenario has %d points, numbered from 0", len(points))
	}
	i := f.Point
	if w := points[i].World; f.Rank >= w || w < 2 {
		return fail("point %d (%v) runs on %d rank(s): it needs at least 2, and rank %d among them", f.Point, points[i], w, f.Rank)
	}
	points[i].Shrink = f
	checked := map[int]bool{}
	for j := i; j < len(points); j++ {
		w := points[j].World
		if w < 2 {
			return fail("point %d (%v) runs on one rank, which cannot lose one", j, points[j])
		}
		if j > i {
			points[j].World = w - 1
		}
		if !checked[w-1] {
			checked[w-1] = true
			if err := s.Network.Check(w - 1); err != nil {
				return fail("the survivors' world of %d: the network cannot run it: %v", w-1, err)
			}
		}
	}
	return nil
}

// planJoin puts the scenario's joining ranks on their point and grows
// that point and every later one by Join.Ranks, at most to Join.MaxWorld.
// It returns the problems, each at the key of the rank_join table that
// decides it: a point out of the plan, a sweep's world outside
// min_world..max_world, a world already at max_world where they join, a
// grown world that the network, a power-of-two algorithm or auto's tuning
// table cannot run, a shrinking failure beside it.
func planJoin(s *scenario.Scenario, points []Point) scenario.Errors {
	j := s.Join
	fail := func(key, format string, args ...any) scenario.Errors {
		return scenario.Errors{&scenario.Error{File: s.File, Line: s.JoinLine, Key: s.JoinKey + "." + key, Msg: fmt.Sprintf("%v: ", j) + fmt.Sprintf(format, args...)}}
	}
	switch {
	case s.Shrink != nil:
		return scenario.Errors{&scenario.Error{File: s.File, Line: s.JoinLine, Key: s.JoinKey, Msg: fmt.Sprintf(`%v: a scenario with both a rank_join and a rank_failure with recovery = "shrink" is not supported yet`, j)}}
	case j.Point >= len(points):
		return fail("point", "the scenario has %d points, numbered from 0", len(points))
	}
	for k, p := range points {
		if p.World < j.MinWorld {
			return fail("min_world", "point %d (%v) runs on %d rank(s), below min_world", k, p, p.World)
		}
		if p.World > j.MaxWorld {
			return fail("max_world", "point %d (%v) runs on %d ranks, above max_world", k, p, p.World)
		}
	}
	i := j.Point
	from := points[i].World
	if from >= j.MaxWorld {
		return fail("max_world", "point %d (%v) already runs on max_world ranks: none can join", i, points[i])
	}
	checked := map[int]bool{}
	for k := i; k < len(points); k++ {
		w := min(points[k].World+j.Ranks, j.MaxWorld)
		points[k].World = w
		if a := points[k].Algorithm; a.PowerOfTwo && w&(w-1) != 0 {
			return fail("ranks", "point %d (%v) would run on %d ranks, but %s needs a power-of-two world", k, points[k], w, a.Name)
		}
		if points[k].Algorithm.Name == "auto" {
			if err := points[k].checkAuto(); err != nil {
				return fail("ranks", "point %d (%v) on the grown world: %v", k, points[k], err)
			}
		}
		if !checked[w] {
			checked[w] = true
			if err := s.Network.Check(w); err != nil {
				return fail("ranks", "the grown world of %d: the network cannot run it: %v", w, err)
			}
		}
	}
	points[i].Join, points[i].JoinFrom = j, from
	return nil
}

// AutoChoice is what "auto" selects at the point: its tuning table's
// choice (nexar's default table where it has none), under its policy,
// on its machine, for its world and message. It measures the message as
// the allreduce dispatcher does (the buffer's bytes and elements), which
// is what every collective's auto measures today.
func (p Point) AutoChoice() (algos.Choice, error) {
	t := p.Tuning
	if t == nil {
		t = algos.DefaultTuning()
	}
	_, _, used := p.Layout()
	return t.SelectFor(p.Machine(), p.Collective.Name, p.World, used*p.DType.Size(), used)
}

// checkAuto checks that the point's tuning table selects, for its world
// and message, an algorithm that can run there.
func (p Point) checkAuto() error {
	ch, err := p.AutoChoice()
	if err != nil {
		return err
	}
	a, err := p.Collective.Algorithm(ch.Algorithm)
	if err != nil {
		return err
	}
	if a.PowerOfTwo && p.World&(p.World-1) != 0 {
		return fmt.Errorf("the tuning table's %s selects %s, which needs a power-of-two world", ch.From, a.Name)
	}
	return nil
}
