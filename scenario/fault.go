package scenario

import (
	"fmt"
	"math"
	"strings"

	"github.com/nexar-go/nexar-go/sim"
)

// FaultInfo describes a kind of [[fault]] table, for listings and help.
type FaultInfo struct {
	Kind    string
	Summary string
	Keys    []KeyInfo
	// Random is set for kinds that draw random numbers (from the run's
	// seed), which make a sweep's repeat meaningful.
	Random bool
}

type faultSpec struct {
	FaultInfo
	build func(t *table) sim.Fault
}

var faultSpecs = []faultSpec{
	{
		FaultInfo: FaultInfo{"jitter", "delays every message by a random time before it enters the network", []KeyInfo{
			{"dist", true, `the distribution: "constant", "exponential", "normal", "lognormal", "gamma", "uniform" or "pareto"`},
			{"mean", true, `its mean: "2us"`},
			{"stddev", false, `its standard deviation: "1us" (default 0; exponential ignores it)`},
		}, true},
		build: func(t *table) sim.Fault {
			dist, ok1 := t.str("dist", true, "", `a distribution name such as "lognormal"`)
			mean, ok2 := t.duration("mean", true)
			sd, ok3 := t.duration("stddev", false)
			if !ok1 || !ok2 || !ok3 {
				return nil
			}
			return sim.Jitter{Dist: dist, Mean: mean, Stddev: sd}
		},
	},
	{
		FaultInfo: FaultInfo{"straggler", "one rank computes (reduces, spends overheads) factor times slower", []KeyInfo{
			{"rank", true, "the rank: 3"},
			{"factor", true, "the slowdown: 4"},
		}, false},
		build: func(t *table) sim.Fault {
			rank, ok1 := t.requiredInt("rank", 0, MaxWorld-1, "the slow rank: rank = 3")
			f, ok2 := t.requiredFloat("factor", "the slowdown: factor = 4")
			if !ok1 || !ok2 {
				return nil
			}
			return sim.Straggler{Rank: int(rank), Factor: f}
		},
	},
	{
		FaultInfo: FaultInfo{"stragglers", "count ranks, drawn at random, compute factor times slower", []KeyInfo{
			{"count", true, "how many ranks: 2"},
			{"factor", true, "the slowdown: 4"},
		}, true},
		build: func(t *table) sim.Fault {
			n, ok1 := t.requiredInt("count", 0, MaxWorld, "how many ranks: count = 2")
			f, ok2 := t.requiredFloat("factor", "the slowdown: factor = 4")
			if !ok1 || !ok2 {
				return nil
			}
			return sim.Stragglers{Count: int(n), Factor: f}
		},
	},
	{
		FaultInfo: FaultInfo{"slow_link", "a link runs at factor times its bandwidth from time at on (flow model)", []KeyInfo{
			{"link", true, `the link, by the names of its nodes: "leaf0->spine1" one way, "leaf0<->spine1" both`},
			{"factor", true, "the bandwidth factor: 0.25"},
			{"at", false, `when it slows: "100us" (default 0)`},
		}, false},
		build: func(t *table) sim.Fault {
			link, ok1 := t.str("link", true, "", `a link such as "leaf0<->spine1"`)
			f, ok2 := t.requiredFloat("factor", "the bandwidth factor: factor = 0.25")
			at, ok3 := t.duration("at", false)
			if !ok1 || !ok2 || !ok3 {
				return nil
			}
			return sim.SlowLink{Link: link, Factor: f, At: at}
		},
	},
	{
		FaultInfo: FaultInfo{"link_failure", "a link fails at time at; messages that need it fail (flow model)", []KeyInfo{
			{"link", true, `the link: "leaf0<->spine1"`},
			{"at", false, `when: "100us" (default 0)`},
		}, false},
		build: func(t *table) sim.Fault {
			link, ok1 := t.str("link", true, "", `a link such as "leaf0<->spine1"`)
			at, ok2 := t.duration("at", false)
			if !ok1 || !ok2 {
				return nil
			}
			return sim.LinkFailure{Link: link, At: at}
		},
	},
	{
		FaultInfo: FaultInfo{"rank_failure", `a rank crashes at time at; with recovery = "abort" (default) every operation that needs it fails, so its points fail; with recovery = "shrink" it fails during one point of the sweeps, the survivors detect it by heartbeats, agree, rebuild and run that point again, and the later points, on one rank fewer`, []KeyInfo{
			{"rank", true, "the rank: 3"},
			{"at", false, `when: "100us" (default 0); with shrink, the time into the point`},
			{"recovery", false, `"abort" (default) or "shrink"`},
			{"point", false, "shrink: the point during which the rank fails, the row of results.csv numbered from 0 as --trace numbers them (required with shrink)"},
			{"heartbeat", false, `shrink: the interval between heartbeats (default "1s", nexar's)`},
			{"timeout", false, `shrink: how long without a heartbeat makes a peer dead (default "5s", nexar's)`},
			{"rebuild", false, `shrink: a fixed time the rebuild takes besides its messages (default 0)`},
		}, false},
		build: func(t *table) sim.Fault {
			rank, ok1 := t.requiredInt("rank", 0, MaxWorld-1, "the failing rank: rank = 3")
			at, ok2 := t.duration("at", false)
			policy, ok3 := t.str("recovery", false, "abort", `"abort" or "shrink"`)
			if !ok1 || !ok2 || !ok3 {
				return nil
			}
			switch policy {
			case "abort":
				for _, k := range []string{"point", "heartbeat", "timeout", "rebuild"} {
					if _, path, ok := t.get(k); ok {
						t.errorf(path, `%s applies to recovery = "shrink" only`, k)
						return nil
					}
				}
				return sim.RankFailure{Rank: int(rank), At: at}
			case "shrink":
				point, ok1 := t.requiredInt("point", 0, math.MaxInt32, "the point during which it fails, a row of results.csv from 0: point = 4")
				hb, ok2 := t.durationDefault("heartbeat", sim.DefaultHeartbeat)
				to, ok3 := t.durationDefault("timeout", sim.DefaultTimeout)
				rb, ok4 := t.duration("rebuild", false)
				if !ok1 || !ok2 || !ok3 || !ok4 {
					return nil
				}
				if to < hb {
					t.errorf(joinPath(t.path, "timeout"), "timeout %v is shorter than the heartbeat interval %v: every peer would be declared dead between two heartbeats", to, hb)
					return nil
				}
				if hb <= 0 {
					t.errorf(joinPath(t.path, "heartbeat"), "the heartbeat interval must be positive")
					return nil
				}
				return sim.ShrinkFailure{Rank: int(rank), At: at, Point: int(point), Recovery: sim.Recovery{Heartbeat: hb, Timeout: to, Rebuild: rb}}
			}
			t.errorf(joinPath(t.path, "recovery"), `unknown recovery %q (want "abort" or "shrink")`, policy)
			return nil
		},
	},
	{
		FaultInfo: FaultInfo{"rank_join", `ranks join the world, elastic within min_world..max_world, at the boundary before a point of the sweeps: the members agree on the new membership and rebuild (charged, and reported as a shrink's recovery is), and that point and every later one run on the larger world, never above max_world`, []KeyInfo{
			{"point", true, "the point before which they join, the row of results.csv numbered from 0 as --trace numbers them: point = 4"},
			{"max_world", true, "the largest world the elastic world may grow to: max_world = 8"},
			{"min_world", false, "the smallest world it may run on (default 1); every point must run on at least this many ranks"},
			{"ranks", false, "how many ranks join (default 1)"},
			{"rebuild", false, `a fixed time the rebuild takes besides its messages (default 0)`},
		}, false},
		build: func(t *table) sim.Fault {
			point, ok1 := t.requiredInt("point", 0, math.MaxInt32, "the point before which they join, a row of results.csv from 0: point = 4")
			hi, ok2 := t.requiredInt("max_world", 2, MaxWorld, "the largest world: max_world = 8")
			lo, ok3 := t.integer("min_world", 1, 1, MaxWorld)
			n, ok4 := t.integer("ranks", 1, 1, MaxWorld)
			rb, ok5 := t.duration("rebuild", false)
			if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
				return nil
			}
			if lo > hi {
				t.errorf(joinPath(t.path, "min_world"), "min_world %d is above max_world %d", lo, hi)
				return nil
			}
			return sim.RankJoin{Ranks: int(n), Point: int(point), MinWorld: int(lo), MaxWorld: int(hi), Rebuild: rb}
		},
	},
}

