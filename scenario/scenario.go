package scenario

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/mesh"
	"github.com/nexar-go/nexar-go/schedule"
	"github.com/nexar-go/nexar-go/sim"
)

// Scenario is a parsed and validated scenario file: a network and the
// sweeps of collectives to run on it.
type Scenario struct {
	// File is the file's name, for messages.
	File string
	Name string
	// Description is free text (optional).
	Description string
	// Seed seeds every random draw of a run (network noise, random
	// placements, the inputs of host-data runs); default 1. Repeat k of a
	// sweep (from 0) runs with Seed + k.
	Seed    uint64
	Network Network
	// Tuning is the table of the top-level tuning key, which the "auto"
	// algorithms of every sweep without its own use; nil for nexar's
	// default table.
	Tuning *algos.Tuning
	// TuningFile is the path of Tuning as the file gives it, "" if none.
	TuningFile string
	// Policy is the top-level policy key: the policy the "auto"
	// algorithms of every sweep without its own select by before their
	// table (see Policies); "" for none.
	Policy string
	Sweeps []*Sweep
	// Workload is the [workload] table, nil if none: a training step
	// that nexar-sim step runs (package workload). A file with one needs
	// no [[sweep]].
	Workload *Workload
	// Shrink is the [[fault]] of kind "rank_failure" with recovery =
	// "shrink", nil if none: a rank that fails during one point of the
	// sweeps, after which the survivors go on (see sweep.Plan).
	Shrink *sim.ShrinkFailure
	// ShrinkKey is the path of Shrink's table ("fault[1]") and ShrinkLine
	// its line, for errors about it.
	ShrinkKey  string
	ShrinkLine int
	// Join is the [[fault]] of kind "rank_join", nil if none: ranks that
	// join the elastic world before one point of the sweeps, which and
	// every later point then run on the larger world (see sweep.Plan,
	// sim.RunGrow); JoinKey and JoinLine locate it.
	Join     *sim.RankJoin
	JoinKey  string
	JoinLine int
	// Hash identifies the scenario: the hex SHA-256 of the file's bytes
	// and of every tuning table it reads, in order. Shards of one run
	// record it, so that merging refuses outputs of different scenarios.
	Hash string
}

// Network is the [network] table: a model and its parameters.
type Network struct {
	// Model is the model's name, such as "alpha-beta".
	Model string
	// Sim is the model, ready for sim.Config, with its random draws (if
	// any) seeded by the scenario's seed; Seeded gives it for other seeds.
	Sim sim.Model
	// Random reports whether runs of the model draw random numbers
	// (latency jitter, randomly chosen stragglers, a random placement),
	// so that runs with different seeds differ: what makes a sweep's
	// repeat meaningful.
	Random bool
	// LinkBandwidth is the bandwidth of one rank's link into the network
	// in bytes per second, the ceiling bus bandwidth approaches; 0 if the
	// model has no single such figure.
	LinkBandwidth float64
	// Faults are those of the file's [[fault]] tables, which every run
	// of the model suffers.
	Faults []sim.Fault
	// Mesh is how ranks are joined (key "mesh": "full", the default,
	// "hypercube" or "kregular:K"); on a sparse mesh messages between
	// ranks that are not joined are relayed (see sim.Relayed).
	Mesh mesh.Spec
	// Transport describes realnet's QUIC and bulk paths, from
	// [network.transport], for deriving the bulk threshold; nil if the
	// file has none.
	Transport *Transport
	// Machine describes the hardware to algorithms that adapt to it
	// (MachineKeys: gpu, cpu, [network.nccl]): its GPU, CPU and Figures,
	// its Node nil. It is not nil on the flow model, whose topology gives
	// each rank its node, and nil on other models when the file
	// describes nothing. Runs get MachineFor(world).
	Machine *algos.Machine
	// RanksPerNode is ranks_per_node (0 if absent): on models without a
	// topology, rank r is on node r / RanksPerNode.
	RanksPerNode int
	// Preset is the name of the preset the table names (key "preset"),
	// "" if none.
	Preset string
	// Topology is the flow model's topology (key "topology" and its
	// keys), nil on other models.
	Topology sim.TopologySpec
	// Line is the line of the [network] header.
	Line int
	// Summary describes the network in one line for captions: the model,
	// the table's keys and values as the file gives them, in its order,
	// and the faults: "alpha-beta: latency 5us, bandwidth 12.5GB/s".
	Summary string

	seeded func(seed uint64) sim.Model
	// seed is the scenario's, which seeds Sim.
	seed uint64
	// withThresholds, on a model of realnet's transport (model =
	// "realnet"), is seeded for the same model with other thresholds; nil
	// on other models.
	withThresholds func(algos.Thresholds) func(seed uint64) sim.Model
}

