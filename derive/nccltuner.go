package derive

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nexar-go/nexar-go/algos/nccl/tuner"
)

// NCCLTunerFile is the name of the file NCCL's example tuner plugin
// reads by default, which nexar-sim writes beside tuning.toml.
const NCCLTunerFile = "nccl_tuner.conf"

// ncclRules returns the collective's rules of nccl_tuner.conf: for each
// swept world, the fastest of NCCL's algorithms (the catalogue's nccl_*
// variants) at each swept size, switching at their crossovers as the
// steps of tuning.toml do, on the world's nodes and ranks; then, for any
// other world, the size rules of the largest world swept. (One algorithm
// at every size for the worlds left, as tuning.toml's fallback, would
// force a tree over LL on a gigabyte; the largest world's crossovers are
// the nearest a sweep says of a cluster larger than it ran.) It returns no
// rules, and a note, where fewer than two of NCCL's variants ran.
func (d *collectiveData) ncclRules(opt Options) ([]tuner.Rule, []string) {
	coll, ok := tuner.CollOf(d.name)
	if !ok {
		return nil, nil
	}
	var vars []*variant
	for _, v := range d.variants {
		if _, _, ok := tuner.ParseCatalogueName(v.base); ok {
			vars = append(vars, v)
		}
	}
	switch {
	case len(vars) == 0:
		return nil, nil
	case len(vars) == 1:
		return nil, []string{fmt.Sprintf("%s: only one of NCCL's algorithms (%s) ran, so %s has nothing to choose", d.name, vars[0].name, NCCLTunerFile)}
	}
	var notes []string
	// The channels a variant ran on: its parameter, else the machine's,
	// else 1 (algos/nccl's default).
	channels := func(v *variant) int {
		if c := v.params["channels"]; c > 0 {
			return c
		}
		return max(opt.Channels, 1)
	}
	rule := func(v *variant, from int, world int) tuner.Rule {
		a, p, _ := tuner.ParseCatalogueName(v.base)
		r := tuner.Rule{Coll: coll, MinBytes: uint64(from), MaxBytes: tuner.AnySize, Algo: a, Proto: p, Channels: channels(v),
			Nodes: -1, Ranks: -1, PipeOps: -1, RegBuff: -1}
		if world > 0 {
			r.Ranks = world
			if opt.Nodes != nil {
				r.Nodes = opt.Nodes(world)
			}
		}
		return r
	}
	var rules []tuner.Rule
	var ruleVars []*variant  // the variant of each rule
	var largest []tuner.Rule // the rules of the largest world with any
	for _, w := range d.worlds {
		sizes := d.sizes(w)
		var prev *variant
		first := len(rules)
		allowed, left := d.ncclAllowed(opt, coll, w, vars)
		if len(left) > 0 {
			notes = append(notes, fmt.Sprintf("%s on %d ranks: %s left out of %s, as NCCL does not run that there (the example plugin would skip such rules)",
				d.name, w, strings.Join(left, ", "), NCCLTunerFile))
		}
		for i, s := range sizes {
			win := winnerAmong(d.times[w][s], allowed)
			if win == nil {
				continue
			}
			if prev == win {
				continue
			}
			from := 0
			if prev != nil {
				from = d.stepStart(w, sizes[i-1], s, prev, win)
				rules[len(rules)-1].MaxBytes = uint64(from - 1)
			}
			rules = append(rules, rule(win, from, w))
			ruleVars = append(ruleVars, win)
			prev = win
		}
		if opt.Policy != nil {
			notes = append(notes, d.ncclDefaultNotes(opt.Policy, coll, w, rules[first:], ruleVars[first:], vars)...)
		}
		if len(rules) > first && (largest == nil || w > largest[0].Ranks) {
			largest = rules[first:]
		}
	}
	for _, r := range largest {
		r.Nodes, r.Ranks = -1, -1
		rules = append(rules, r)
	}
	if opt.Channels <= 0 {
		for _, v := range vars {
			if v.params["channels"] <= 0 {
				notes = append(notes, fmt.Sprintf("%s: %s ran on one channel, as the machine gives no channel count, and its lines in %s say so; set the machine's channels (what NCCL runs on the cluster) or sweep channels", d.name, v.name, NCCLTunerFile))
				break
			}
		}
	}
	return rules, notes
}

