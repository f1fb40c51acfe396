package cli

import "math"

// etaTrust is the share of a run's estimated work after which its ETA
// rests on the pace measured alone (see ETA).
const etaTrust = 0.25

// ETA estimates the seconds a run has left from the estimates of its
// work, in seconds of wall time: remaining is what is left, done what
// the run did so far, which took elapsed seconds; current is how long the
// work under way has run without counting as done (a point measured
// whole or not at all), 0 where progress is counted as it goes.
//
// The estimates are scaled by the pace measured (elapsed over done), in
// proportion to the share of the run's estimated work that pace rests on:
// at the start the estimates alone, so that a first point that costs more
// than it weighs (a setup the estimates leave out, a machine busy for a
// moment) is not extrapolated to the whole run, and from a quarter of the
// work on the pace alone, geometrically in between. The ETA never goes
// below 0.
func ETA(remaining, done, elapsed, current float64) float64 {
	if remaining <= 0 {
		return 0
	}
	scale := 1.0
	if done > 0 && elapsed > current {
		pace := (elapsed - current) / done
		w := min(done/((done+remaining)*etaTrust), 1)
		scale = math.Pow(pace, w)
	}
	return max(remaining*scale-current, 0)
}