// Faults lists the kinds of [[fault]] table.
func Faults() []FaultInfo {
	out := make([]FaultInfo, len(faultSpecs))
	for i, f := range faultSpecs {
		out[i] = f.FaultInfo
	}
	return out
}

// faults reads the top-level [[fault]] tables. It returns the faults,
// whether any draws random numbers, and whether all were good.
func (c *checker) faults(top *table) ([]sim.Fault, bool, bool) {
	v, path, ok := top.get("fault")
	if !ok {
		return nil, false, true
	}
	tables, isTables := v.([]map[string]any)
	if !isTables {
		c.errorf(path, "want an array of tables, each headed [[fault]], got %s", typeName(v))
		return nil, false, false
	}
	var kinds []string
	for _, f := range faultSpecs {
		kinds = append(kinds, f.Kind)
	}
	var out []sim.Fault
	random, good := false, true
	for i, m := range tables {
		t := &table{c: c, path: indexPath("fault", i), m: m, what: fmt.Sprintf("[[fault]] %d", i+1)}
		kind, ok := t.str("kind", true, "", "the kind of fault: one of "+strings.Join(kinds, ", "))
		var spec *faultSpec
		for j := range faultSpecs {
			if faultSpecs[j].Kind == kind {
				spec = &faultSpecs[j]
			}
		}
		if !ok || spec == nil {
			if ok {
				t.errorf(joinPath(t.path, "kind"), "unknown kind of fault %q (want one of %s)", kind, strings.Join(kinds, ", "))
			}
			good = false
			continue
		}
		t.what = fmt.Sprintf("[[fault]] %d of kind %s", i+1, kind)
		f := spec.build(t)
		t.finish()
		if f == nil {
			good = false
			continue
		}
		random = random || spec.Random
		if sf, ok := f.(sim.ShrinkFailure); ok {
			if c.shrink != nil {
				t.errorf(t.path, "a second rank failure with recovery = \"shrink\": a scenario has at most one")
				good = false
			}
			c.shrink, c.shrinkKey = &sf, t.path
			continue
		}
		if j, ok := f.(sim.RankJoin); ok {
			if c.join != nil {
				t.errorf(t.path, "a second [[fault]] of kind rank_join: a scenario has at most one")
				good = false
			}
			c.join, c.joinKey = &j, t.path
			continue
		}
		out = append(out, f)
	}
	return out, random, good
}

// requiredFloat reads a required number.
func (t *table) requiredFloat(key, want string) (float64, bool) {
	if _, ok := t.m[key]; !ok {
		t.known = append(t.known, key)
		t.missing(key, want)
		return 0, false
	}
	f, ok := t.float(key, 0, 0, 1e9)
	if ok && f <= 0 {
		t.errorf(joinPath(t.path, key), "%g must be positive", f)
		return 0, false
	}
	return f, ok
}

// durationDefault reads a duration string, def if absent.
func (t *table) durationDefault(key string, def sim.Time) (sim.Time, bool) {
	if _, ok := t.m[key]; !ok {
		t.known = append(t.known, key)
		return def, true
	}
	return t.duration(key, true)
}