// Check reports whether the network can run a world of size world (a
// topology large enough, a placement that fits, faults naming ranks that
// exist): it builds the network for that world without running anything.
func (n *Network) Check(world int) error {
	return sim.CheckNetwork(sim.Config{World: world, Model: n.Sim, Machine: n.MachineFor(world)})
}

// Seeded returns the model with its random draws seeded by seed (the same
// model for every seed if it draws none).
func (n *Network) Seeded(seed uint64) sim.Model {
	if n.seeded == nil {
		return n.Sim
	}
	return n.seeded(seed)
}

// Data says what a sweep's buffers hold.
type Data uint8

const (
	// Phantom buffers have a size but no bytes: only time is simulated.
	Phantom Data = iota
	// Host buffers hold real bytes, which are checked after each run.
	Host
)

var dataNames = []string{"phantom", "host"}

func (d Data) String() string {
	if int(d) < len(dataNames) {
		return dataNames[d]
	}
	return fmt.Sprintf("data(%d)", uint8(d))
}

// ParseData returns the Data named s ("phantom" or "host").
func ParseData(s string) (Data, error) {
	for i, n := range dataNames {
		if n == s {
			return Data(i), nil
		}
	}
	return 0, fmt.Errorf("unknown data %q (want phantom or host)", s)
}

// Variant is one algorithm of a sweep with one setting of the parameters
// the sweep gives it.
type Variant struct {
	Algorithm *algos.Algorithm
	// Params are the parameters the sweep sets that the algorithm takes;
	// nil if none (the algorithm's defaults apply).
	Params map[string]int
	// Name is the algorithm's name, followed, if the sweep sets any of its
	// parameters, by their values in parentheses, sorted by parameter name
	// and written as the file writes them: "pipelined_ring(segment=512KiB)",
	// "hierarchical(group=4)". It is what results name the variant by.
	Name string
}

// ParamValue is one value of an algorithm parameter.
type ParamValue struct {
	Value int
	// Text is the value as it appears in variant names: the size string
	// of the file without spaces ("512KiB") or the whole number.
	Text string
}

// MaxRepeat is the largest repeat a sweep may ask for.
const MaxRepeat = 1000

