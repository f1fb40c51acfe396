package algos

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// A Tuning table is what the "auto" algorithms consult to pick an algorithm
// and its parameters for a collective from the world size and the message
// size: nexar's built-in rule is one (DefaultTuning), nexar-sim derives
// others from simulated crossovers and writes them in the same format, and
// nexar-live checks them on hardware.
//
// The TOML format, version 1 (tuning_nexar.toml is an example):
//
//	version = 1                   # required
//	description = "..."           # optional, free text
//	source = "..."                # optional: what produced the table
//
//	# Per-world crossovers, tried first, in order: the first entry whose
//	# world range holds the world size is used, and in it the last step
//	# whose from_bytes is at most the message size.
//	[[collective.allreduce.crossover]]
//	world = 16                    # or min_world = 9 / max_world = 16
//	[[collective.allreduce.crossover.step]]
//	from_bytes = 0                # ascending; the first must be 0
//	algorithm = "recursive_doubling"
//	[[collective.allreduce.crossover.step]]
//	from_bytes = 65536
//	algorithm = "halving_doubling"
//
//	# Rules, tried next, in order: the first whose conditions all hold
//	# wins. Every condition is optional.
//	[[collective.allreduce.rule]]
//	algorithm = "pipelined_ring"
//	params = { segment = 2097152 }
//	min_bytes = 8388608           # message bytes >= min_bytes
//	max_bytes = 1073741824        # message bytes <= max_bytes
//	min_world = 2                 # world >= min_world
//	max_world = 64                # world <= max_world
//	count_below_world = false     # whether elements < world
//	world_power_of_two = false    # whether the world is a power of two
//
//	# Optional: realnet's transport (Thresholds). Absent, realnet keeps
//	# its default.
//	[transport]
//	bulk_threshold = 16384        # required in [transport]; see below
//	eager_threshold = 65536       # optional: realnet's eager TCP path on
//
// Message bytes are as nccl-tests counts them (the buffer for allreduce).
// Algorithms and parameters must exist in the catalogue; a table cannot
// select "auto". Selection fails if nothing matches, so a table meant for
// every case ends with a rule without conditions.
//
// bulk_threshold is the payload size in bytes from which a message takes
// realnet's bulk TCP path instead of its QUIC stream: a whole number of
// bytes, 0 or more, or the string "never" (every message on QUIC). 0 sends
// every message that has a payload on the bulk path; an empty message has
// nothing to move there and stays on QUIC, so 0 and 1 mean the same. The
// threshold is a crossover like the others: nexar-sim derives it from a
// scenario's [network.transport] description of the two paths.
//
// eager_threshold, optional, turns realnet's eager path on: a message of
// fewer bytes goes over TCP at once, header and payload together, a larger
// one by rendezvous (Thresholds.Eager); a whole number of
// bytes, 1 or more. nexar-sim derives it too, where [network.transport]
// gives the receiver's copy_bandwidth: the size at which the copy out of
// the receiver's buffer that an eager message may need costs more than the
// rendezvous round trip.
type Tuning struct {
	Description string
	Source      string
	// Transport is the [transport] table: realnet's thresholds; nil if
	// the table has none.
	Transport *Thresholds
	// Collectives are in ascending order of name, one per collective.
	Collectives []TuningCollective
	// Policy, if not nil, selects before the table (SelectFor): where it
	// makes a choice the crossovers and rules are not consulted. It is
	// not part of the file format (WriteTo leaves it out); a scenario's
	// policy key sets it.
	Policy Policy
}

// TuningCollective is the part of a Tuning table for one collective.
type TuningCollective struct {
	Name       string
	Crossovers []Crossover
	Rules      []Rule
}

// Crossover gives, for a range of world sizes, the message sizes at which
// the best algorithm changes: what nexar-sim derives.
type Crossover struct {
	// MinWorld and MaxWorld bound the world sizes it applies to,
	// inclusive; MaxWorld 0 is no upper bound.
	MinWorld, MaxWorld int
	// Steps are in strictly ascending FromBytes, the first from 0.
	Steps []Step
}

// Step is one algorithm of a Crossover, used from FromBytes up to the next
// step's FromBytes.
type Step struct {
	FromBytes int
	Algorithm string
	Params    map[string]int
}

