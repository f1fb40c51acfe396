package verify

import (
	"fmt"
	"io"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/calibrate"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/units"
)

// PeerRow sets nexar-live beside another library (Open MPI, NCCL) at one
// size of one collective.
type PeerRow struct {
	Collective string
	World      int
	Bytes      int
	// Peer is the other library's time in seconds.
	Peer float64
	// Best is nexar-live's fastest algorithm at this size; Auto its
	// "auto" dispatcher, if it ran (nil otherwise).
	Best results.Row
	Auto *results.Row
	// factor is the collective's bus factor at World.
	factor float64
}

// PeerBusBW is the peer's bus bandwidth in GB/s, as nccl-tests computes
// it.
func (r PeerRow) PeerBusBW() float64 {
	if r.Peer <= 0 {
		return 0
	}
	return float64(r.Bytes) / r.Peer / 1e9 * r.factor
}

// Ratio is nexar-live's best busbw over the peer's.
func (r PeerRow) Ratio() float64 { return r.Best.BusBW / r.PeerBusBW() }

// ComparePeer pairs each peer sample with nexar-live's results of the same
// collective, world size and size: the fastest algorithm there, and auto.
// Samples nexar-live has no result for, and point-to-point ones, are
// left out.
func ComparePeer(rs []results.Row, peer []calibrate.Sample) ([]PeerRow, error) {
	var out []PeerRow
	for _, s := range peer {
		if s.Collective == calibrate.PointToPoint {
			continue
		}
		coll, err := algos.Lookup(s.Collective)
		if err != nil {
			return nil, err
		}
		row := PeerRow{Collective: s.Collective, World: s.World, Bytes: s.Bytes, Peer: s.Time, factor: coll.BusFactor(s.World)}
		found := false
		for i, r := range rs {
			if r.Collective != s.Collective || r.World != s.World || r.Bytes != s.Bytes || r.Time <= 0 {
				continue
			}
			if r.Algorithm == "auto" {
				row.Auto = &rs[i]
			}
			if !found || r.Time < row.Best.Time {
				row.Best, found = r, true
			}
		}
		if found {
			out = append(out, row)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("verify: no result shares a collective, world size and size with the peer's")
	}
	return out, nil
}

// WritePeerTable prints the comparison: per size the peer's time and
// busbw, nexar-live's fastest algorithm with its time and busbw, and the
// ratio of the two busbws (above 1: nexar-live is faster).
func WritePeerTable(w io.Writer, rows []PeerRow, peerName string) {
	fmt.Fprintf(w, "%-10s %5s %10s  %11s %9s  %-22s %11s %9s  %11s  %8s\n", "collective", "world", "size",
		peerName+" time", "busbw", "nexar-live fastest", "time", "busbw", "auto busbw", "ratio")
	for _, r := range rows {
		auto := "-"
		if r.Auto != nil {
			auto = fmt.Sprintf("%.3f", r.Auto.BusBW)
		}
		fmt.Fprintf(w, "%-10s %5d %10s  %11s %9.3f  %-22s %11s %9.3f  %11s  %8.2f\n", r.Collective, r.World, units.FormatBytesExact(int64(r.Bytes)),
			units.FormatSecondsG(r.Peer), r.PeerBusBW(), r.Best.Algorithm, units.FormatSecondsG(r.Best.Time), r.Best.BusBW, auto, r.Ratio())
	}
	fmt.Fprintf(w, "busbw in GB/s (nccl-tests' bus bandwidth); ratio = nexar-live's fastest / %s\n", peerName)
}