// Sweep is one [[sweep]] table: every combination of its algorithm
// variants, world sizes, message sizes and dtypes.
type Sweep struct {
	// Index is the sweep's position in the file, from 0.
	Index int
	// Line is the line of the sweep's [[sweep]] header.
	Line       int
	Collective *algos.Collective
	// Algorithms are in the order the file lists them.
	Algorithms []*algos.Algorithm
	// World lists the world sizes, in the order given.
	World []int
	// Bytes lists the message sizes in bytes, in the order given; each is
	// a multiple of the size of every dtype of DTypes.
	Bytes []int
	// DTypes lists the element types, in the order given (default f32).
	DTypes []device.DType
	// Op is the reduction operator (default sum); only reducing
	// collectives use it.
	Op   device.Op
	Data Data
	// Symmetry lets phantom runs simulate one rank for all where the
	// simulator proves that the others repeat it, exactly (key
	// "symmetry": "auto", the default, or "off"; sim.Config.Symmetry).
	Symmetry sim.Symmetry
	// Root is the root rank of rooted collectives (default 0).
	Root int
	// Params are the values of each algorithm parameter the sweep sets, by
	// name, in the order given; each parameter is known to at least one
	// of Algorithms.
	Params map[string][]ParamValue
	// Variants are every algorithm with every combination of the values
	// of the parameters it takes: algorithm by algorithm as listed, the
	// values of the first parameter (by name) varying slowest.
	Variants []Variant
	// Repeat is how many times each point runs, with seeds Seed, Seed+1,
	// ...; results report the median time and the spread (default 1).
	Repeat int
	// Tuning is the table the sweep's "auto" algorithms select by: the
	// sweep's own tuning key, else the scenario's; nil for nexar's default.
	Tuning *algos.Tuning
	// TuningFile is the path Tuning was read from, as the file gives it.
	TuningFile string
	// Policy names the policy "auto" asks before Tuning's table: the
	// sweep's own policy key, else the file's; "" for none (Tuning.Policy
	// is the policy itself).
	Policy string

	file  string
	lines map[string]int
}

// Key returns the full path of key of s, such as "sweep[1].world"; the
// sweep's own path for "".
func (s *Sweep) Key(key string) string {
	return joinPath(indexPath("sweep", s.Index), key)
}

// KeyLine returns the line that defines key in s, or the line of the
// sweep's header if the file does not set it.
func (s *Sweep) KeyLine(key string) int {
	if n := lineOf(s.lines, s.Key(key)); n > 0 {
		return n
	}
	return s.Line
}

// Load reads and parses the scenario file at path. Every problem is
// reported at once, as Errors.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		msg := err.Error()
		var pe *os.PathError
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
		}
		return nil, Errors{{File: path, Msg: "cannot read scenario: " + msg}}
	}
	return Parse(path, data)
}

// Parse parses and validates the scenario in data; file names it in
// messages. If the scenario is bad it returns Errors listing every problem
// found, each with its line and key.
func Parse(file string, data []byte) (*Scenario, error) {
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, Errors{{File: file, Line: pe.Position.Line, Key: pe.LastKey, Msg: "TOML syntax: " + pe.Message}}
		}
		return nil, Errors{{File: file, Msg: "TOML: " + err.Error()}}
	}
	c := &checker{file: file, lines: keyLines(string(data)), hash: sha256.New()}
	c.hash.Write(data)
	s := c.scenario(raw)
	if err := c.errs.Err(); err != nil {
		return nil, err
	}
	s.Hash = hex.EncodeToString(c.hash.Sum(nil))
	return s, nil
}

// schedule reads the schedule a sweep names as "msccl:file" (or
// "teccl:file", "mscclpp:file": package schedule's Formats; file relative
// to the scenario's directory), hashes it with the scenario, and
// registers it as an algorithm of collective (package schedule).
func (c *checker) schedule(format, file, collective string) (*algos.Algorithm, error) {
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(c.file), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s:%s: %w", format, file, err)
	}
	c.hash.Write(data)
	a, _, err := schedule.UseFormat(format, path, data, collective)
	return a, err
}

// tuning reads the tuning key of t: the path of a tuning table, relative
// to the scenario file's directory. It returns nil if the key is absent or
// bad (reporting why).
func (c *checker) tuning(t *table) (*algos.Tuning, string) {
	name, ok := t.str("tuning", false, "", `the path of a tuning table: tuning = "tuning.toml"`)
	if !ok || name == "" {
		return nil, ""
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(c.file), path)
	}
	key := joinPath(t.path, "tuning")
	data, err := os.ReadFile(path)
	if err != nil {
		msg := err.Error()
		var pe *os.PathError
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
		}
		c.errorf(key, "cannot read tuning table %s: %s", path, msg)
		return nil, ""
	}
	tun, err := algos.ParseTuning(path, data)
	if err != nil {
		c.errorf(key, "bad tuning table: %v", err)
		return nil, ""
	}
	c.hash.Write(data)
	return tun, name
}

