package nexarsim

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nexar-go/nexar-go/internal/nccltests"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// flagsScenarioFile is the scenario a run from nccl-tests' flags writes
// into its output directory, so that 'nexar-sim run DIR/scenario.toml'
// runs it again, and a user sees how to write a richer one.
const flagsScenarioFile = "scenario.toml"

// defaultNetwork is the network of a run from flags: the default
// scenario's (scenarios/scenarios.toml), a 100 Gbit/s-class alpha-beta
// network.
var defaultNetwork = nccltests.Network{Latency: "5us", Bandwidth: "12.5GB/s", ReduceBandwidth: "25GB/s"}

// ncclFlags are nccl-tests' flags of run, with --world, which mpirun's
// -np sets for nccl-tests, and -n and -w, which the simulator takes but
// needs not: its network draws no random numbers and keeps no state from
// one iteration to the next.
type ncclFlags struct {
	nccltests.Flags
	world         string
	iters, warmup int
	worldSet      bool
	itersSet      bool
}

func (f *ncclFlags) register(fs *flag.FlagSet) {
	f.Register(fs, defaultNetwork, true)
	f.RegisterPreset(fs)
	fs.Func("world", "", func(v string) error { f.world, f.worldSet = v, true; return nil })
	for _, n := range []string{"n", "iters"} {
		fs.Func(n, "", func(v string) error { f.itersSet = true; _, err := fmt.Sscan(v, &f.iters); return err })
	}
	for _, n := range []string{"w", "warmup_iters"} {
		fs.Func(n, "", func(v string) error { f.itersSet = true; _, err := fmt.Sscan(v, &f.warmup); return err })
	}
}

// list names the flags given.
func (f *ncclFlags) list() []string {
	l := f.Given()
	if f.worldSet {
		l = append(l, "--world")
	}
	if f.itersSet {
		l = append(l, "-n/-w")
	}
	if f.Threads > 0 || f.GPUs > 0 {
		l = append(l, "-t/-g")
	}
	return append(l, f.gpuOnly()...) // with a scenario file: refused as the others
}

// gpuOnly names the nccl-tests flags given that change nothing here: the
// ignored ones but -t and -g, which make a process's ranks.
func (f *ncclFlags) gpuOnly() []string {
	return slices.DeleteFunc(slices.Clone(f.Ignored()), func(n string) bool { return n == "-t" || n == "-g" })
}

func (f *ncclFlags) given() bool { return len(f.list()) > 0 }

// scenario builds, parses and plans the scenario of the flags, which
// names file as its own.
func (f *ncclFlags) scenario(file string, stderr io.Writer) (*scenario.Scenario, []sweep.Point, []byte, error) {
	var worlds []int
	perProcess := f.RanksPerProcess()
	switch {
	case f.worldSet:
		var err error
		if worlds, err = nccltests.ParseWorlds(f.world); err != nil {
			return nil, nil, nil, fmt.Errorf("--world %s: %v", f.world, err)
		}
		if perProcess > 1 {
			// --world is mpirun's -np: processes of -t x -g ranks each.
			for i := range worlds {
				worlds[i] *= perProcess
			}
			fmt.Fprintf(stderr, "nexar-sim: note: -t %d -g %d: %d ranks a process, as nccl-tests counts them; --world %s processes make %v ranks\n",
				max(f.Threads, 1), max(f.GPUs, 1), perProcess, f.world, worlds)
		}
	case f.Preset != "":
		w, err := f.PresetWorld()
		if err != nil {
			return nil, nil, nil, err
		}
		worlds = []int{w}
	case f.Threads > 0 || f.GPUs > 0:
		worlds = []int{perProcess} // one process, as nccl-tests without mpirun
	default:
		return nil, nil, nil, fmt.Errorf("missing --world N (ranks: 8, 2,4,8 or 2..64 x2), which mpirun -np gives nccl-tests; or -g (GPUs of one process), or --preset with --nodes")
	}
	if ig := f.gpuOnly(); len(ig) > 0 {
		fmt.Fprintf(stderr, "nexar-sim: note: %s change nothing here: they say how nccl-tests runs on GPUs\n", strings.Join(ig, ", "))
	}
	data := "phantom"
	if f.Check != 0 {
		data = "host"
	}
	text, _, err := f.Scenario(worlds, data)
	if err != nil {
		return nil, nil, nil, err
	}
	s, err := nccltests.Parse(file, text)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("the sweep of the flags: %s", strings.ReplaceAll(err.Error(), "\n", "\n  "))
	}
	points, err := sweep.Plan(s)
	if err != nil {
		return nil, nil, nil, err
	}
	if f.itersSet {
		fmt.Fprintf(stderr, "nexar-sim: note: -n and -w change nothing here: the network draws no random numbers and keeps no state between iterations, so each point runs once\n")
	}
	return s, points, text, nil
}
