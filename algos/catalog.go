package algos

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/nexar-go/nexar-go/device"
)

// Call holds the arguments of one rank's call of a collective.
type Call struct {
	// Send is the input of collectives that have a separate one
	// (allgather's block, alltoall's send buffer); nil for in-place ones.
	Send device.Buffer
	// Buf is the in-place buffer, or the output where Send is separate.
	Buf   device.Buffer
	DType device.DType
	Op    device.Op
	// Root is the root rank of rooted collectives.
	Root int
	// Params are the algorithm's numeric parameters by name (for example
	// "segment" in bytes); a missing one takes its default.
	Params map[string]int
	// Tuning is the table the "auto" algorithms select by; nil is
	// DefaultTuning, nexar's own rule.
	Tuning *Tuning
}

// Param returns parameter name of c, or def if it is not set.
func (c Call) Param(name string, def int) int {
	if v, ok := c.Params[name]; ok {
		return v
	}
	return def
}

// Algorithm is one way to perform a collective.
type Algorithm struct {
	Name string
	// SMPI is the name of the same algorithm in SimGrid SMPI, which names
	// the implementations it ports from MPICH and Open MPI ("lr",
	// "rab_rdb", "ompi_bruck"; see smpirun --help-coll), "" if SMPI has
	// none. Same means message for message: the same partners, sizes and
	// order. A scenario may name the algorithm by it, and nexar-sim's
	// SimGrid peer check (scripts/simgrid) runs it.
	SMPI string
	// Aliases are other names of the algorithm that scenarios accept.
	Aliases []string
	// Summary is one line for listings.
	Summary string
	// Params names the parameters the algorithm reads from Call.Params,
	// with their defaults.
	Params map[string]int
	// PowerOfTwo is set for algorithms that need a world size that is a
	// power of two.
	PowerOfTwo bool
	// Family names the library an algorithm reproduces, "" for the
	// catalogue's own (MPI's): "nccl" for package algos/nccl's. Commands
	// that run "every algorithm" of a collective by default take only
	// the catalogue's own; the others run where they are named.
	Family string
	// InNetwork is set for algorithms that reduce in the network's
	// switches (algos.SwitchReducer: NCCL's NVLS and CollNet): a model
	// whose network has no switch that reduces refuses them.
	InNetwork bool
	// Compression, for a lossy algorithm (a compressed allreduce), returns
	// how a call with params compresses, so that a check can compute what
	// the call must leave (package algotest's CompressedReduced); nil for
	// an algorithm that computes its collective exactly. Tuning tables
	// never choose a lossy algorithm.
	Compression func(params map[string]int) (Compression, error)
	Run         func(ctx context.Context, l Link, c Call) error
}

// Lossy reports whether the algorithm's result is not the collective's
// exact one (see Algorithm.Compression).
func (a *Algorithm) Lossy() bool { return a.Compression != nil }

// Names returns every name a scenario may call the algorithm by: its
// name, then its SMPI name if that differs, then its aliases.
func (a *Algorithm) Names() []string {
	names := []string{a.Name}
	if a.SMPI != "" && a.SMPI != a.Name {
		names = append(names, a.SMPI)
	}
	return append(names, a.Aliases...)
}

// Collective describes an operation and the algorithms that perform it.
type Collective struct {
	Name string
	// BusFactor converts algorithm bandwidth to bus bandwidth at world
	// size p, as nccl-tests does.
	BusFactor func(p int) float64
	// Layout returns the per-rank send and receive buffer sizes, in
	// elements, for a collective over count elements as nccl-tests counts
	// them, after rounding count down so that it divides as the
	// collective needs. send is 0 for in-place collectives.
	Layout     func(count, p int) (send, recv, used int)
	Reduces    bool
	Rooted     bool
	Algorithms []*Algorithm
}

// Algorithm returns the algorithm called name, or known by name as an
// alias.
func (c *Collective) Algorithm(name string) (*Algorithm, error) {
	for _, a := range c.Algorithms {
		if a.Name == name {
			return a, nil
		}
	}
	for _, a := range c.Algorithms {
		if a.SMPI == name || slices.Contains(a.Aliases, name) {
			return a, nil
		}
	}
	names := make([]string, len(c.Algorithms))
	for i, a := range c.Algorithms {
		names[i] = a.Name
	}
	return nil, fmt.Errorf("unknown %s algorithm %q (want one of %s)", c.Name, name, strings.Join(names, ", "))
}

var catalogue = map[string]*Collective{}

// Register adds a collective to the catalogue. It panics if the name is
// taken; it is called from init functions. What the collective's results
// must be is registered apart, in package algotest (RegisterReference),
// which the checks of every backend read.
func Register(c *Collective) {
	if _, dup := catalogue[c.Name]; dup {
		panic("algos: collective " + c.Name + " registered twice")
	}
	names := map[string]bool{}
	for _, a := range c.Algorithms {
		for _, n := range a.Names() {
			if names[n] {
				panic("algos: " + c.Name + " algorithm name " + n + " used twice")
			}
			names[n] = true
		}
	}
	catalogue[c.Name] = c
}

// RegisterAlgorithm adds a to the algorithms of the collective called
// collective, after those already there: the way a package outside this
// one, a user's module, adds its own algorithm, which scenarios then name,
// nexar-sim runs and lists and nexar-live measures. It fails if the
// collective is unknown, if a lacks a name or a Run, or if one of its names
// (name, SMPI name, aliases) is taken in the collective. Call it before
// anything reads the catalogue: from an init function or at the start of
// main, before nexarsim.Main or nexarlive.Main.
func RegisterAlgorithm(collective string, a *Algorithm) error {
	c, err := Lookup(collective)
	if err != nil {
		return err
	}
	if a.Name == "" || a.Run == nil {
		return fmt.Errorf("algos: an algorithm of %s needs a Name and a Run", collective)
	}
	for _, n := range a.Names() {
		if n == "" || strings.ContainsAny(n, " ,:()") {
			return fmt.Errorf("algos: %s algorithm name %q: want a name without spaces, commas, colons or parentheses", collective, n)
		}
		for _, b := range c.Algorithms {
			if slices.Contains(b.Names(), n) {
				return fmt.Errorf("algos: %s algorithm name %q is taken by %s", collective, n, b.Name)
			}
		}
	}
	c.Algorithms = append(c.Algorithms, a)
	return nil
}

// MustRegisterAlgorithm is RegisterAlgorithm for init functions: it panics
// on error.
func MustRegisterAlgorithm(collective string, a *Algorithm) {
	if err := RegisterAlgorithm(collective, a); err != nil {
		panic(err)
	}
}

// Lookup returns the collective called name.
func Lookup(name string) (*Collective, error) {
	if c, ok := catalogue[name]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("unknown collective %q (want one of %s)", name, strings.Join(CollectiveNames(), ", "))
}

// CollectiveNames lists the catalogue's collectives in alphabetical order.
func CollectiveNames() []string {
	names := make([]string, 0, len(catalogue))
	for n := range catalogue {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