func (c *checker) scenario(raw map[string]any) *Scenario {
	s := &Scenario{File: c.file}
	top := &table{c: c, m: raw, what: "the top level"}
	s.Name, _ = top.str("name", true, "", `a string: name = "my-study"`)
	s.Description, _ = top.str("description", false, "", "a string")
	seed, _ := top.integer("seed", 1, 0, math.MaxInt64)
	s.Seed = uint64(seed)
	c.seed = s.Seed
	s.Tuning, s.TuningFile = c.tuning(top)
	c.defaultTuning, c.defaultTuningFile = s.Tuning, s.TuningFile
	s.Policy, _ = c.policyKey(top)
	c.faultList, c.faultRandom, c.faultsOK = c.faults(top)
	s.Shrink, s.ShrinkKey, s.ShrinkLine = c.shrink, c.shrinkKey, lineOf(c.lines, c.shrinkKey)
	s.Join, s.JoinKey, s.JoinLine = c.join, c.joinKey, lineOf(c.lines, c.joinKey)
	if net := top.subtable("network", true, "[network]", `a [network] table with model = "alpha-beta"`); net != nil {
		s.Network = c.network(net, top)
	}
	c.net = &s.Network
	c.defaultPolicy = s.Policy
	if s.Policy != "" {
		c.defaultPolicyOK = c.buildPolicy(s.Policy, "policy")
	}
	if wt := top.subtable("workload", false, "[workload]", "a [workload] table"); wt != nil {
		s.Workload = c.workload(wt, s.Seed)
	}
	v, path, ok := top.get("sweep")
	switch tables, isTables := v.([]map[string]any); {
	case !ok && s.Workload != nil:
	case !ok:
		top.missing("sweep", "at least one [[sweep]] table, or a [workload]")
	case !isTables:
		c.errorf(path, "want an array of tables, each headed [[sweep]] (two brackets), got %s", typeName(v))
	default:
		for i, m := range tables {
			p := indexPath("sweep", i)
			t := &table{c: c, path: p, m: m, what: fmt.Sprintf("[[sweep]] %d", i+1)}
			s.Sweeps = append(s.Sweeps, c.sweep(t, i))
		}
	}
	top.finish()
	return s
}

func (c *checker) network(t *table, top *table) Network {
	n := Network{Line: lineOf(c.lines, t.path), Summary: c.networkSummary(t)}
	var presetOK bool
	if n.Preset, presetOK = c.preset(t); !presetOK {
		t.known = append(t.known, keysOf(t.m)...) // without its preset, the table's keys cannot be checked
		return n
	}
	want := "one of " + strings.Join(modelNames(), ", ")
	name, ok := t.str("model", true, "", want)
	if !ok {
		t.known = append(t.known, keysOf(t.m)...) // without a model, its keys cannot be checked
		return n
	}
	spec := lookupModel(name)
	if spec == nil {
		t.errorf(joinPath(t.path, "model"), "unknown network model %q (want %s)", name, want)
		t.known = append(t.known, keysOf(t.m)...)
		return n
	}
	n.Model = name
	t.what = fmt.Sprintf("[network] of model %s", name)
	n.Transport = c.transport(t)
	c.paths = n.Transport
	m := spec.build(t, top)
	machine, rpn, machineOK := c.machine(t, name == "flow")
	if !machineOK {
		m = nil
	}
	n.Machine, n.RanksPerNode = machine, rpn
	if prot, ok := c.protocol(t); !ok {
		m = nil
	} else if prot != nil && m != nil {
		m = m.withProtocol(*prot)
	}
	meshSpec, meshOK := c.mesh(t)
	n.Mesh = meshSpec
	faults, random, ok := c.faultList, c.faultRandom, c.faultsOK
	if m != nil && ok && meshOK {
		n.Random, n.LinkBandwidth, n.Topology = m.random || random, m.linkBandwidth, m.topology
		c.synthTopo, c.synthWhy = synthTopology(name, m, faults)
		// decorate puts the mesh's relays and the faults on a model.
		decorate := func(seeded func(uint64) sim.Model) func(uint64) sim.Model {
			if meshSpec.Kind != mesh.Full {
				inner := seeded
				seeded = func(seed uint64) sim.Model { return sim.Relayed{Model: inner(seed), Mesh: meshSpec} }
			}
			if len(faults) > 0 {
				inner := seeded
				seeded = func(seed uint64) sim.Model { return sim.WithFaults(inner(seed), seed, faults...) }
			}
			return seeded
		}
		n.seeded = decorate(m.seeded)
		if len(faults) > 0 {
			n.Faults = faults
		}
		if m.withThresholds != nil {
			n.withThresholds = func(t algos.Thresholds) func(uint64) sim.Model { return decorate(m.withThresholds(t).seeded) }
		}
		n.seed = c.seed
		n.Sim = n.seeded(c.seed)
		c.networkOK, c.random = true, n.Random
	}
	t.finish()
	return n
}

