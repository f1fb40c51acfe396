package plots

import (
	"math"
	"math/bits"
)

// Synthetic sweep used by the rendering tests and the Example: closed-form
// times, not simulations, so the tests do not depend on sim/ or algos/.
//
// ring and halving_doubling are the allreduce rows of
// shared/reference/cost-models.md. Two made-up twists give the crossover map
// three winners, as real clusters do:
//   - halving_doubling's exchanges with partners 8 or more ranks away cross
//     a 2:1 oversubscribed core and see half the bandwidth (a ring ordered
//     by node crosses the core on few links and is not charged);
//   - pipelined_ring is the ring with each chunk cut into k >= 2 segments
//     of at most synthSegment bytes, so that in each step only the last
//     segment's reduction is not overlapped with a transfer:
//     2(p-1)k α + 2((p-1)/p) n β + ((p-1)/p) n γ / k.
//
// auto follows a fixed threshold table that ignores the world size, so its
// slowdown is non-zero where the true crossover moves with p.

const (
	synthAlpha   = 5e-6       // s, as in the worked example of cost-models.md
	synthBeta    = 1 / 12.5e9 // s/B: 100 Gb/s
	synthGamma   = 1 / 25e9   // s/B
	synthSegment = 1 << 20    // bytes, pipelined_ring's segment
	synthLinkGBs = 1 / synthBeta / 1e9
)

var (
	synthWorlds = []int{2, 4, 8, 16, 64}
	synthAlgos  = []string{"halving_doubling", "pipelined_ring", "ring"}
)

func synthTime(alg string, p int, n float64) float64 {
	pf := float64(p)
	frac := (pf - 1) / pf
	switch alg {
	case "ring":
		return 2*(pf-1)*synthAlpha + 2*frac*n*synthBeta + frac*n*synthGamma
	case "halving_doubling":
		lg := bits.Len(uint(p)) - 1
		t := 2 * float64(lg) * synthAlpha
		for k := 1; k <= lg; k++ {
			part := n / math.Ldexp(1, k) // bytes exchanged in step k
			slow := 1.0
			if p>>k >= 8 {
				slow = 2
			}
			t += 2*part*synthBeta*slow + part*synthGamma
		}
		return t
	case "pipelined_ring":
		k := math.Max(2, math.Ceil(n/pf/synthSegment))
		return 2*(pf-1)*k*synthAlpha + 2*frac*n*synthBeta + frac*n*synthGamma/k
	case Auto:
		switch {
		case n < 1<<20:
			return synthTime("halving_doubling", p, n)
		case n < 32<<20:
			return synthTime("ring", p, n)
		default:
			return synthTime("pipelined_ring", p, n)
		}
	}
	panic("synthTime: unknown algorithm " + alg)
}

// synthSweep is allreduce over synthWorlds and 1 KiB .. 256 MiB by powers
// of two, for synthAlgos and auto.
func synthSweep() []Point {
	var pts []Point
	for _, alg := range append(append([]string(nil), synthAlgos...), Auto) {
		for _, p := range synthWorlds {
			for n := int64(1 << 10); n <= 256<<20; n *= 2 {
				t := synthTime(alg, p, float64(n))
				pts = append(pts, Point{
					Collective: "allreduce", Algorithm: alg, DType: "f32",
					World: p, Bytes: n, Time: t,
					BusBW: float64(n) / t * 2 * float64(p-1) / float64(p) / 1e9,
				})
			}
		}
	}
	return pts
}
