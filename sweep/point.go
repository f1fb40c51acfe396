package sweep

import (
	"fmt"
	"sort"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
)

// Point is one simulated run: one algorithm of a collective at one world
// size and message size. It carries everything the run needs, so points
// can be run in any order, in parallel or on other machines.
type Point struct {
	// Sweep is the index of the scenario's sweep the point comes from.
	Sweep      int
	Collective *algos.Collective
	Algorithm  *algos.Algorithm
	World      int
	// Bytes is the message size the scenario asked for; the run uses
	// UsedBytes, which the collective's Layout may round down.
	Bytes int
	DType device.DType
	Op    device.Op
	Root  int
	// Params are the parameters the algorithm reads.
	Params map[string]int
	Data   scenario.Data
	// Seed seeds the inputs of host-data runs.
	Seed  uint64
	Model sim.Model
}

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
	s := fmt.Sprintf("%s/%s world=%d bytes=%d %s", p.Collective.Name, p.Algorithm.Name, p.World, p.Bytes, p.DType)
	if p.Collective.Reduces {
		s += " " + p.Op.String()
	}
	if p.Collective.Rooted {
		s += fmt.Sprintf(" root=%d", p.Root)
	}
	if len(p.Params) > 0 {
		names := make([]string, 0, len(p.Params))
		for n := range p.Params {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			s += fmt.Sprintf(" %s=%d", n, p.Params[n])
		}
	}
	return s + " " + p.Data.String()
}

// MaxHostBytes bounds the memory a host-data point may need (every rank's
// buffers, the copies messages carry, the reference result), so that a
// scenario cannot exhaust the machine by accident.
const MaxHostBytes = 4 << 30

// hostBytes estimates the memory a host-data run of p needs.
func (p Point) hostBytes() int {
	send, recv, used := p.Layout()
	sz := p.DType.Size()
	return 2*p.World*(send+recv)*sz + 2*used*sz
}

// Plan expands a scenario into its points, in a deterministic order: sweep
// by sweep as in the file, then algorithm, world size and message size as
// each sweep lists them. It also makes the checks that need the sweep
// package (host-data runs need a check for the collective and must fit in
// MaxHostBytes) and returns every problem as scenario.Errors.
func Plan(s *scenario.Scenario) ([]Point, error) {
	var points []Point
	var errs scenario.Errors
	for _, sw := range s.Sweeps {
		if sw.Data == scenario.Host && sw.Collective != nil && !HasCheck(sw.Collective) {
			errs = append(errs, sw.Errorf("data", `collective %q has no host-data check yet; use data = "phantom"`, sw.Collective.Name))
		}
		tooBig := false
		for _, a := range sw.Algorithms {
			params := map[string]int{}
			for name, v := range sw.Params {
				if _, ok := a.Params[name]; ok {
					params[name] = v
				}
			}
			for _, w := range sw.World {
				for _, b := range sw.Bytes {
					p := Point{
						Sweep: sw.Index, Collective: sw.Collective, Algorithm: a,
						World: w, Bytes: b, DType: sw.DType, Op: sw.Op, Root: sw.Root,
						Params: params, Data: sw.Data, Seed: s.Seed, Model: s.Network.Sim,
					}
					if p.Data == scenario.Host && !tooBig && p.hostBytes() > MaxHostBytes {
						tooBig = true
						errs = append(errs, sw.Errorf("data", `data = "host" at world %d and %d bytes needs about %d MiB, over the limit of %d MiB; use smaller sizes or data = "phantom"`,
							w, b, p.hostBytes()>>20, MaxHostBytes>>20))
					}
					points = append(points, p)
				}
			}
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return points, nil
}