// sweep reads the [[sweep]] table t, the index-th, key by key, then checks
// the keys against each other; every problem is reported on t.
func (c *checker) sweep(t *table, index int) *Sweep {
	sw := &Sweep{Index: index, Line: lineOf(c.lines, t.path), file: c.file, lines: c.lines}
	key := func(k string) string { return joinPath(t.path, k) }

	sweepCollective(t, sw)
	sweepAlgorithms(t, sw)
	worlds, worldOK := t.list("world", `world sizes: [2, 8, "16..64 x2"]`, worldElem)
	for _, w := range worlds {
		sw.World = append(sw.World, int(w))
	}
	if worldOK {
		c.prepareSynth(t, sw)
	}
	sizes, _ := t.list("bytes", `message sizes in bytes: [0, 1024, "8MiB"] or "1KiB..1GiB x2"`, sizeElem)
	for _, b := range sizes {
		sw.Bytes = append(sw.Bytes, int(b))
	}
	dtypeOK := sweepDTypes(t, sw)
	if s, ok := t.str("op", false, "sum", "a reduction operator such as \"sum\""); ok {
		op, err := device.ParseOp(s)
		if err != nil {
			t.errorf(key("op"), "%v", err)
		}
		sw.Op = op
	}
	if s, ok := t.str("data", false, "phantom", `"phantom" or "host"`); ok {
		d, err := ParseData(s)
		if err != nil {
			t.errorf(key("data"), "%v", err)
		}
		sw.Data = d
	}
	if s, ok := t.str("symmetry", false, "auto", `"auto" or "off"`); ok {
		y, err := sim.ParseSymmetry(s)
		if err != nil {
			t.errorf(key("symmetry"), "%v", err)
		}
		sw.Symmetry = y
	}
	root, rootOK := t.integer("root", 0, 0, MaxWorld-1)
	sw.Root = int(root)
	sw.Params = c.params(t, sw)
	sw.Variants = variants(sw.Algorithms, sw.Params)
	repeat, repeatOK := t.integer("repeat", 1, 1, MaxRepeat)
	sw.Repeat = int(repeat)
	if repeatOK && repeat > 1 && c.networkOK && !c.random {
		t.errorf(key("repeat"), "repeat = %d, but the network draws no random numbers, so every repeat would take the same time (add noise with a [[fault]] of kind \"jitter\" or \"stragglers\", or leave repeat out)", repeat)
	}
	sw.Tuning, sw.TuningFile = c.tuning(t)
	if sw.Tuning == nil {
		sw.Tuning, sw.TuningFile = c.defaultTuning, c.defaultTuningFile
	}
	c.sweepPolicy(t, sw)

	// Checks across keys.
	if dtypeOK { // check the sizes that parsed, even if others did not
		checkSweepSizes(t, sw)
	}
	if worldOK {
		checkSweepWorlds(t, sw, rootOK)
	}
	if worldOK && dtypeOK {
		checkScheduleSizes(t, sw)
	}
	t.finish()
	return sw
}

