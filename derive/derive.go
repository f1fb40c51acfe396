package derive

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/nccl/tuner"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// Auto is the name of the dispatchers, which never compete.
const Auto = "auto"

// Crossover is a message size at which the faster of two variants changes.
type Crossover struct {
	Collective string `json:"collective"`
	DType      string `json:"dtype"`
	World      int    `json:"world"`
	// Below is the variant that is faster below Bytes, Above the one
	// faster above it.
	Below string `json:"below"`
	Above string `json:"above"`
	// Bytes is the interpolated crossover size (not a whole number).
	Bytes float64 `json:"bytes"`
	// Lo and Hi are the swept sizes it lies between.
	Lo int `json:"lo"`
	Hi int `json:"hi"`
}

// BestParam is the best parameter setting of one algorithm at one point.
type BestParam struct {
	Collective string `json:"collective"`
	DType      string `json:"dtype"`
	Algorithm  string `json:"algorithm"`
	World      int    `json:"world"`
	Bytes      int    `json:"bytes"`
	// Variant is the fastest of the algorithm's variants there, Params its
	// parameters, Time its time in seconds.
	Variant string         `json:"variant"`
	Params  map[string]int `json:"params"`
	Time    float64        `json:"time_s"`
	// Slowest is the time of the slowest of the variants, for the gain.
	Slowest float64 `json:"slowest_s"`
}

// Result is what a sweep implies.
type Result struct {
	Crossovers []Crossover
	BestParams []BestParam
	// Tuning is the derived table; nil if no collective had two competing
	// variants and Options gave no transport.
	Tuning *algos.Tuning
	// Transport is the bulk threshold derived from Options.Transport, nil
	// without one; Tuning's [transport] table carries its threshold.
	Transport *Transport
	// NCCLTuner is nccl_tuner.conf, the file NCCL's example tuner plugin
	// reads: for each collective NCCL chooses for and each swept world,
	// the fastest of NCCL's algorithms (the catalogue's nccl_* variants)
	// at each swept size, switching at their crossovers, then a rule for
	// the other worlds; nil if no collective ran two of NCCL's
	// algorithms.
	NCCLTuner *tuner.Config
	// Notes say what was left out and why.
	Notes []string
}

// Options describe the table Derive writes.
type Options struct {
	// Description and Source go into the table.
	Description, Source string
	// Transport, if not nil, describes realnet's two paths: Derive then
	// derives the bulk threshold too (DeriveTransport, default sizes).
	Transport *scenario.Transport
	// Nodes, if not nil, returns the nodes (NCCL's: NVLink domains) a
	// world spans, for nccl_tuner.conf's nNodes; nil writes -1, any.
	Nodes func(world int) int
	// Channels is the channel count NCCL's algorithms ran on where a
	// sweep set none (the machine's); 0 if unknown.
	Channels int
	// Policy, if not nil, is NCCL's own choice on the scenario's cluster:
	// Derive notes where nccl_tuner.conf departs from it, and the
	// simulated gain where the sweep ran NCCL's pick.
	Policy *tuner.Policy
}

// variant is one competing variant of a collective.
type variant struct {
	name   string
	base   string
	params map[string]int
	algo   *algos.Algorithm
	order  int
}

// collectiveData is the rows of one collective and dtype, indexed.
type collectiveData struct {
	name, dtype string
	variants    []*variant
	byName      map[string]*variant
	// times[world][bytes][variant] = time
	times  map[int]map[int]map[string]float64
	worlds []int
}

func (d *collectiveData) sizes(w int) []int {
	return slices.Sorted(maps.Keys(d.times[w]))
}