// Rule picks Algorithm with Params when all of its conditions hold.
type Rule struct {
	Algorithm string
	Params    map[string]int
	// Bounds on the message size in bytes and the world size, inclusive;
	// a maximum of 0 is no upper bound.
	MinBytes, MaxBytes int
	MinWorld, MaxWorld int
	// If not nil, whether the buffer must have fewer elements than there
	// are ranks.
	CountBelowWorld *bool
	// If not nil, whether the world size must be a power of two.
	WorldPowerOfTwo *bool
}

// Choice is what a Tuning table selects.
type Choice struct {
	Algorithm string
	// Params are the parameters the table sets (the algorithm's defaults
	// apply to the others); nil if none.
	Params map[string]int
	// From names the entry that matched, for reports: "rule 2" or
	// "crossover 1 step 3" (counting from 1).
	From string
}

// TuningError is an error in a tuning table, with the file and line it is
// on (Line 0 when it cannot be told).
type TuningError struct {
	File string
	Line int
	Msg  string
}

func (e *TuningError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// TuningVersion is the version of the format this package reads and
// writes.
const TuningVersion = 1

//go:embed tuning_nexar.toml
var nexarTuning []byte

// DefaultTuning returns nexar's own selection rule, the table the "auto"
// algorithms use when a Call gives none: the pipelined ring from 8 MiB on
// (2 MiB segments), the ring on up to 8 ranks or when the buffer has fewer
// elements than ranks, halving-doubling otherwise. The table is shared:
// do not modify it.
func DefaultTuning() *Tuning { return defaultTuning() }

var defaultTuning = sync.OnceValue(func() *Tuning {
	t, err := ParseTuning("tuning_nexar.toml", nexarTuning)
	if err != nil {
		panic("algos: the built-in tuning table is invalid: " + err.Error())
	}
	return t
})

// LoadTuning reads and checks the tuning table in file path.
func LoadTuning(path string) (*Tuning, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseTuning(path, data)
}

// ParseTuning parses and checks a tuning table; file names it in errors,
// which are *TuningError.
func ParseTuning(file string, data []byte) (*Tuning, error) {
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &TuningError{File: file, Line: pe.Position.Line, Msg: pe.Message}
		}
		return nil, &TuningError{File: file, Msg: err.Error()}
	}
	p := &tuningParser{file: file, text: string(data)}
	t := p.tuning(raw)
	if p.err != nil {
		return nil, p.err
	}
	if err := t.check(p.fail); err != nil {
		return nil, err
	}
	return t, nil
}

// Validate checks a table built in code as ParseTuning checks a file.
func (t *Tuning) Validate() error {
	return t.check(func(path, format string, args ...any) error {
		return fmt.Errorf("tuning: %s: %s", path, fmt.Sprintf(format, args...))
	})
}

// Collective returns the part of t for the named collective, or nil.
func (t *Tuning) Collective(name string) *TuningCollective {
	for i := range t.Collectives {
		if t.Collectives[i].Name == name {
			return &t.Collectives[i]
		}
	}
	return nil
}

// Select returns the algorithm t picks for collective on world ranks with
// a message of bytes bytes and count elements: its Policy's choice if it
// has one and makes one (on an unknown machine: SelectFor with nil), else
// the first crossover whose world range holds world, else the first rule
// that matches.
func (t *Tuning) Select(collective string, world, bytes, count int) (Choice, error) {
	return t.SelectFor(nil, collective, world, bytes, count)
}

// selectTable is Select by the table alone.
func (t *Tuning) selectTable(collective string, world, bytes, count int) (Choice, error) {
	c := t.Collective(collective)
	if c == nil {
		return Choice{}, fmt.Errorf("tuning: no entry for %s", collective)
	}
	for i, x := range c.Crossovers {
		if world < x.MinWorld || (x.MaxWorld != 0 && world > x.MaxWorld) {
			continue
		}
		j := len(x.Steps) - 1
		for j > 0 && x.Steps[j].FromBytes > bytes {
			j--
		}
		s := x.Steps[j]
		return Choice{Algorithm: s.Algorithm, Params: s.Params, From: fmt.Sprintf("crossover %d step %d", i+1, j+1)}, nil
	}
	for i, r := range c.Rules {
		if r.matches(world, bytes, count) {
			return Choice{Algorithm: r.Algorithm, Params: r.Params, From: fmt.Sprintf("rule %d", i+1)}, nil
		}
	}
	return Choice{}, fmt.Errorf("tuning: no rule for %s on %d ranks with %d bytes (%d elements)", collective, world, bytes, count)
}