// ncclAllowed returns the variants of vars that NCCL can run on world w,
// by its model of the scenario's cluster (Options.Policy: NVLS tree not on
// one node, NVLS not across nodes without CollNet, PAT only with one GPU
// a node, ...), and the names of the others; all of them without a
// policy.
func (d *collectiveData) ncclAllowed(opt Options, coll tuner.Coll, w int, vars []*variant) ([]*variant, []string) {
	if opt.Policy == nil {
		return vars, nil
	}
	nodes := -1
	if opt.Nodes != nil {
		nodes = opt.Nodes(w)
	}
	if nodes < 1 {
		g := max(opt.Policy.Cluster().GPUsPerNode, 1)
		nodes = (w + g - 1) / g
	}
	m, err := opt.Policy.Model(w, nodes, 0)
	if err != nil {
		return vars, nil
	}
	costs := m.Costs(tuner.Call{Coll: coll, Bytes: 1 << 20})
	var ok []*variant
	var left []string
	for _, v := range vars {
		a, p, _ := tuner.ParseCatalogueName(v.base)
		if costs[a][p] >= 0 {
			ok = append(ok, v)
		} else {
			left = append(left, v.name)
		}
	}
	return ok, left
}

// winnerAmong is winner among vars alone.
func winnerAmong(times map[string]float64, vars []*variant) *variant {
	var best *variant
	for _, v := range vars {
		if t, ok := times[v.name]; ok && (best == nil || t < times[best.name]) {
			best = v
		}
	}
	if best == nil {
		return nil
	}
	limit := times[best.name] * (1 + TieTolerance)
	for _, v := range vars {
		if t, ok := times[v.name]; ok && t <= limit && v.name < best.name {
			best = v
		}
	}
	return best
}

// ncclDefaultNotes compares the rules of world w with what NCCL picks by
// itself (the policy's model): at each swept size where they differ, the
// simulated time of the rule's algorithm against that of NCCL's pick,
// where the sweep ran it.
func (d *collectiveData) ncclDefaultNotes(p *tuner.Policy, coll tuner.Coll, w int, rules []tuner.Rule, ruleVars, vars []*variant) []string {
	nodes := -1
	if len(rules) > 0 {
		nodes = rules[0].Nodes
	}
	if nodes < 1 {
		cl := p.Cluster()
		nodes = (w + cl.GPUsPerNode - 1) / max(cl.GPUsPerNode, 1)
	}
	m, err := p.Model(w, nodes, 0)
	if err != nil {
		return []string{fmt.Sprintf("%s on %d ranks: NCCL's own choice cannot be modelled: %v", d.name, w, err)}
	}
	var out []string
	for i, r := range rules {
		var differ []string
		for _, s := range d.sizes(w) {
			if uint64(s) < r.MinBytes || uint64(s) > r.MaxBytes {
				continue
			}
			ch, err := m.Choose(tuner.Call{Coll: coll, Bytes: s})
			if err != nil || (ch.Algo == r.Algo && ch.Proto == r.Proto) {
				continue
			}
			mine := d.times[w][s][ruleVars[i].name]
			what := fmt.Sprintf("%d B: NCCL picks %s/%s", s, ch.Algo, ch.Proto)
			if v := variantOf(vars, ch.Algo, ch.Proto, ch.Channels); v != nil {
				if theirs, ok := d.times[w][s][v.name]; ok && mine > 0 {
					what += fmt.Sprintf(" (%s %.1f us, this %.1f us: %+.1f%%)", v.name, theirs*1e6, mine*1e6, 100*(mine/theirs-1))
				}
			}
			differ = append(differ, what)
		}
		if len(differ) > 0 {
			out = append(out, fmt.Sprintf("%s on %d ranks, %s/%s from %d B: differs from NCCL's own choice at %s", d.name, w, r.Algo, r.Proto, r.MinBytes, strings.Join(differ, "; ")))
		}
	}
	return out
}

// variantOf returns the variant of vars that runs a over p, on channels
// channels if there is one, else the first; nil if none.
func variantOf(vars []*variant, a tuner.Algo, p tuner.Protocol, channels int) *variant {
	name := tuner.CatalogueName(a, p)
	var first *variant
	for _, v := range vars {
		if v.base != name {
			continue
		}
		if v.params["channels"] == channels {
			return v
		}
		if first == nil {
			first = v
		}
	}
	return first
}

// ncclConfig assembles nccl_tuner.conf from the rules of each collective.
func ncclConfig(rules []tuner.Rule, opt Options) *tuner.Config {
	if len(rules) == 0 {
		return nil
	}
	c := &tuner.Config{Comments: []string{
		"NCCL example tuner plugin configuration (plugins/tuner/example in NCCL's repository):",
		"collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks; -1 is any.",
		"Rules are tried in order; the first that matches a call and names an algorithm NCCL allows",
		"there wins. Load: NCCL_TUNER_PLUGIN=<path of libnccl-tuner-example.so>",
		"NCCL_TUNER_CONFIG_FILE=<path of this file> (see nexar-go's docs/nccl-tuner.md).",
	}}
	for _, s := range []string{opt.Description, opt.Source} {
		if s != "" {
			c.Comments = append(c.Comments, s)
		}
	}
	c.Rules = slices.Clone(rules)
	return c
}