// checkScheduleSizes checks every swept size against the schedules the
// sweep names (minBytes and maxBytes, counts that cut into the schedule's
// chunks), so that a size a schedule cannot run is refused at validate,
// not when its point runs.
func checkScheduleSizes(t *table, sw *Sweep) {
	for _, a := range sw.Algorithms {
		s, ok := schedule.Of(a)
		if !ok || sw.Collective == nil || sw.Collective.Layout == nil {
			continue
		}
		var bad []string
		var first error
		for _, dt := range sw.DTypes {
			for _, b := range sw.Bytes {
				send, recv, _ := sw.Collective.Layout(b/dt.Size(), s.NGPUs)
				if err := s.Fits(send, recv, dt.Size()); err != nil {
					bad = append(bad, fmt.Sprintf("%d (%s)", b, dt))
					first = cmp.Or(first, err)
				}
			}
		}
		if len(bad) > 0 {
			if len(bad) > 5 {
				bad = append(bad[:5], fmt.Sprintf("and %d more", len(bad)-5))
			}
			t.errorf(joinPath(t.path, "bytes"), "%s: algorithm %q cannot run these sizes: %v", strings.Join(bad, ", "), a.Name, first)
		}
	}
}

// sweepCollective reads a sweep's collective, which its other keys (the
// algorithms, the root) are checked against.
func sweepCollective(t *table, sw *Sweep) {
	collName, ok := t.str("collective", true, "", "a collective: one of "+strings.Join(algos.CollectiveNames(), ", "))
	if !ok {
		return
	}
	coll, err := algos.Lookup(collName)
	if err != nil {
		t.errorf(joinPath(t.path, "collective"), "%v", err)
	}
	sw.Collective = coll
}

// UnknownAlgorithmHint follows the error of an algorithm a scenario names
// that the catalogue does not know: one that a program of the user's own
// registers is known to that program's binary only.
const UnknownAlgorithmHint = "; an algorithm registered by a program of your own (algos.RegisterAlgorithm) is known only to that program's binary: build it (a main that calls nexarsim.Main or nexarlive.Main, as examples/custom-algorithm/cmd/ does; docs/adding-an-algorithm.md) and give it the scenario"

// sweepAlgorithms reads a sweep's algorithms, each the collective's and
// listed once, whether by its name or by another it answers to.
func sweepAlgorithms(t *table, sw *Sweep) {
	algNames, ok := t.stringList("algorithms", `a list of algorithm names: ["ring"]`)
	if !ok || sw.Collective == nil {
		return
	}
	key := joinPath(t.path, "algorithms")
	seen := map[string]string{} // the name each algorithm was listed by
	for _, name := range algNames {
		a, err := sw.Collective.Algorithm(name)
		if name == SynthTree {
			if a, err = t.c.synthAlgorithm(sw.Collective.Name); err != nil {
				t.errorf(key, "%v", err)
				continue
			}
		}
		if format, file, ok := strings.Cut(name, ":"); ok && slices.Contains(schedule.Formats, format) {
			a, err = t.c.schedule(format, file, sw.Collective.Name)
			if err != nil {
				t.errorf(key, "%v", err)
				continue
			}
		}
		switch {
		case err != nil:
			t.errorf(key, "%v%s", err, UnknownAlgorithmHint)
		case seen[a.Name] == name:
			t.errorf(key, "algorithm %q is listed twice", name)
		case seen[a.Name] != "":
			t.errorf(key, "algorithm %q is %s, listed already as %q", name, a.Name, seen[a.Name])
		default:
			sw.Algorithms = append(sw.Algorithms, a)
			seen[a.Name] = name
		}
	}
}