func (r *Rule) matches(world, bytes, count int) bool {
	return bytes >= r.MinBytes && (r.MaxBytes == 0 || bytes <= r.MaxBytes) &&
		world >= r.MinWorld && (r.MaxWorld == 0 || world <= r.MaxWorld) &&
		(r.CountBelowWorld == nil || *r.CountBelowWorld == (count < world)) &&
		(r.WorldPowerOfTwo == nil || *r.WorldPowerOfTwo == (world > 0 && world&(world-1) == 0))
}

// failFunc reports a problem at a path of the table ("collective.allreduce.
// rule[0].algorithm") as an error.
type failFunc func(path, format string, args ...any) error

// check validates what the TOML types cannot: that collectives, algorithms
// and parameters exist, and that bounds and steps make sense.
func (t *Tuning) check(fail failFunc) error {
	if t.Transport != nil && t.Transport.Bulk < 0 && t.Transport.Bulk != BulkNever {
		return fail("transport.bulk_threshold", "%d bytes: want 0 or more, or \"never\" (BulkNever)", t.Transport.Bulk)
	}
	if t.Transport != nil && t.Transport.Eager < 0 {
		return fail("transport.eager_threshold", "%d bytes: want 1 or more (or no eager_threshold: the eager path off)", t.Transport.Eager)
	}
	for i, c := range t.Collectives {
		cp := "collective." + tomlKey(c.Name)
		if i > 0 && t.Collectives[i-1].Name >= c.Name {
			return fail(cp, "collectives out of order or repeated")
		}
		coll, err := Lookup(c.Name)
		if err != nil {
			return fail(cp, "%v", err)
		}
		for j, x := range c.Crossovers {
			xp := fmt.Sprintf("%s.crossover[%d]", cp, j)
			if x.MinWorld < 1 || (x.MaxWorld != 0 && x.MaxWorld < x.MinWorld) {
				return fail(xp, "world range [%d, %d] is empty", x.MinWorld, x.MaxWorld)
			}
			if len(x.Steps) == 0 {
				return fail(xp, "a crossover needs at least one step")
			}
			for k, s := range x.Steps {
				sp := fmt.Sprintf("%s.step[%d]", xp, k)
				switch {
				case k == 0 && s.FromBytes != 0:
					return fail(sp+".from_bytes", "the first step must start from 0 bytes, not %d", s.FromBytes)
				case k > 0 && s.FromBytes <= x.Steps[k-1].FromBytes:
					return fail(sp+".from_bytes", "steps must be in strictly ascending from_bytes (%d after %d)", s.FromBytes, x.Steps[k-1].FromBytes)
				}
				if err := checkChoice(coll, sp, s.Algorithm, s.Params, fail); err != nil {
					return err
				}
			}
		}
		for j, r := range c.Rules {
			rp := fmt.Sprintf("%s.rule[%d]", cp, j)
			switch {
			case r.MinBytes < 0 || r.MaxBytes < 0 || r.MinWorld < 0 || r.MaxWorld < 0:
				return fail(rp, "bounds must not be negative")
			case r.MaxBytes != 0 && r.MaxBytes < r.MinBytes:
				return fail(rp+".max_bytes", "max_bytes %d is below min_bytes %d: the rule never matches", r.MaxBytes, r.MinBytes)
			case r.MaxWorld != 0 && r.MaxWorld < r.MinWorld:
				return fail(rp+".max_world", "max_world %d is below min_world %d: the rule never matches", r.MaxWorld, r.MinWorld)
			}
			if err := checkChoice(coll, rp, r.Algorithm, r.Params, fail); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkChoice checks that coll has the algorithm and its parameters.
func checkChoice(coll *Collective, path, algorithm string, params map[string]int, fail failFunc) error {
	if algorithm == "" {
		return fail(path, "no algorithm")
	}
	if algorithm == "auto" {
		return fail(path+".algorithm", "a tuning table cannot select %q, the dispatcher itself", algorithm)
	}
	a, err := coll.Algorithm(algorithm)
	if err != nil {
		return fail(path+".algorithm", "%v", err)
	}
	if a.Lossy() {
		return fail(path+".algorithm", "%s %s is lossy (compressed): a tuning table picks among exact algorithms, and a caller asks for compression itself", coll.Name, a.Name)
	}
	for _, name := range sortedKeys(params) {
		if _, ok := a.Params[name]; !ok {
			have := "none"
			if len(a.Params) > 0 {
				have = strings.Join(sortedKeys(a.Params), ", ")
			}
			return fail(path+".params", "%s %s has no parameter %q (it has %s)", coll.Name, algorithm, name, have)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// tuningParser turns the generic TOML tree into a Tuning, checking types
// and keys, and reports the first problem with its line.
type tuningParser struct {
	file, text string
	lines      map[string]int // built on the first error
	err        error
}

// fail records the first error, at the line of path.
func (p *tuningParser) fail(path, format string, args ...any) error {
	if p.err == nil {
		if p.lines == nil {
			p.lines = tomlKeyLines(p.text)
		}
		msg := fmt.Sprintf(format, args...)
		p.err = &TuningError{File: p.file, Line: lineOfPath(p.lines, path), Msg: path + ": " + msg}
	}
	return p.err
}

func (p *tuningParser) tuning(raw map[string]any) *Tuning {
	t := &Tuning{}
	p.keys("", raw, "version", "description", "source", "transport", "collective")
	switch v, ok := raw["version"]; {
	case !ok:
		p.fail("version", "no version (this reader knows version %d)", TuningVersion)
	case v != int64(TuningVersion):
		p.fail("version", "version %v, this reader knows version %d", v, TuningVersion)
	}
	t.Description = p.str("description", raw["description"])
	t.Source = p.str("source", raw["source"])
	if v, ok := raw["transport"]; ok {
		t.Transport = p.transport("transport", v)
	}
	colls := p.table("collective", raw["collective"])
	for _, name := range sortedKeys(colls) {
		cp := "collective." + tomlKey(name)
		craw := p.table(cp, colls[name])
		p.keys(cp, craw, "crossover", "rule")
		c := TuningCollective{Name: name}
		for i, xraw := range p.tables(cp+".crossover", craw["crossover"]) {
			c.Crossovers = append(c.Crossovers, p.crossover(fmt.Sprintf("%s.crossover[%d]", cp, i), xraw))
		}
		for i, rraw := range p.tables(cp+".rule", craw["rule"]) {
			c.Rules = append(c.Rules, p.rule(fmt.Sprintf("%s.rule[%d]", cp, i), rraw))
		}
		t.Collectives = append(t.Collectives, c)
	}
	return t
}

// transport reads the [transport] table; it is nil only after an error.
func (p *tuningParser) transport(path string, v any) *Thresholds {
	raw, ok := v.(map[string]any)
	if !ok {
		p.table(path, v) // reports the type
		return nil
	}
	p.keys(path, raw, "bulk_threshold", "eager_threshold")
	bt, ok := raw["bulk_threshold"]
	if !ok {
		p.fail(path, "no bulk_threshold (bytes, or \"never\"); leave [transport] out for realnet's default")
		return nil
	}
	tt := &Thresholds{}
	if et, ok := raw["eager_threshold"]; ok {
		tt.Eager = p.count(path+".eager_threshold", et, 1)
	}
	if s, isStr := bt.(string); isStr {
		if s != "never" {
			p.fail(path+".bulk_threshold", "want a whole number of bytes or \"never\", not %q", s)
		}
		tt.Bulk = BulkNever
		return tt
	}
	tt.Bulk = p.count(path+".bulk_threshold", bt, 0)
	return tt
}

func (p *tuningParser) crossover(path string, raw map[string]any) Crossover {
	p.keys(path, raw, "world", "min_world", "max_world", "step")
	var x Crossover
	if _, ok := raw["world"]; ok {
		if _, ok := raw["min_world"]; ok {
			p.fail(path+".min_world", "give world or min_world/max_world, not both")
		}
		if _, ok := raw["max_world"]; ok {
			p.fail(path+".max_world", "give world or min_world/max_world, not both")
		}
		x.MinWorld = p.count(path+".world", raw["world"], 1)
		x.MaxWorld = x.MinWorld
	} else {
		_, hasMin := raw["min_world"]
		_, hasMax := raw["max_world"]
		if !hasMin && !hasMax {
			p.fail(path, "a crossover needs world, or min_world and/or max_world")
		}
		x.MinWorld = 1
		if hasMin {
			x.MinWorld = p.count(path+".min_world", raw["min_world"], 1)
		}
		if hasMax {
			x.MaxWorld = p.count(path+".max_world", raw["max_world"], 1)
		}
	}
	for i, sraw := range p.tables(path+".step", raw["step"]) {
		sp := fmt.Sprintf("%s.step[%d]", path, i)
		p.keys(sp, sraw, "from_bytes", "algorithm", "params")
		if _, ok := sraw["from_bytes"]; !ok {
			p.fail(sp, "no from_bytes")
		}
		x.Steps = append(x.Steps, Step{
			FromBytes: p.count(sp+".from_bytes", sraw["from_bytes"], 0),
			Algorithm: p.str(sp+".algorithm", sraw["algorithm"]),
			Params:    p.params(sp+".params", sraw["params"]),
		})
	}
	return x
}

func (p *tuningParser) rule(path string, raw map[string]any) Rule {
	p.keys(path, raw, "algorithm", "params", "min_bytes", "max_bytes", "min_world", "max_world", "count_below_world", "world_power_of_two")
	return Rule{
		Algorithm:       p.str(path+".algorithm", raw["algorithm"]),
		Params:          p.params(path+".params", raw["params"]),
		MinBytes:        p.count(path+".min_bytes", raw["min_bytes"], 0),
		MaxBytes:        p.count(path+".max_bytes", raw["max_bytes"], 1),
		MinWorld:        p.count(path+".min_world", raw["min_world"], 0),
		MaxWorld:        p.count(path+".max_world", raw["max_world"], 1),
		CountBelowWorld: p.boolean(path+".count_below_world", raw["count_below_world"]),
		WorldPowerOfTwo: p.boolean(path+".world_power_of_two", raw["world_power_of_two"]),
	}
}

// keys fails on a key of raw not in known (a typo would otherwise go
// unnoticed and change what the table selects).
func (p *tuningParser) keys(path string, raw map[string]any, known ...string) {
	for _, k := range sortedKeys(raw) {
		if !slices.Contains(known, k) {
			p.fail(joinTOMLPath(path, tomlKey(k)), "unknown key %q (want one of %s)", k, strings.Join(known, ", "))
		}
	}
}

func (p *tuningParser) str(path string, v any) string {
	if v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		p.fail(path, "want a string, not %s", tomlTypeName(v))
	}
	return s
}

// count reads a non-negative integer of at least least; absent is 0.
func (p *tuningParser) count(path string, v any, least int) int {
	if v == nil {
		return 0
	}
	n, ok := v.(int64)
	switch {
	case !ok:
		p.fail(path, "want an integer, not %s", tomlTypeName(v))
	case n < int64(least):
		p.fail(path, "%d is below %d", n, least)
	case n > math.MaxInt:
		p.fail(path, "%d is too large", n)
	default:
		return int(n)
	}
	return 0
}

func (p *tuningParser) boolean(path string, v any) *bool {
	if v == nil {
		return nil
	}
	b, ok := v.(bool)
	if !ok {
		p.fail(path, "want true or false, not %s", tomlTypeName(v))
		return nil
	}
	return &b
}

func (p *tuningParser) params(path string, v any) map[string]int {
	raw := p.table(path, v)
	if len(raw) == 0 {
		return nil
	}
	out := make(map[string]int, len(raw))
	for _, k := range sortedKeys(raw) {
		n, ok := raw[k].(int64)
		if !ok {
			p.fail(joinTOMLPath(path, tomlKey(k)), "parameters are integers, not %s", tomlTypeName(raw[k]))
			continue
		}
		if n < math.MinInt || n > math.MaxInt {
			p.fail(joinTOMLPath(path, tomlKey(k)), "%d is out of range", n)
			continue
		}
		out[k] = int(n)
	}
	return out
}

func (p *tuningParser) table(path string, v any) map[string]any {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.fail(path, "want a table, not %s", tomlTypeName(v))
	}
	return m
}

// tables reads an array of tables, written [[path]] or path = [{...}].
func (p *tuningParser) tables(path string, v any) []map[string]any {
	switch a := v.(type) {
	case nil:
		return nil
	case []map[string]any:
		return a
	case []any:
		out := make([]map[string]any, 0, len(a))
		for i, e := range a {
			m, ok := e.(map[string]any)
			if !ok {
				p.fail(fmt.Sprintf("%s[%d]", path, i), "want a table, not %s", tomlTypeName(e))
				return nil
			}
			out = append(out, m)
		}
		return out
	}
	p.fail(path, "want an array of tables ([[%s]]), not %s", path, tomlTypeName(v))
	return nil
}

func tomlTypeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case map[string]any:
		return "a table"
	case []any, []map[string]any:
		return "an array"
	}
	return fmt.Sprintf("a %T", v)
}

// WriteTo writes t in the TOML format ParseTuning reads, deterministically
// (the same table gives the same bytes), and implements io.WriterTo.
func (t *Tuning) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# nexar-go tuning table (see algos.Tuning for the format).\n")
	fmt.Fprintf(&b, "version = %d\n", TuningVersion)
	if t.Description != "" {
		fmt.Fprintf(&b, "description = %s\n", tomlString(t.Description))
	}
	if t.Source != "" {
		fmt.Fprintf(&b, "source = %s\n", tomlString(t.Source))
	}
	if tt := t.Transport; tt != nil {
		fmt.Fprintf(&b, "\n[transport]\n")
		if tt.Bulk == BulkNever {
			fmt.Fprintf(&b, "bulk_threshold = \"never\"\n")
		} else {
			fmt.Fprintf(&b, "bulk_threshold = %d\n", tt.Bulk)
		}
		if tt.Eager > 0 {
			fmt.Fprintf(&b, "eager_threshold = %d\n", tt.Eager)
		}
	}
	for _, c := range t.Collectives {
		cp := "collective." + tomlKey(c.Name)
		if len(c.Crossovers) == 0 && len(c.Rules) == 0 {
			// An entry without choices still says the table covers
			// the collective (and selects nothing for it).
			fmt.Fprintf(&b, "\n[%s]\n", cp)
		}
		for _, x := range c.Crossovers {
			fmt.Fprintf(&b, "\n[[%s.crossover]]\n", cp)
			if x.MinWorld == x.MaxWorld {
				fmt.Fprintf(&b, "world = %d\n", x.MinWorld)
			} else {
				fmt.Fprintf(&b, "min_world = %d\n", x.MinWorld)
				if x.MaxWorld != 0 {
					fmt.Fprintf(&b, "max_world = %d\n", x.MaxWorld)
				}
			}
			for _, s := range x.Steps {
				fmt.Fprintf(&b, "[[%s.crossover.step]]\n", cp)
				fmt.Fprintf(&b, "from_bytes = %d\n", s.FromBytes)
				writeChoice(&b, s.Algorithm, s.Params)
			}
		}
		for _, r := range c.Rules {
			fmt.Fprintf(&b, "\n[[%s.rule]]\n", cp)
			writeChoice(&b, r.Algorithm, r.Params)
			for _, f := range []struct {
				name string
				v    int
			}{{"min_bytes", r.MinBytes}, {"max_bytes", r.MaxBytes}, {"min_world", r.MinWorld}, {"max_world", r.MaxWorld}} {
				if f.v != 0 {
					fmt.Fprintf(&b, "%s = %d\n", f.name, f.v)
				}
			}
			if r.CountBelowWorld != nil {
				fmt.Fprintf(&b, "count_below_world = %t\n", *r.CountBelowWorld)
			}
			if r.WorldPowerOfTwo != nil {
				fmt.Fprintf(&b, "world_power_of_two = %t\n", *r.WorldPowerOfTwo)
			}
		}
	}
	n, err := w.Write(b.Bytes())
	return int64(n), err
}

func writeChoice(b *bytes.Buffer, algorithm string, params map[string]int) {
	fmt.Fprintf(b, "algorithm = %s\n", tomlString(algorithm))
	if len(params) == 0 {
		return
	}
	parts := make([]string, 0, len(params))
	for _, k := range sortedKeys(params) {
		parts = append(parts, fmt.Sprintf("%s = %d", tomlKey(k), params[k]))
	}
	fmt.Fprintf(b, "params = { %s }\n", strings.Join(parts, ", "))
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlKey writes a key bare if it can be, quoted otherwise.
func tomlKey(k string) string {
	if k == "" {
		return `""`
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return tomlString(k)
		}
	}
	return k
}

func joinTOMLPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// BurntSushi/toml knows where each key is but does not say, so errors find
// their line with this scanner. It only runs on text the parser accepted,
// so it can be lenient: it reads table headers ([a.b], [[a.b]]) and the key
// of each "key = value" line, and skips the inside of multi-line arrays,
// inline tables and strings.

// tomlKeyLines returns the line of each table header and key by path, as
// "collective.allreduce.rule[1].algorithm", with arrays of tables indexed
// in order of appearance. A table that is only implied by a header below it
// gets the line of its first such header.
func tomlKeyLines(text string) map[string]int {
	lines := map[string]int{}
	arrays := map[string]int{} // path of an array of tables -> elements so far
	set := func(path string, n int) {
		if _, ok := lines[path]; !ok {
			lines[path] = n
		}
	}
	// resolve returns the path of key parts from the top, each array of
	// tables replaced by its latest element, recording each prefix.
	resolve := func(parts []string, n int) string {
		path := ""
		for _, part := range parts {
			path = joinTOMLPath(path, tomlKey(part))
			if k, ok := arrays[path]; ok && k > 0 {
				path += "[" + strconv.Itoa(k-1) + "]"
			}
			set(path, n)
		}
		return path
	}
	cur := ""
	depth, open := 0, ""
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		if depth > 0 || open != "" {
			depth, open = scanTOMLValue(line, depth, open)
			continue
		}
		s := strings.TrimSpace(line)
		switch {
		case s == "" || s[0] == '#':
		case strings.HasPrefix(s, "[["):
			end := strings.Index(s, "]]")
			if end < 2 {
				continue
			}
			parts := splitTOMLKey(s[2:end])
			if len(parts) == 0 {
				continue
			}
			parent := resolve(parts[:len(parts)-1], n)
			array := joinTOMLPath(parent, tomlKey(parts[len(parts)-1]))
			set(array, n)
			cur = array + "[" + strconv.Itoa(arrays[array]) + "]"
			arrays[array]++
			set(cur, n)
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if end < 1 {
				continue
			}
			cur = resolve(splitTOMLKey(s[1:end]), n)
		default:
			eq := indexOutsideQuotes(s, '=')
			if eq < 0 {
				continue
			}
			path := cur
			for _, part := range splitTOMLKey(s[:eq]) {
				path = joinTOMLPath(path, tomlKey(part))
				set(path, n)
			}
			depth, open = scanTOMLValue(s[eq+1:], 0, "")
		}
	}
	return lines
}