// Derive derives crossovers, best parameters and a tuning table from rows.
// It fails only on rows it cannot read (an unknown collective or
// algorithm, bad parameters).
func Derive(rows []sweep.Row, opt Options) (*Result, error) {
	res := &Result{}
	groups, err := group(rows, res)
	if err != nil {
		return nil, err
	}
	tun := &algos.Tuning{Description: opt.Description, Source: opt.Source}
	var ncclRules []tuner.Rule
	var covers []string
	for _, d := range groups {
		res.Crossovers = append(res.Crossovers, d.crossovers()...)
		res.BestParams = append(res.BestParams, d.bestParams()...)
		rules, notes := d.ncclRules(opt)
		ncclRules = append(ncclRules, rules...)
		res.Notes = append(res.Notes, notes...)
		if len(d.variants) < 2 {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: only one algorithm variant (%s) ran, so there is nothing to tune", d.name, d.variants[0].name))
			continue
		}
		tc, note, cover := d.table()
		res.Notes = append(res.Notes, note)
		covers = append(covers, cover)
		tun.Collectives = append(tun.Collectives, tc)
	}
	if opt.Transport != nil {
		x, err := DeriveTransport(opt.Transport, nil)
		if err != nil {
			return nil, err
		}
		res.Transport = x
		tun.Transport = &algos.Thresholds{Bulk: x.Threshold, Eager: x.EagerThreshold}
		if x.Threshold == algos.BulkNever {
			last := x.Points[len(x.Points)-1].Bytes
			res.Notes = append(res.Notes, fmt.Sprintf("transport: the bulk path is not faster than QUIC at any size up to %d bytes, so the table keeps every message on QUIC (bulk_threshold = \"never\")", last))
		}
	}
	if len(covers) > 0 {
		tun.Description = strings.TrimSpace(tun.Description + " [" + strings.Join(covers, "; ") + "]")
	}
	res.NCCLTuner = ncclConfig(ncclRules, opt)
	if len(tun.Collectives) > 0 || tun.Transport != nil {
		if err := tun.Validate(); err != nil {
			return nil, fmt.Errorf("derive: the derived table is invalid: %w", err)
		}
		res.Tuning = tun
	}
	return res, nil
}

// group indexes rows by collective (sorted by name) for the first dtype of
// each, leaving out auto and rows whose time is not positive.
func group(rows []sweep.Row, res *Result) ([]*collectiveData, error) {
	byColl := map[string]*collectiveData{}
	otherTypes := map[string][]string{}
	for _, r := range rows {
		if sweep.BaseAlgorithm(r.Algorithm) == Auto {
			continue
		}
		d := byColl[r.Collective]
		if d == nil {
			d = &collectiveData{name: r.Collective, dtype: r.DType, byName: map[string]*variant{}, times: map[int]map[int]map[string]float64{}}
			byColl[r.Collective] = d
		}
		if r.DType != d.dtype {
			if !slices.Contains(otherTypes[r.Collective], r.DType) {
				otherTypes[r.Collective] = append(otherTypes[r.Collective], r.DType)
			}
			continue
		}
		v := d.byName[r.Algorithm]
		if v == nil {
			coll, err := algos.Lookup(r.Collective)
			if err != nil {
				return nil, err
			}
			base := sweep.BaseAlgorithm(r.Algorithm)
			a, err := coll.Algorithm(base)
			if err != nil {
				return nil, err
			}
			params, err := sweep.ParseParams(r.Params)
			if err != nil {
				return nil, fmt.Errorf("%s/%s: %w", r.Collective, r.Algorithm, err)
			}
			v = &variant{name: r.Algorithm, base: base, params: params, algo: a, order: len(d.variants)}
			d.variants = append(d.variants, v)
			d.byName[r.Algorithm] = v
		}
		if !(r.Time > 0) || math.IsInf(r.Time, 0) {
			continue
		}
		bw := d.times[r.World]
		if bw == nil {
			bw = map[int]map[string]float64{}
			d.times[r.World] = bw
			d.worlds = append(d.worlds, r.World)
		}
		vt := bw[r.Bytes]
		if vt == nil {
			vt = map[string]float64{}
			bw[r.Bytes] = vt
		}
		if _, dup := vt[r.Algorithm]; !dup { // the first row of a point wins
			vt[r.Algorithm] = r.Time
		}
	}
	names := slices.Sorted(maps.Keys(byColl))
	out := make([]*collectiveData, 0, len(names))
	for _, n := range names {
		d := byColl[n]
		sort.Ints(d.worlds)
		if len(otherTypes[n]) > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: derived from dtype %s; rows of %v were left out", n, d.dtype, otherTypes[n]))
		}
		if len(d.worlds) == 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: no row with a positive time", n))
			continue
		}
		out = append(out, d)
	}
	return out, nil
}

// TieTolerance is the relative difference below which two times count as
// equal: the same as plots.TieTolerance, so that the table and the
// crossover map name the same winners. Algorithms that cost the same
// (ring and halving-doubling at p = 2) differ only by rounding.
const TieTolerance = 1e-9

// winner returns the fastest variant among times that competes
// (algos.Competes: not a lossy one, a compressed allreduce, which
// computes something else); among those within TieTolerance of the
// fastest, the simplest (algos.CompareSimplicity), the rule the crossover
// map and the figures follow too.
func (d *collectiveData) winner(times map[string]float64) *variant {
	return d.fastest(times, func(v *variant) bool { return algos.Competes(d.name, v.name) })
}

