// Package nccltests reads nccl-tests' command line (all_reduce_perf -b 8
// -e 128M -f 2 ...) and turns it into a scenario, so that nexar-sim and
// nexar-live run a sweep without a scenario file, as users of nccl-tests
// expect. A scenario file stays the way to describe anything richer.
package nccltests

import (
	"errors"
	"flag"
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/units"
)

// Network is the alpha-beta network a sweep from flags runs on (and
// nexar-live predicts with).
type Network struct {
	Latency, Bandwidth, ReduceBandwidth string
}

// Flags are nccl-tests' flags that describe a sweep, plus the collective,
// its algorithms and the network, which nccl-tests' binaries fix.
type Flags struct {
	MinBytes, MaxBytes, StepBytes string
	StepFactor                    int
	DType, Op                     string
	Collective, Algorithms        string
	Root                          int
	Check                         int
	Network                       Network
	// Preset, Nodes and Policy, where RegisterPreset defines them, run
	// the sweep on a GPU machine instead (a scenario preset, on Nodes
	// hosts), with auto choosing by Policy ("nccl" by default): see
	// RegisterPreset.
	Preset string
	Nodes  int
	Policy string
	// Threads and GPUs are -t and -g: a process's threads and each
	// thread's GPUs, so that a process holds Threads x GPUs ranks (0
	// where not given: 1).
	Threads, GPUs int

	set     map[string]bool // flags given, by their canonical name
	ignored []string        // nccl-tests' flags given that change nothing here
}

// runFlags are nccl-tests' flags (and RCCL's, of its current release)
// that say how the benchmark runs on real GPUs, not what the sweep is:
// accepted, so that a command line copied from a log or a script runs,
// and named by Ignored. -t and -g are kept (Threads, GPUs) too.
var runFlags = []struct{ short, long string }{
	{"t", "nthreads"}, {"g", "ngpus"}, {"m", "agg_iters"}, {"N", "run_cycles"}, {"p", "parallel_init"},
	{"z", "blocking"}, {"y", "stream_null"}, {"T", "timeout"}, {"G", "cudagraph"}, {"C", "report_cputime"},
	{"S", "report_timestamps"}, {"J", "output_file"}, {"a", "average"}, {"R", "local_register"},
	{"x", "cta_policy"}, {"D", "device_implementation"}, {"V", "device_cta_count"}, {"M", "memory_report"},
}

// Defaults are nccl-tests' own: one size of 32M, stepping by 1M.
const (
	DefaultMinBytes  = "32M"
	DefaultMaxBytes  = "32M"
	DefaultStepBytes = "1M"
)

// Register defines the flags on fs, with net as the network by default.
// check says whether -c (check the data, into Check) is defined.
func (f *Flags) Register(fs *flag.FlagSet, net Network, check bool) {
	f.set = map[string]bool{}
	f.Network = net
	str := func(p *string, def, name string, names ...string) {
		*p = def
		for _, n := range names {
			fs.Func(n, "", func(v string) error { *p = v; f.set[name] = true; return nil })
		}
	}
	num := func(p *int, def int, name string, names ...string) {
		*p = def
		for _, n := range names {
			fs.Func(n, "", func(v string) error {
				x, err := strconv.Atoi(v)
				if err != nil {
					return fmt.Errorf("%q is not a whole number", v)
				}
				*p = x
				f.set[name] = true
				return nil
			})
		}
	}
	str(&f.MinBytes, DefaultMinBytes, "-b", "b", "minbytes")
	str(&f.MaxBytes, DefaultMaxBytes, "-e", "e", "maxbytes")
	str(&f.StepBytes, DefaultStepBytes, "-i", "i", "stepbytes")
	num(&f.StepFactor, 0, "-f", "f", "stepfactor")
	str(&f.DType, "float", "-d", "d", "datatype")
	str(&f.Op, "sum", "-o", "o", "op")
	num(&f.Root, 0, "-r", "r", "root")
	if check {
		num(&f.Check, 0, "-c", "c", "check")
	}
	str(&f.Collective, "all_reduce", "--collective", "collective")
	str(&f.Algorithms, "", "--algorithms", "algorithms", "algorithm")
	str(&f.Network.Latency, net.Latency, "--latency", "latency")
	str(&f.Network.Bandwidth, net.Bandwidth, "--bandwidth", "bandwidth")
	str(&f.Network.ReduceBandwidth, net.ReduceBandwidth, "--reduce-bandwidth", "reduce-bandwidth")
	f.ignored = nil
	for _, r := range runFlags {
		for _, n := range []string{r.short, r.long} {
			if fs.Lookup(n) != nil {
				continue // the command's own flag of that name
			}
			fs.Func(n, "", func(v string) error {
				switch r.short {
				case "t", "g":
					x, err := strconv.Atoi(v)
					if err != nil || x < 1 {
						return fmt.Errorf("%q: want a whole number, 1 or more", v)
					}
					if r.short == "t" {
						f.Threads = x
					} else {
						f.GPUs = x
					}
				}
				if !slices.Contains(f.ignored, "-"+r.short) {
					f.ignored = append(f.ignored, "-"+r.short)
				}
				return nil
			})
		}
	}
}

