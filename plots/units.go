package plots

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"

	"github.com/nexar-go/nexar-go/units"
)

// FormatBytes writes a size with binary units: "512 B", "1 KiB", "64 MiB",
// "1.5 GiB" (units.FormatBytes: up to three significant digits, the unit
// stepping up at 1000).
func FormatBytes(b float64) string { return units.FormatBytes(b) }

// FormatSeconds writes a duration with the unit that keeps the number
// between 1 and 1000: "250 ns", "10 µs", "1.5 ms", "2 s"
// (units.FormatSeconds).
func FormatSeconds(s float64) string { return units.FormatSeconds(s) }

// sig3 formats v >= 0 with at most three significant digits and no
// exponent or trailing zeros: 1, 1.5, 12.3, 256, 1020 (units.Sig3).
func sig3(v float64) string { return units.Sig3(v) }

// SizeTicks returns the ticker of a log-scale axis of message sizes that
// the figures of this package use, with about maxLabels labels, the first
// and last power of two among them.
func SizeTicks(maxLabels int) plot.Ticker { return bytesTicks{maxLabels: maxLabels} }

// bytesTicks marks a log-scale size axis at powers of two and labels the
// first and the last: every k-th power from one end to the other when
// some k gives between half of maxLabels and maxLabels labels, else the
// ends and every step-th power between (steps that divide 10 or are
// multiples of it, so labels fall on KiB/MiB/GiB boundaries where they
// can), about maxLabels labels in all, leaving unlabelled a power of that
// step too near an end's label.
type bytesTicks struct{ maxLabels int }

func (t bytesTicks) Ticks(amin, amax float64) []plot.Tick {
	if !(amin > 0) || !(amax >= amin) {
		return nil
	}
	lo := int(math.Ceil(math.Log2(amin) - 1e-9))
	hi := int(math.Floor(math.Log2(amax) + 1e-9))
	step := 1
	for _, s := range []int{1, 2, 4, 5, 10, 20, 30} {
		step = s
		if countMultiples(lo, hi, s) <= max(t.maxLabels, 2) {
			break
		}
	}
	var ticks []plot.Tick
	for e := lo; e <= hi; e++ {
		ticks = append(ticks, plot.Tick{Value: math.Ldexp(1, e)})
	}
	if k := evenStep(len(ticks), max(t.maxLabels, 2)); k > 0 {
		for i := 0; i < len(ticks); i += k {
			ticks[i].Label = FormatBytes(ticks[i].Value)
		}
		return ticks
	}
	var want []int
	for i := range ticks {
		if mod(lo+i, step) == 0 {
			want = append(want, i)
		}
	}
	labelSpaced(ticks, want, 0.75*float64(step))
	return ticks
}

// evenStep returns the least k for which labelling every k-th of n ticks
// labels the first and the last, at most limit labels and at least half
// as many; 0 if there is none.
func evenStep(n, limit int) int {
	if n == 1 {
		return 1
	}
	for k := 1; k < n; k++ {
		labels := (n-1)/k + 1
		if (n-1)%k == 0 && labels <= limit && 2*labels >= limit {
			return k
		}
	}
	return 0
}

// labelSpaced labels ticks (ascending values) with FormatBytes: the first
// and the last, then those indexed by want, each only if it lies at least
// gap octaves from every label already placed, so that the labels at the
// axis' ends never crowd their neighbours'.
func labelSpaced(ticks []plot.Tick, want []int, gap float64) {
	if len(ticks) == 0 {
		return
	}
	var placed []float64
	for _, i := range append([]int{0, len(ticks) - 1}, want...) {
		v := ticks[i].Value
		if ticks[i].Label != "" || slices.ContainsFunc(placed, func(p float64) bool { return math.Abs(math.Log2(v/p)) < gap-1e-9 }) {
			continue
		}
		ticks[i].Label = FormatBytes(v)
		placed = append(placed, v)
	}
}

// decadeTicks marks a log-scale axis of a decimal quantity (seconds) at
// 1..9 x 10^k and labels 1, 2, 5 x 10^k (short ranges), 10^k, or every
// few decades, so that at most maxLabels labels are drawn.
type decadeTicks struct {
	maxLabels int
	format    func(float64) string
}

func (t decadeTicks) Ticks(amin, amax float64) []plot.Tick {
	if !(amin > 0) || !(amax >= amin) {
		return nil
	}
	lo := int(math.Floor(math.Log10(amin) + 1e-9))
	hi := int(math.Ceil(math.Log10(amax) - 1e-9))
	inRange := func(v float64) bool { return v >= amin*(1-1e-9) && v <= amax*(1+1e-9) }
	count := func(mantissas []int, every int) int {
		n := 0
		for k := lo; k <= hi; k++ {
			if mod(k, every) != 0 {
				continue
			}
			for _, m := range mantissas {
				if inRange(float64(m) * math.Pow10(k)) {
					n++
				}
			}
		}
		return n
	}
	limit := max(t.maxLabels, 2)
	mantissas, every := []int{1}, 1
	switch {
	case count([]int{1, 2, 5}, 1) <= limit:
		mantissas = []int{1, 2, 5}
	case count([]int{1, 3}, 1) <= limit:
		mantissas = []int{1, 3}
	default:
		// Every other decade, or every third so that labels stay on unit
		// boundaries (1 ns, 1 µs, 1 ms, 1 s).
		for every = 1; count(mantissas, every) > limit; {
			if every < 3 {
				every++
			} else {
				every += 3
			}
		}
	}
	var ticks []plot.Tick
	for k := lo; k <= hi; k++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow10(k)
			if !inRange(v) {
				continue
			}
			tk := plot.Tick{Value: v}
			if mod(k, every) == 0 && slices.Contains(mantissas, m) {
				tk.Label = t.format(v)
			}
			ticks = append(ticks, tk)
		}
	}
	return ticks
}