// fastest returns the fastest variant among times that ok accepts, the
// simplest among those within TieTolerance of it; nil if none.
func (d *collectiveData) fastest(times map[string]float64, ok func(*variant) bool) *variant {
	var best *variant
	for _, v := range d.variants {
		t, ran := times[v.name]
		if ran && ok(v) && (best == nil || t < times[best.name]) {
			best = v
		}
	}
	if best == nil {
		return nil
	}
	limit := times[best.name] * (1 + TieTolerance)
	for _, v := range d.variants {
		if t, ran := times[v.name]; ran && ok(v) && t <= limit && algos.CompareSimplicity(d.name, v.name, best.name) < 0 {
			best = v
		}
	}
	return best
}

// crossing returns the log-scale interpolated size where ln(ta/tb) crosses
// zero between sizes b1 < b2, with f1 = ln(ta1/tb1) and f2 = ln(ta2/tb2)
// of opposite signs.
func crossing(b1, b2 int, f1, f2 float64) float64 {
	x1, x2 := math.Log(float64(b1)), math.Log(float64(b2))
	return math.Exp(x1 + (x2-x1)*f1/(f1-f2))
}

// crossovers returns, per world and pair of variants, where the faster of
// the two changes.
func (d *collectiveData) crossovers() []Crossover {
	var out []Crossover
	for _, w := range d.worlds {
		sizes := d.sizes(w)
		for i, a := range d.variants {
			for _, b := range d.variants[i+1:] {
				// The sizes above 0 where both ran and differ.
				type pt struct {
					bytes int
					f     float64
				}
				var pts []pt
				for _, s := range sizes {
					ta, okA := d.times[w][s][a.name]
					tb, okB := d.times[w][s][b.name]
					if !okA || !okB || s <= 0 {
						continue
					}
					if f := math.Log(ta / tb); math.Abs(f) > TieTolerance {
						pts = append(pts, pt{s, f})
					}
				}
				for k := 1; k < len(pts); k++ {
					p, q := pts[k-1], pts[k]
					if (p.f < 0) == (q.f < 0) {
						continue
					}
					below, above := a.name, b.name
					if p.f > 0 {
						below, above = above, below
					}
					out = append(out, Crossover{Collective: d.name, DType: d.dtype, World: w, Below: below, Above: above,
						Bytes: crossing(p.bytes, q.bytes, p.f, q.f), Lo: p.bytes, Hi: q.bytes})
				}
			}
		}
	}
	return out
}

// bestParams returns, for each algorithm with several variants, the best
// of them at each world and size.
func (d *collectiveData) bestParams() []BestParam {
	var bases []string
	count := map[string]int{}
	for _, v := range d.variants {
		if count[v.base] == 0 {
			bases = append(bases, v.base)
		}
		count[v.base]++
	}
	var out []BestParam
	for _, base := range bases {
		if count[base] < 2 {
			continue
		}
		for _, w := range d.worlds {
			for _, s := range d.sizes(w) {
				times := d.times[w][s]
				best := d.fastest(times, func(v *variant) bool { return v.base == base })
				slowest := 0.0
				for _, v := range d.variants {
					if t, ok := times[v.name]; ok && v.base == base {
						slowest = max(slowest, t)
					}
				}
				if best == nil {
					continue
				}
				out = append(out, BestParam{Collective: d.name, DType: d.dtype, Algorithm: base, World: w, Bytes: s,
					Variant: best.name, Params: best.params, Time: times[best.name], Slowest: slowest})
			}
		}
	}
	return out
}