// sweepDTypes reads a sweep's element types, each listed once; ok is
// false when one does not parse, and the sizes are then checked against
// those that did.
func sweepDTypes(t *table, sw *Sweep) (ok bool) {
	dtypeNames, ok := t.optStringList("dtype", "f32", `an element type such as "f32", or a list of them`)
	key := joinPath(t.path, "dtype")
	seenDT := map[device.DType]bool{}
	for _, name := range dtypeNames {
		dt, err := device.ParseDType(name)
		switch {
		case err != nil:
			t.errorf(key, "%v", err)
			ok = false
		case seenDT[dt]:
			t.errorf(key, "dtype %q is listed twice", name)
		default:
			seenDT[dt] = true
			sw.DTypes = append(sw.DTypes, dt)
		}
	}
	return ok
}

// checkSweepSizes checks that every message size is a whole number of
// elements of each element type, naming at most five sizes that are not.
func checkSweepSizes(t *table, sw *Sweep) {
	for _, dt := range sw.DTypes {
		var bad []string
		for _, b := range sw.Bytes {
			if b%dt.Size() != 0 {
				bad = append(bad, fmt.Sprint(b))
			}
		}
		if len(bad) > 0 {
			if len(bad) > 5 {
				bad = append(bad[:5], fmt.Sprintf("and %d more", len(bad)-5))
			}
			t.errorf(joinPath(t.path, "bytes"), "%s: not a multiple of the %s element size (%d bytes)", strings.Join(bad, ", "), dt, dt.Size())
		}
	}
}

// checkSweepWorlds checks every world size against the algorithms that
// need a power of two and, when the root parsed, against a rooted
// collective's root.
func checkSweepWorlds(t *table, sw *Sweep, rootOK bool) {
	for _, a := range sw.Algorithms {
		if s, ok := schedule.Of(a); ok {
			for _, w := range sw.World {
				if w != s.NGPUs {
					t.errorf(joinPath(t.path, "world"), "world size %d: algorithm %q is a schedule for %d GPUs (%s)", w, a.Name, s.NGPUs, s.File)
				}
			}
		}
		if !a.PowerOfTwo {
			continue
		}
		for _, w := range sw.World {
			if bits.OnesCount(uint(w)) != 1 {
				t.errorf(joinPath(t.path, "world"), "world size %d: algorithm %q needs a power of two", w, a.Name)
			}
		}
	}
	if rootOK && sw.Collective != nil && sw.Collective.Rooted {
		for _, w := range sw.World {
			if sw.Root >= w {
				t.errorf(joinPath(t.path, "root"), "root %d is outside world size %d", sw.Root, w)
			}
		}
	}
}

// params reads the optional params table of a sweep: algorithm parameters,
// each a whole number, a size, or a list of them.
func (c *checker) params(t *table, sw *Sweep) map[string][]ParamValue {
	pt := t.subtable("params", false, "params", `a table of algorithm parameters: params = { segment = "64KiB" } or { segment = ["512KiB", "2MiB"] }`)
	if pt == nil {
		return nil
	}
	out := map[string][]ParamValue{}
	var known []string
	for _, a := range sw.Algorithms {
		for name := range a.Params {
			if !contains(known, name) {
				known = append(known, name)
			}
		}
	}
	sort.Strings(known)
	for _, name := range keysOf(pt.m) {
		v, path, _ := pt.get(name)
		if sw.Collective != nil && len(sw.Algorithms) > 0 && !contains(known, name) {
			takes := "take no parameters"
			if len(known) > 0 {
				takes = "take " + strings.Join(known, ", ")
			}
			names := make([]string, len(sw.Algorithms))
			for i, a := range sw.Algorithms {
				names[i] = a.Name
			}
			c.errorf(path, "unknown parameter (algorithms %s %s)", strings.Join(names, ", "), takes)
			continue
		}
		arr, isArr := v.([]any)
		if !isArr {
			arr = []any{v}
		} else if len(arr) == 0 {
			c.errorf(path, "empty list (want values such as [\"512KiB\", \"2MiB\"])")
			continue
		}
		var vals []ParamValue
		for i, x := range arr {
			pv, err := paramValue(x)
			if err == nil {
				for _, prev := range vals {
					if prev.Value == pv.Value {
						err = fmt.Errorf("%s is listed twice", pv.Text)
					}
				}
			}
			if err != nil {
				if isArr {
					c.errorf(path, "element %d: %v", i+1, err)
				} else {
					c.errorf(path, "%v", err)
				}
				continue
			}
			vals = append(vals, pv)
		}
		if len(vals) == len(arr) {
			out[name] = vals
		}
	}
	return out
}

