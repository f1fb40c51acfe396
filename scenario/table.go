package scenario

import (
	"fmt"
	"hash"
	"math"
	"sort"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/internal/textdist"
	"github.com/nexar-go/nexar-go/schedule/synth"
	"github.com/nexar-go/nexar-go/sim"
)

// checker collects the problems of one file, and what sweeps need to know
// of the keys above them.
type checker struct {
	file  string
	lines map[string]int
	errs  Errors
	// hash hashes the file and the tuning tables it reads.
	hash hash.Hash
	seed uint64
	// networkOK is set once [network] parsed; random says whether its
	// model draws random numbers.
	networkOK, random bool
	// faultList are the [[fault]] tables, read before [network];
	// faultRandom says whether any draws random numbers, faultsOK
	// whether all were good.
	faultList             []sim.Fault
	faultRandom, faultsOK bool
	// shrink is the [[fault]] of kind rank_failure with recovery =
	// "shrink", kept out of faultList: it belongs to the sweeps.
	shrink    *sim.ShrinkFailure
	shrinkKey string
	// join is the [[fault]] of kind rank_join, also the sweeps'.
	join    *sim.RankJoin
	joinKey string
	// defaultTuning is the scenario's tuning table, for sweeps without
	// their own.
	defaultTuning     *algos.Tuning
	defaultTuningFile string
	// paths is [network.transport], read before the model (nil if the
	// file has none or it is bad): the realnet model runs on it.
	paths *Transport
	// net is the [network], once read; policies are built for it, once
	// each (policies), and defaultPolicy is the top-level policy key's,
	// defaultPolicyOK whether it could be built.
	net             *Network
	policies        map[string]algos.Policy
	defaultPolicy   string
	defaultPolicyOK bool
	// worldsOK are the world sizes the network was checked for.
	worldsOK map[int]bool
	// synthTopo is what a sweep's synth_tree packs its trees on (the
	// flow model's topology less the links failed from the start), nil
	// with synthWhy saying why there is none; synth is its synthesizer,
	// made at the first sweep that names synth_tree.
	synthTopo sim.TopologySpec
	synthWhy  string
	synth     *synth.Synth
}

// errorf records a problem with the key at path, on its line.
func (c *checker) errorf(path, format string, args ...any) {
	c.errs = append(c.errs, &Error{File: c.file, Line: lineOf(c.lines, path), Key: path, Msg: fmt.Sprintf(format, args...)})
}

// table reads the keys of one TOML table, reporting every problem to its
// checker, and remembers which keys it was asked for so that finish can
// report the others as unknown.
type table struct {
	c    *checker
	path string // "" for the top level
	m    map[string]any
	// what names the table in messages: "the top level", "[network]".
	what  string
	known []string
	// preset marks the keys that a preset set (see Preset): finish does
	// not report them if nothing read them.
	preset map[string]bool
}

func (t *table) errorf(path, format string, args ...any) { t.c.errorf(path, format, args...) }

// get returns the value of key, and its path.
func (t *table) get(key string) (any, string, bool) {
	t.known = append(t.known, key)
	v, ok := t.m[key]
	return v, joinPath(t.path, key), ok
}

// missing reports a required key that is absent: on the table's header
// line, or line 1 at the top level.
func (t *table) missing(key, want string) {
	line := lineOf(t.c.lines, t.path)
	if line == 0 {
		line = 1
	}
	t.c.errs = append(t.c.errs, &Error{File: t.c.file, Line: line, Key: joinPath(t.path, key),
		Msg: fmt.Sprintf("missing required key in %s (want %s)", t.what, want)})
}

