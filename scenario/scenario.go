package scenario

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
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
	// Seed seeds the inputs of host-data runs (default 1).
	Seed    uint64
	Network Network
	Sweeps  []*Sweep
}

// Network is the [network] table: a model and its parameters.
type Network struct {
	// Model is the model's name, such as "alpha-beta".
	Model string
	// Sim is the model, ready for sim.Config.
	Sim sim.Model
	// Line is the line of the [network] header.
	Line int
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

// Sweep is one [[sweep]] table: every combination of its algorithms, world
// sizes and message sizes.
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
	// a multiple of the size of DType.
	Bytes []int
	DType device.DType
	// Op is the reduction operator (default sum); only reducing
	// collectives use it.
	Op   device.Op
	Data Data
	// Root is the root rank of rooted collectives (default 0).
	Root int
	// Params are algorithm parameters by name; each is known to at least
	// one of Algorithms.
	Params map[string]int

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
	c := &checker{file: file, lines: keyLines(string(data))}
	s := c.scenario(raw)
	if err := c.errs.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

func (c *checker) scenario(raw map[string]any) *Scenario {
	s := &Scenario{File: c.file}
	top := &table{c: c, m: raw, what: "the top level"}
	s.Name, _ = top.str("name", true, "", `a string: name = "my-study"`)
	s.Description, _ = top.str("description", false, "", "a string")
	seed, _ := top.integer("seed", 1, 0, math.MaxInt64)
	s.Seed = uint64(seed)
	if net := top.subtable("network", true, "[network]", `a [network] table with model = "alpha-beta"`); net != nil {
		s.Network = c.network(net)
	}
	v, path, ok := top.get("sweep")
	switch tables, isTables := v.([]map[string]any); {
	case !ok:
		top.missing("sweep", "at least one [[sweep]] table")
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

func (c *checker) network(t *table) Network {
	n := Network{Line: lineOf(c.lines, t.path)}
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
	n.Sim = spec.build(t)
	t.what = fmt.Sprintf("[network] of model %s", name)
	t.finish()
	return n
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (c *checker) sweep(t *table, index int) *Sweep {
	sw := &Sweep{Index: index, Line: lineOf(c.lines, t.path), file: c.file, lines: c.lines}
	key := func(k string) string { return joinPath(t.path, k) }

	collName, ok := t.str("collective", true, "", "a collective: one of "+strings.Join(algos.CollectiveNames(), ", "))
	if ok {
		coll, err := algos.Lookup(collName)
		if err != nil {
			t.errorf(key("collective"), "%v", err)
		}
		sw.Collective = coll
	}

	algNames, ok := t.stringList("algorithms", `a list of algorithm names: ["ring"]`)
	if ok && sw.Collective != nil {
		seen := map[string]bool{}
		for _, name := range algNames {
			a, err := sw.Collective.Algorithm(name)
			switch {
			case err != nil:
				t.errorf(key("algorithms"), "%v", err)
			case seen[name]:
				t.errorf(key("algorithms"), "algorithm %q is listed twice", name)
			default:
				sw.Algorithms = append(sw.Algorithms, a)
			}
			seen[name] = true
		}
	}

	worlds, worldOK := t.list("world", `world sizes: [2, 8, "16..64 x2"]`, worldElem)
	for _, w := range worlds {
		sw.World = append(sw.World, int(w))
	}
	sizes, _ := t.list("bytes", `message sizes in bytes: [0, 1024, "8MiB"] or "1KiB..1GiB x2"`, sizeElem)
	for _, b := range sizes {
		sw.Bytes = append(sw.Bytes, int(b))
	}

	dtypeOK := false
	if s, ok := t.str("dtype", false, "f32", "an element type such as \"f32\""); ok {
		dt, err := device.ParseDType(s)
		if err != nil {
			t.errorf(key("dtype"), "%v", err)
		}
		sw.DType, dtypeOK = dt, err == nil
	}
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
	root, rootOK := t.integer("root", 0, 0, MaxWorld-1)
	sw.Root = int(root)
	sw.Params = c.params(t, sw)

	// Checks across keys.
	if dtypeOK { // check the sizes that parsed, even if others did not
		var bad []string
		for _, b := range sw.Bytes {
			if b%sw.DType.Size() != 0 {
				bad = append(bad, fmt.Sprint(b))
			}
		}
		if len(bad) > 0 {
			if len(bad) > 5 {
				bad = append(bad[:5], fmt.Sprintf("and %d more", len(bad)-5))
			}
			t.errorf(key("bytes"), "%s: not a multiple of the %s element size (%d bytes)", strings.Join(bad, ", "), sw.DType, sw.DType.Size())
		}
	}
	if worldOK {
		for _, a := range sw.Algorithms {
			if !a.PowerOfTwo {
				continue
			}
			for _, w := range sw.World {
				if bits.OnesCount(uint(w)) != 1 {
					t.errorf(key("world"), "world size %d: algorithm %q needs a power of two", w, a.Name)
				}
			}
		}
		if rootOK && sw.Collective != nil && sw.Collective.Rooted {
			for _, w := range sw.World {
				if sw.Root >= w {
					t.errorf(key("root"), "root %d is outside world size %d", sw.Root, w)
				}
			}
		}
	}
	t.finish()
	return sw
}

// params reads the optional params table of a sweep: algorithm parameters
// as whole numbers or sizes.
func (c *checker) params(t *table, sw *Sweep) map[string]int {
	pt := t.subtable("params", false, "params", `a table of algorithm parameters: params = { segment = "64KiB" }`)
	if pt == nil {
		return nil
	}
	out := map[string]int{}
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
		var n int64
		var err error
		switch v := v.(type) {
		case int64:
			n = v
			if n < 0 {
				err = fmt.Errorf("%d is negative", n)
			}
		case string:
			n, err = ParseBytes(v)
		default:
			err = fmt.Errorf("want a whole number or a size such as \"64KiB\", got %s", typeName(v))
		}
		if err != nil {
			c.errorf(path, "%v", err)
			continue
		}
		out[name] = int(n)
	}
	return out
}