// Ignored names nccl-tests' flags given that say how the benchmark runs
// on GPUs, which a sweep here does not depend on (-t and -g among them:
// the caller reads Threads and GPUs), in the order given.
func (f *Flags) Ignored() []string { return f.ignored }

// RanksPerProcess is Threads x GPUs: the ranks one nccl-tests process
// holds.
func (f *Flags) RanksPerProcess() int { return max(f.Threads, 1) * max(f.GPUs, 1) }

// RegisterPreset defines --preset, --nodes and --policy on fs: the sweep
// then runs on a GPU machine of package scenario's presets (dgx-h100,
// ...) on --nodes hosts, and, where --algorithms gives none, runs what
// NCCL runs there: "auto" under --policy (default "nccl": NCCL's own
// choice of algorithm, protocol and channels at each size) for the
// collectives NCCL chooses for, and for alltoall, which NCCL runs as
// point-to-point sends and receives all posted at once, the catalogue's
// "linear". Without --world the world is every GPU of the nodes.
func (f *Flags) RegisterPreset(fs *flag.FlagSet) {
	fs.Func("preset", "", func(v string) error { f.Preset = v; f.set["--preset"] = true; return nil })
	fs.Func("nodes", "", func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%q: want a number of nodes, 1 or more", v)
		}
		f.Nodes = n
		f.set["--nodes"] = true
		return nil
	})
	fs.Func("policy", "", func(v string) error { f.Policy = v; f.set["--policy"] = true; return nil })
}

// PresetWorld is the world of a sweep on a preset without --world: every
// GPU of --nodes hosts (1 without --nodes).
func (f *Flags) PresetWorld() (int, error) {
	p, err := scenario.LookupPreset(f.Preset)
	if err != nil {
		return 0, fmt.Errorf("--preset: %v", err)
	}
	g, _ := p.Value("gpus_per_node")
	n, ok := g.(int64)
	if !ok || n < 1 {
		return 0, fmt.Errorf("--preset %s gives no GPUs a node", f.Preset)
	}
	return int(n) * max(f.Nodes, 1), nil
}

// NCCLAlgorithms returns the algorithms that run collective c as NCCL
// would on a GPU machine: its "auto" where it has one (to run under the
// nccl policy), alltoall's "linear" (NCCL's grouped sends and receives),
// and nil for the others, which NCCL has no counterpart of here.
func NCCLAlgorithms(c *algos.Collective) []string {
	if _, err := c.Algorithm("auto"); err == nil {
		return []string{"auto"}
	}
	if c.Name == "alltoall" {
		return []string{"linear"}
	}
	return nil
}