// finish reports the keys of the table that nothing asked for.
func (t *table) finish() {
	var unknown []string
	for k := range t.m {
		if !contains(t.known, k) && !t.preset[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		msg := fmt.Sprintf("unknown key in %s", t.what)
		if s := suggest(k, t.known); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		t.errorf(joinPath(t.path, k), "%s (known keys: %s)", msg, strings.Join(t.known, ", "))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// suggest returns the candidate closest to s if it is close enough to be a
// likely typo.
func suggest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := textdist.Edit(strings.ToLower(s), c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// typeName names the TOML type of a decoded value.
func typeName(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case int64:
		return fmt.Sprintf("the integer %d", v)
	case float64:
		return fmt.Sprintf("the float %g", v)
	case bool:
		return fmt.Sprintf("the boolean %t", v)
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	}
	return "a date or time"
}

// str reads a string; if the key is absent it returns def, or reports it
// missing when required.
func (t *table) str(key string, required bool, def, want string) (string, bool) {
	v, path, ok := t.get(key)
	if !ok {
		if required {
			t.missing(key, want)
			return "", false
		}
		return def, true
	}
	s, isStr := v.(string)
	if !isStr {
		t.errorf(path, "want %s, got %s", want, typeName(v))
		return "", false
	}
	return s, true
}

// boolean reads a boolean, def if absent.
func (t *table) boolean(key string, def bool) (bool, bool) {
	v, path, ok := t.get(key)
	if !ok {
		return def, true
	}
	b, isBool := v.(bool)
	if !isBool {
		t.errorf(path, "want true or false, got %s", typeName(v))
		return false, false
	}
	return b, true
}

// integer reads a whole number in [lo, hi], def if absent.
func (t *table) integer(key string, def, lo, hi int64) (int64, bool) {
	v, path, ok := t.get(key)
	if !ok {
		return def, true
	}
	n, isInt := v.(int64)
	if !isInt {
		t.errorf(path, "want a whole number, got %s", typeName(v))
		return 0, false
	}
	if n < lo || n > hi {
		t.errorf(path, "%d is out of range (want %d to %d)", n, lo, hi)
		return 0, false
	}
	return n, true
}

// duration reads a duration string such as "5us".
func (t *table) duration(key string, required bool) (sim.Time, bool) {
	s, ok := t.str(key, required, "0", `a duration string such as "5us"`)
	if !ok {
		return 0, false
	}
	d, err := ParseDuration(s)
	if err != nil {
		t.errorf(joinPath(t.path, key), "%v", err)
		return 0, false
	}
	return d, true
}

// bandwidth reads a bandwidth string such as "12.5GB/s", def if absent and
// not required.
func (t *table) bandwidth(key string, required bool, def float64) (float64, bool) {
	if _, ok := t.m[key]; !ok && !required {
		t.known = append(t.known, key)
		return def, true
	}
	s, ok := t.str(key, required, "", `a bandwidth string such as "12.5GB/s"`)
	if !ok {
		return 0, false
	}
	bw, err := ParseBandwidth(s)
	if err != nil {
		t.errorf(joinPath(t.path, key), "%v", err)
		return 0, false
	}
	return bw, true
}

// subtable reads a table.
func (t *table) subtable(key string, required bool, what, want string) *table {
	v, path, ok := t.get(key)
	if !ok {
		if required {
			t.missing(key, want)
		}
		return nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		t.errorf(path, "want %s, got %s", want, typeName(v))
		return nil
	}
	return &table{c: t.c, path: path, m: m, what: what}
}

// list reads a list of values: an array, or a single value standing for a
// list of one. elem returns the values each element stands for (a range
// stands for several). list returns the values of the good elements, and
// whether every element was good.
func (t *table) list(key string, want string, elem func(path string, v any) ([]int64, error)) ([]int64, bool) {
	v, path, ok := t.get(key)
	if !ok {
		t.missing(key, want)
		return nil, false
	}
	arr, isArr := v.([]any)
	if !isArr {
		arr = []any{v}
	}
	if len(arr) == 0 {
		t.errorf(path, "empty list (want %s)", want)
		return nil, false
	}
	var out []int64
	good := true
	for i, x := range arr {
		vals, err := elem(path, x)
		if err != nil {
			if isArr {
				t.errorf(path, "element %d: %v", i+1, err)
			} else {
				t.errorf(path, "%v", err)
			}
			good = false
			continue
		}
		out = append(out, vals...)
	}
	if good && len(out) > MaxRangeValues {
		t.errorf(path, "%d values is too many (at most %d)", len(out), MaxRangeValues)
		good = false
	}
	return out, good
}

// sizeElem reads one element of a list of sizes: a whole number of bytes,
// a size string, or a range string.
func sizeElem(_ string, v any) ([]int64, error) {
	switch v := v.(type) {
	case int64:
		if v < 0 {
			return nil, fmt.Errorf("size %d is negative", v)
		}
		if v > MaxBytes {
			return nil, fmt.Errorf("size %d is too large (at most %d bytes, 1PiB)", v, int64(MaxBytes))
		}
		return []int64{v}, nil
	case float64:
		if v < 0 || v != math.Trunc(v) || v > MaxBytes {
			return nil, fmt.Errorf("size %g is not a whole number of bytes from 0 to 1PiB", v)
		}
		return []int64{int64(v)}, nil
	case string:
		return ParseByteRange(v)
	}
	return nil, fmt.Errorf(`want a size (1024, "8MiB") or a range ("1KiB..1GiB x2"), got %s`, typeName(v))
}

// MaxWorld is the largest world size a scenario may name: 2^24 ranks,
// which an alpha-beta replay with phantom data holds in about 14 GiB;
// whether a point fits this machine is validate's estimate's to say.
const MaxWorld = 1 << 24

// worldElem reads one element of a list of world sizes: a whole number or
// a range string.
func worldElem(_ string, v any) ([]int64, error) {
	var vals []int64
	switch v := v.(type) {
	case int64:
		vals = []int64{v}
	case string:
		var err error
		if vals, err = ParseIntRange(v); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf(`want a world size (8) or a range ("2..64 x2"), got %s`, typeName(v))
	}
	for _, w := range vals {
		if w < 1 || w > MaxWorld {
			return nil, fmt.Errorf("world size %d is out of range (want 1 to %d ranks)", w, MaxWorld)
		}
	}
	return vals, nil
}

// optStringList reads an optional list of strings (or a single string),
// [def] if absent.
func (t *table) optStringList(key, def, want string) ([]string, bool) {
	if _, ok := t.m[key]; !ok {
		t.known = append(t.known, key)
		return []string{def}, true
	}
	return t.stringList(key, want)
}

// stringList reads a list of strings (or a single string).
func (t *table) stringList(key, want string) ([]string, bool) {
	v, path, ok := t.get(key)
	if !ok {
		t.missing(key, want)
		return nil, false
	}
	if s, isStr := v.(string); isStr {
		return []string{s}, true
	}
	arr, isArr := v.([]any)
	if !isArr {
		t.errorf(path, "want %s, got %s", want, typeName(v))
		return nil, false
	}
	if len(arr) == 0 {
		t.errorf(path, "empty list (want %s)", want)
		return nil, false
	}
	out := make([]string, 0, len(arr))
	good := true
	for i, x := range arr {
		s, isStr := x.(string)
		if !isStr {
			t.errorf(path, "element %d: want a string, got %s", i+1, typeName(x))
			good = false
			continue
		}
		out = append(out, s)
	}
	return out, good
}

// requiredInt reads a required whole number in [lo, hi].
func (t *table) requiredInt(key string, lo, hi int64, want string) (int64, bool) {
	if _, ok := t.m[key]; !ok {
		t.known = append(t.known, key)
		t.missing(key, want)
		return 0, false
	}
	return t.integer(key, 0, lo, hi)
}

// float reads a number (whole or not) in [lo, hi], def if absent.
func (t *table) float(key string, def, lo, hi float64) (float64, bool) {
	v, path, ok := t.get(key)
	if !ok {
		return def, true
	}
	var f float64
	switch v := v.(type) {
	case int64:
		f = float64(v)
	case float64:
		f = v
	default:
		t.errorf(path, "want a number, got %s", typeName(v))
		return 0, false
	}
	if !(f >= lo && f <= hi) {
		t.errorf(path, "%g is out of range (want %g to %g)", f, lo, hi)
		return 0, false
	}
	return f, true
}

// link reads the bandwidth and latency of a link: "<name>_bandwidth" and
// "<name>_latency". A link that is not required may leave out its
// bandwidth, which is then 0 (unlimited, or a default the topology
// documents).
func (t *table) link(name string, required bool) (sim.LinkParams, bool) {
	bw, ok1 := t.bandwidth(name+"_bandwidth", required, 0)
	lat, ok2 := t.duration(name+"_latency", false)
	return sim.LinkParams{Bandwidth: bw, Latency: lat}, ok1 && ok2
}

// routing reads a routing policy, ECMP if absent.
func (t *table) routing(key string) (sim.Routing, bool) {
	s, ok := t.str(key, false, "ecmp", `"ecmp" or "dmodk"`)
	if !ok {
		return 0, false
	}
	r, err := sim.ParseRouting(s)
	if err != nil {
		t.errorf(joinPath(t.path, key), "%v", err)
		return 0, false
	}
	return r, true
}