// lineOfPath returns the line of path, or of the nearest enclosing table
// or key that has one, or 0.
func lineOfPath(lines map[string]int, path string) int {
	for path != "" {
		if n, ok := lines[path]; ok {
			return n
		}
		switch i := strings.LastIndexAny(path, ".["); {
		case i < 0:
			path = ""
		default:
			path = path[:i]
		}
	}
	return 0
}

// splitTOMLKey splits a dotted key into its parts, unquoted (leniently).
func splitTOMLKey(s string) []string {
	var parts []string
	for {
		dot := indexOutsideQuotes(s, '.')
		part := s
		if dot >= 0 {
			part = s[:dot]
		}
		part = strings.TrimSpace(part)
		if len(part) >= 2 && (part[0] == '"' || part[0] == '\'') && part[len(part)-1] == part[0] {
			if part[0] == '"' {
				if u, err := strconv.Unquote(part); err == nil {
					part = u
				} else {
					part = part[1 : len(part)-1]
				}
			} else {
				part = part[1 : len(part)-1]
			}
		}
		parts = append(parts, part)
		if dot < 0 {
			return parts
		}
		s = s[dot+1:]
	}
}

// indexOutsideQuotes returns the index of the first c in s that is not in
// a quoted string, or -1.
func indexOutsideQuotes(s string, c byte) int {
	var quote byte
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case quote != 0:
			if ch == '\\' && quote == '"' {
				i++
			} else if ch == quote {
				quote = 0
			}
		case ch == '"' || ch == '\'':
			quote = ch
		case ch == c:
			return i
		}
	}
	return -1
}

// scanTOMLValue follows a value over a line: depth counts the brackets and
// braces left open, open is the delimiter of a multi-line string left open.
func scanTOMLValue(s string, depth int, open string) (int, string) {
	for i := 0; i < len(s); i++ {
		if open != "" {
			j := strings.Index(s[i:], open)
			if j < 0 {
				return depth, open
			}
			i += j + len(open) - 1
			open = ""
			continue
		}
		switch ch := s[i]; ch {
		case '#':
			return depth, ""
		case '[', '{':
			depth++
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case '"', '\'':
			if strings.HasPrefix(s[i:], strings.Repeat(string(ch), 3)) {
				open = strings.Repeat(string(ch), 3)
				i += 2
				continue
			}
			for i++; i < len(s) && s[i] != ch; i++ {
				if ch == '"' && s[i] == '\\' {
					i++
				}
			}
		}
	}
	return depth, open
}