// linearTicks labels a linear axis at multiples of a 1, 2 or 5 x 10^k step
// chosen for about want labels, with minor ticks between, and appends
// suffix to each label.
type linearTicks struct {
	want   int
	suffix string
}

func (t linearTicks) Ticks(amin, amax float64) []plot.Tick {
	if !(amax > amin) || math.IsInf(amax-amin, 0) {
		return nil
	}
	want := max(t.want, 2)
	raw := (amax - amin) / float64(want)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	// The 1-2-5 step nearest raw on a log scale: 2.7 gives 2, 4 gives 5.
	step := mag
	for _, m := range []float64{2, 5, 10} {
		if math.Abs(math.Log(m*mag/raw)) < math.Abs(math.Log(step/raw)) {
			step = m * mag
		}
	}
	minor := step / 5
	if m := step / mag; m > 1.5 && m < 2.5 {
		minor = step / 4
	}
	decimals := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	first := math.Ceil(amin/minor - 1e-9)
	for i := first; i*minor <= amax*(1+1e-12)+1e-300; i++ {
		v := i * minor
		tk := plot.Tick{Value: v}
		if r := v / step; math.Abs(r-math.Round(r)) < 1e-6 {
			if v == 0 {
				v = 0 // no "-0"
			}
			tk.Label = strconv.FormatFloat(v, 'f', decimals, 64) + t.suffix
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

// niceLogRange widens [min, max] to the enclosing 1-2-5 x 10^k values, so a
// decade-ticked axis always has labelled ends.
func niceLogRange(amin, amax float64) (float64, float64) {
	down := func(v float64) float64 {
		k := math.Floor(math.Log10(v) + 1e-9)
		d := math.Pow(10, k)
		for _, m := range []float64{5, 2, 1} {
			if m*d <= v*(1+1e-9) {
				return m * d
			}
		}
		return d
	}
	up := func(v float64) float64 {
		k := math.Floor(math.Log10(v) - 1e-9)
		d := math.Pow(10, k)
		for _, m := range []float64{1, 2, 5, 10} {
			if m*d >= v*(1-1e-9) {
				return m * d
			}
		}
		return 10 * d
	}
	lo, hi := down(amin), up(amax)
	if lo == hi {
		lo, hi = down(lo*0.99), up(hi*1.01)
	}
	return lo, hi
}

// pow2Range widens [min, max] to the enclosing powers of two (at least one
// octave apart).
func pow2Range(amin, amax float64) (float64, float64) {
	lo := math.Ldexp(1, int(math.Floor(math.Log2(amin)+1e-9)))
	hi := math.Ldexp(1, int(math.Ceil(math.Log2(amax)-1e-9)))
	if lo == hi {
		lo, hi = lo/2, hi*2
	}
	return lo, hi
}

func countMultiples(lo, hi, step int) int {
	n := 0
	for e := lo; e <= hi; e++ {
		if mod(e, step) == 0 {
			n++
		}
	}
	return n
}

func mod(a, b int) int { return ((a % b) + b) % b }

// sizeTicks marks the sizes a sweep ran (the cells of a crossover map),
// labels the first and the last, and between them every k-th power of two
// among them (every k-th size when fewer than two are powers of two), at
// most about maxLabels labels: evenly from end to end where the count
// allows it, else leaving unlabelled a size too near an end's label.
type sizeTicks struct {
	sizes     []float64 // ascending, unique
	maxLabels int
}

func (t sizeTicks) Ticks(amin, amax float64) []plot.Tick {
	var in, pow2 []float64
	for _, s := range t.sizes {
		if s >= amin && s <= amax {
			in = append(in, s)
			if isPow2(s) {
				pow2 = append(pow2, s)
			}
		}
	}
	if len(in) == 0 {
		return nil
	}
	cand := pow2
	if len(pow2) < 2 {
		cand = in
	}
	labels := max(t.maxLabels, 1)
	k := (len(cand) + labels - 1) / labels
	ticks := make([]plot.Tick, len(in))
	for i, s := range in {
		ticks[i].Value = s
	}
	if even := evenStep(len(cand), labels); even > 0 && cand[0] == in[0] && cand[len(cand)-1] == in[len(in)-1] {
		for i := 0; i < len(cand); i += even {
			j, _ := slices.BinarySearch(in, cand[i])
			ticks[j].Label = FormatBytes(in[j])
		}
		return ticks
	}
	var want []int
	for i := 0; i < len(cand); i += k {
		j, _ := slices.BinarySearch(in, cand[i])
		want = append(want, j)
	}
	// Labels k candidates apart, on average, lie this many octaves apart;
	// and never closer than the axis' share of one label.
	step := math.Log2(amax/amin) / float64(labels)
	if len(cand) > 1 {
		step = math.Max(step, float64(k)*math.Log2(cand[len(cand)-1]/cand[0])/float64(len(cand)-1))
	}
	labelSpaced(ticks, want, 0.75*step)
	return ticks
}

func isPow2(v float64) bool {
	frac, _ := math.Frexp(v)
	return frac == 0.5
}