// table returns the collective's part of the tuning table, and a note
// that says which worlds it covers and how.
//
// The table states what it knows: each swept world has its own entry. A
// power of two's covers only itself, since an algorithm that folds the
// ranks beyond a power of two (halving-doubling) costs more on the
// non-powers around it than where it was measured; a swept non-power's
// covers the worlds between its swept neighbours, which are non-powers
// like it (or powers of two, which cost no more). The worlds between two
// swept powers of two with nothing swept between them take a rule bounded
// to the swept range (the variant that won most, among those that run on
// any world); the worlds outside that range take nexar's own rule
// (DefaultTuning's rules for the collective, if it has any), which no
// sweep confirmed.
func (d *collectiveData) table() (tc algos.TuningCollective, note, cover string) {
	tc = algos.TuningCollective{Name: d.name}
	wins := map[string]int{}
	lo, hi := d.worlds[0], d.worlds[len(d.worlds)-1]
	gap, next := false, lo // whether a world in [lo, hi] has no entry
	for k, w := range d.worlds {
		steps := d.steps(w, wins)
		if len(steps) == 0 {
			continue
		}
		x := algos.Crossover{MinWorld: w, MaxWorld: w, Steps: steps}
		if !powerOfTwo(w) {
			if k > 0 && powerOfTwo(d.worlds[k-1]) {
				x.MinWorld = d.worlds[k-1] + 1 // a non-power's entry below covers the others
			}
			if k+1 < len(d.worlds) {
				x.MaxWorld = d.worlds[k+1] - 1
			}
		}
		gap = gap || x.MinWorld > next
		next = x.MaxWorld + 1
		tc.Crossovers = append(tc.Crossovers, x)
	}
	var fallback *variant
	for _, v := range d.variants {
		if v.algo.PowerOfTwo || !algos.Competes(d.name, v.name) {
			continue
		}
		if fallback == nil || wins[v.name] > wins[fallback.name] ||
			(wins[v.name] == wins[fallback.name] && algos.CompareSimplicity(d.name, v.name, fallback.name) < 0) {
			fallback = v
		}
	}
	var notes []string
	gap = gap || next <= hi
	if fallback != nil && gap {
		tc.Rules = append(tc.Rules, algos.Rule{Algorithm: fallback.base, Params: maps.Clone(fallback.params), MinWorld: lo, MaxWorld: hi})
		notes = append(notes, fmt.Sprintf("the worlds from %d to %d that no swept world's entry covers run %s, the variant that won most", lo, hi, fallback.name))
	} else if fallback == nil && gap {
		notes = append(notes, "every variant needs a power-of-two world, so the table covers only the swept worlds")
	}
	outside, elsewhere := "have no entry (auto fails there)", "no entry elsewhere"
	if def := algos.DefaultTuning().Collective(d.name); def != nil {
		for _, r := range def.Rules {
			r.Params = maps.Clone(r.Params)
			tc.Rules = append(tc.Rules, r)
		}
		outside = "take nexar's built-in rule, which no sweep confirmed"
		elsewhere = "nexar's rule elsewhere"
	}
	notes = append(notes, fmt.Sprintf("worlds outside the swept %s %s", worldRange(lo, hi), outside))
	note = fmt.Sprintf("%s: tuning table derived from worlds %s; %s", d.name, worldRange(lo, hi), strings.Join(notes, "; "))
	return tc, note, fmt.Sprintf("%s from worlds %s (%s)", d.name, worldRange(lo, hi), elsewhere)
}

// steps returns the steps of the table's entry for world w, counting
// each swept size's winner in wins.
func (d *collectiveData) steps(w int, wins map[string]int) []algos.Step {
	sizes := d.sizes(w)
	var steps []algos.Step
	var prev *variant
	for i, s := range sizes {
		win := d.winner(d.times[w][s])
		if win == nil {
			continue
		}
		wins[win.name]++
		if prev == win {
			continue
		}
		from := 0
		if prev != nil {
			from = d.stepStart(w, sizes[i-1], s, prev, win)
		}
		steps = append(steps, algos.Step{FromBytes: from, Algorithm: win.base, Params: maps.Clone(win.params)})
		prev = win
	}
	return steps
}

// worldRange writes a range of worlds: "8" or "2-64".
func worldRange(lo, hi int) string {
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

func powerOfTwo(n int) bool { return n > 0 && n&(n-1) == 0 }

// stepStart returns where the step of win starts when prev was chosen at
// b1 and win at b2: their crossover interpolated on the log scale,
// rounded up and kept in (b1, b2]. Where the two tie at b1 (prev chosen as
// the simpler) and win is faster at b2, the interpolation puts the
// crossing at b1 itself, so win starts just above it: win is no slower
// anywhere the sweep saw, and starting it at b2 would lose what it gains
// in between.
func (d *collectiveData) stepStart(w, b1, b2 int, prev, win *variant) int {
	from := b2
	t1, t2 := d.times[w][b1], d.times[w][b2]
	p1, ok1 := t1[prev.name]
	n1, ok2 := t1[win.name]
	p2, ok3 := t2[prev.name]
	n2, ok4 := t2[win.name]
	if b1 > 0 && ok1 && ok2 && ok3 && ok4 {
		f1, f2 := math.Log(p1/n1), math.Log(p2/n2)
		if math.Abs(f1) <= TieTolerance {
			f1 = 0
		}
		if f1 <= 0 && f2 > TieTolerance {
			from = int(math.Ceil(crossing(b1, b2, f1, f2)))
		}
	}
	return min(max(from, b1+1), b2)
}