// Given lists the flags that were given, by their short names, sorted.
func (f *Flags) Given() []string {
	var out []string
	for n := range f.set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ParseSize reads a size as nccl-tests does, a number with an optional K,
// M or G (powers of 1024: "128M"), or as a scenario does ("8MiB", "1KB"):
// units.ParseNCCLBytes.
func ParseSize(s string) (int64, error) { return units.ParseNCCLBytes(s) }

// nccl-tests' names of collectives (all_reduce_perf's all_reduce), of
// types (-d float) and the ops nexar has (-o).
var (
	collectiveNames = map[string]string{"all_reduce": "allreduce", "all_gather": "allgather", "alltoall": "alltoall", "all_to_all": "alltoall",
		"reduce_scatter": "reduce_scatter", "broadcast": "broadcast", "reduce": "reduce", "sendrecv": "sendrecv", "gather": "gather", "scatter": "scatter"}
	dtypeNames = map[string]string{"int8": "i8", "char": "i8", "uint8": "u8", "int32": "i32", "int": "i32", "uint32": "u32",
		"int64": "i64", "uint64": "u64", "half": "f16", "float16": "f16", "float": "f32", "float32": "f32",
		"double": "f64", "float64": "f64", "bfloat16": "bf16"}
	allDTypes = []string{"i8", "u8", "i32", "u32", "i64", "u64", "f16", "f32", "f64", "bf16"}
	allOps    = []string{"sum", "prod", "max", "min"}
)

// CollectiveName returns the catalogue's name of a collective given as
// nccl-tests names it (all_reduce, all_reduce_perf) or as nexar does.
func CollectiveName(s string) string {
	s = strings.TrimSuffix(s, "_perf")
	if n, ok := collectiveNames[s]; ok {
		return n
	}
	return s
}

// Sizes returns the sizes of the sweep: from -b, times -f (or plus -i)
// while at most -e, as nccl-tests steps them.
func (f *Flags) Sizes() ([]int64, error) {
	lo, err := ParseSize(f.MinBytes)
	if err != nil {
		return nil, fmt.Errorf("-b %s: %v", f.MinBytes, err)
	}
	hi, err := ParseSize(f.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("-e %s: %v", f.MaxBytes, err)
	}
	if hi < lo {
		return nil, fmt.Errorf("-e %s is below -b %s", f.MaxBytes, f.MinBytes)
	}
	var step int64
	switch {
	case f.set["-f"] && f.set["-i"]:
		return nil, fmt.Errorf("-f %d and -i %s both given: want a factor or an increment", f.StepFactor, f.StepBytes)
	case f.set["-f"]:
		if f.StepFactor < 2 {
			return nil, fmt.Errorf("-f %d: want a factor of at least 2", f.StepFactor)
		}
		if lo == 0 {
			return nil, fmt.Errorf("-b 0 with -f %d: a size that multiplies must start above 0", f.StepFactor)
		}
	default:
		if step, err = ParseSize(f.StepBytes); err != nil {
			return nil, fmt.Errorf("-i %s: %v", f.StepBytes, err)
		}
		if step < 1 {
			return nil, fmt.Errorf("-i %s: want an increment above 0", f.StepBytes)
		}
	}
	r := units.Range{Start: lo, End: hi, Step: step}
	if step == 0 {
		r.Factor = int64(f.StepFactor)
	}
	out, ok := r.Values()
	if !ok {
		return nil, fmt.Errorf("-b %s -e %s: more than %d sizes; step by more", f.MinBytes, f.MaxBytes, units.MaxRangeValues)
	}
	return out, nil
}

func names(list string, all []string, alias map[string]string, flagName string, parse func(string) error) ([]string, error) {
	var out []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "all" {
			out = append(out, all...)
			continue
		}
		if a, ok := alias[n]; ok {
			n = a
		}
		if err := parse(n); err != nil {
			return nil, fmt.Errorf("%s %s: %v", flagName, list, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// Scenario returns the scenario the flags describe, as TOML, for worlds:
// one sweep per op (-o all runs every op).
func (f *Flags) Scenario(worlds []int, data string) ([]byte, string, error) {
	c, err := algos.Lookup(CollectiveName(f.Collective))
	if err != nil {
		return nil, "", fmt.Errorf("--collective: %v", err)
	}
	sizes, err := f.Sizes()
	if err != nil {
		return nil, "", err
	}
	dtypes, err := names(f.DType, allDTypes, dtypeNames, "-d", func(s string) error { _, err := device.ParseDType(s); return err })
	if err != nil {
		return nil, "", err
	}
	ops := []string{"sum"}
	if c.Reduces {
		if ops, err = names(f.Op, allOps, nil, "-o", func(s string) error { _, err := device.ParseOp(s); return err }); err != nil {
			return nil, "", err
		}
	} else if f.set["-o"] {
		return nil, "", fmt.Errorf("-o %s: %s does not reduce", f.Op, c.Name)
	}
	pow2 := true
	for _, w := range worlds {
		pow2 = pow2 && bits.OnesCount(uint(w)) == 1
	}
	var algs []string
	switch {
	case f.Algorithms != "":
		for _, n := range strings.Split(f.Algorithms, ",") {
			a, err := c.Algorithm(strings.TrimSpace(n))
			if err != nil {
				return nil, "", fmt.Errorf("--algorithms: %v", err)
			}
			algs = append(algs, a.Name)
		}
	case f.Preset != "" && NCCLAlgorithms(c) != nil:
		algs = NCCLAlgorithms(c)
	default:
		// The catalogue's own algorithms: another library's (NCCL's)
		// run where --algorithms names them.
		for _, a := range c.Algorithms {
			if (pow2 || !a.PowerOfTwo) && a.Family == "" {
				algs = append(algs, a.Name)
			}
		}
	}
	name := fmt.Sprintf("%s -b %s -e %s", CollectiveName(f.Collective), f.MinBytes, f.MaxBytes)
	if f.set["-f"] {
		name += fmt.Sprintf(" -f %d", f.StepFactor)
	} else if f.set["-i"] || len(sizes) > 1 {
		name += " -i " + f.StepBytes
	}
	if f.Preset != "" {
		name += " on " + f.Preset
		if f.Nodes > 0 {
			name += fmt.Sprintf(", %d node(s)", f.Nodes)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# The sweep of nccl-tests' flags: %s\nname = %q\nseed = 1\n", name, name)
	if f.Preset != "" {
		for _, n := range []string{"--latency", "--bandwidth", "--reduce-bandwidth"} {
			if f.set[n] {
				return nil, "", fmt.Errorf("%s with --preset: the preset describes the network (override its keys in a scenario file)", n)
			}
		}
		policy := f.Policy
		if policy == "" {
			policy = "nccl"
		}
		fmt.Fprintf(&b, "policy = %q\n\n[network]\npreset = %q\n", policy, f.Preset)
		if f.Nodes > 0 {
			fmt.Fprintf(&b, "nodes = %d\n", f.Nodes)
		}
	} else {
		for _, n := range []string{"--nodes", "--policy"} {
			if f.set[n] {
				return nil, "", fmt.Errorf("%s needs --preset: the GPU machine it applies to", n)
			}
		}
		fmt.Fprintf(&b, "\n[network]\nmodel = \"alpha-beta\"\nlatency = %q\nbandwidth = %q\n", f.Network.Latency, f.Network.Bandwidth)
		if f.Network.ReduceBandwidth != "" {
			fmt.Fprintf(&b, "reduce_bandwidth = %q\n", f.Network.ReduceBandwidth)
		}
	}
	for _, op := range ops {
		fmt.Fprintf(&b, "\n[[sweep]]\ncollective = %q\nalgorithms = %s\nworld = %s\nbytes = %s\ndtype = %s\n",
			c.Name, list(algs, strconv.Quote), list(worlds, strconv.Itoa), list(sizes, func(v int64) string { return strconv.FormatInt(v, 10) }), list(dtypes, strconv.Quote))
		if c.Reduces {
			fmt.Fprintf(&b, "op = %q\n", op)
		}
		if c.Rooted {
			fmt.Fprintf(&b, "root = %d\n", f.Root)
		}
		if data != "" {
			fmt.Fprintf(&b, "data = %q\n", data)
		}
	}
	return []byte(b.String()), name, nil
}

// ParseWorlds reads world sizes: "8", "2,4,8" or a range such as
// "2..64 x2" (as a scenario's world key).
func ParseWorlds(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		vals, err := units.ParseIntRange(part)
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			if v < 1 {
				return nil, fmt.Errorf("world size %d: want at least 1 rank", v)
			}
			out = append(out, int(v))
		}
	}
	return out, nil
}

func list[T any](xs []T, f func(T) string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = f(x)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// Parse parses the scenario the flags made; file names it in messages.
// Its problems are reported by the flags that cause them, not by the
// lines of a file the user never wrote.
func Parse(file string, data []byte) (*scenario.Scenario, error) {
	s, err := scenario.Parse(file, data)
	if err == nil {
		return s, nil
	}
	var es scenario.Errors
	if !errors.As(err, &es) {
		return nil, err
	}
	var msgs []string
	for _, e := range es {
		msgs = append(msgs, flagOf(e.Key)+": "+e.Msg)
	}
	return nil, fmt.Errorf("%s", strings.Join(msgs, "\n"))
}

// flagOf names the flag behind a key of the scenario Scenario writes.
func flagOf(key string) string {
	_, k, _ := strings.Cut(key, ".")
	switch {
	case key == "policy" || strings.HasSuffix(key, ".policy"):
		return "--policy"
	case strings.HasPrefix(key, "network"):
		return "--latency/--bandwidth/--reduce-bandwidth (or --preset/--nodes)"
	case k == "bytes":
		return "-b/-e/-f/-i"
	case k == "world":
		return "the world size"
	case k == "algorithms":
		return "--algorithms"
	case k == "dtype":
		return "-d"
	case k == "op":
		return "-o"
	case k == "root":
		return "-r"
	}
	return key
}
