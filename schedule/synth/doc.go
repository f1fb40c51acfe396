// Package synth synthesizes collective schedules for a topology, in the
// manner of Blink and ForestColl: spanning trees of the devices packed so
// that their rates sum to the max-flow bound of a broadcast (the least,
// over the other devices, of the maximum flow from the root to it on the
// topology's link graph), each tree arc a message along the simulator's
// route. Graph reads a sim.Topology's links and routes, BroadcastBound is
// the bound and Pack the trees; the trees run as algorithms over the
// Link (Algorithms), timed and data-checked by the simulator like any
// catalogue algorithm.
//
// gonum's graph packages have no maximum flow; maxFlow is Edmonds-Karp.
package synth