// maxParamValue bounds parameter values, so that products of them (a
// segment times a count) cannot overflow.
const maxParamValue = 1 << 50

// paramValue reads one parameter value: a whole number or a size.
func paramValue(v any) (ParamValue, error) {
	switch v := v.(type) {
	case int64:
		if v < 0 || v > maxParamValue {
			return ParamValue{}, fmt.Errorf("%d is out of range (want 0 to %d)", v, int64(maxParamValue))
		}
		return ParamValue{Value: int(v), Text: fmt.Sprint(v)}, nil
	case string:
		n, err := ParseBytes(v)
		if err != nil {
			return ParamValue{}, err
		}
		return ParamValue{Value: int(n), Text: strings.Join(strings.Fields(v), "")}, nil
	}
	return ParamValue{}, fmt.Errorf("want a whole number or a size such as \"64KiB\", got %s", typeName(v))
}

// variants returns every algorithm with every combination of the values
// of the parameters it takes.
func variants(algs []*algos.Algorithm, params map[string][]ParamValue) []Variant {
	var out []Variant
	for _, a := range algs {
		var names []string
		for _, n := range keysOf(a.Params) {
			if len(params[n]) > 0 {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			out = append(out, Variant{Algorithm: a, Name: a.Name})
			continue
		}
		// Odometer over the values, the last name varying fastest.
		idx := make([]int, len(names))
		for {
			v := Variant{Algorithm: a, Params: map[string]int{}}
			parts := make([]string, len(names))
			for i, n := range names {
				pv := params[n][idx[i]]
				v.Params[n] = pv.Value
				parts[i] = n + "=" + pv.Text
			}
			v.Name = a.Name + "(" + strings.Join(parts, ",") + ")"
			out = append(out, v)
			i := len(idx) - 1
			for i >= 0 {
				idx[i]++
				if idx[i] < len(params[names[i]]) {
					break
				}
				idx[i] = 0
				i--
			}
			if i < 0 {
				break
			}
		}
	}
	return out
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// MeshKeys describes the [network] key of the sparse mesh, which every
// model takes.
func MeshKeys() []KeyInfo {
	return []KeyInfo{{"mesh", false, `"full" (default), "hypercube" (ranks differing in one bit) or "kregular:K" (r±1..r±K/2, and r+p/2 for odd K); see sim.Relayed`}}
}

// mesh reads [network]'s mesh key: "full" (default), "hypercube" or
// "kregular:K".
func (c *checker) mesh(t *table) (mesh.Spec, bool) {
	s, ok := t.str("mesh", false, "full", `a mesh: "full", "hypercube" or "kregular:K"`)
	if !ok {
		return mesh.Spec{}, false
	}
	spec, err := mesh.Parse(s)
	if err != nil {
		t.errorf(joinPath(t.path, "mesh"), "%v", err)
		return mesh.Spec{}, false
	}
	return spec, true
}
