package sim

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
)

// LinkUsage is the account of one edge (one direction of a link) over a
// run: what it carried and how long it was busy, to find the bottleneck.
type LinkUsage struct {
	// Link is the edge's name, "from->to".
	Link     string
	From, To string
	// Bandwidth is the edge's bandwidth at the end of the run (after any
	// slowdown), in bytes per second; +Inf if unlimited.
	Bandwidth float64
	Latency   Time
	// Bytes is the bytes carried (a message counts on every edge of its
	// route; bytes of a message rerouted or cut count where they went).
	Bytes int64
	// Messages is the number of messages that were routed over the edge.
	Messages int64
	// Busy is the time during which at least one message was sending over
	// the edge.
	Busy Time
	// PeakFlows is the most messages that crossed the edge at once.
	PeakFlows int
	// Failed is set if the edge failed during the run.
	Failed bool
}

// Utilisation is the fraction of the edge's capacity over [0, end) that
// it used: Bytes / (Bandwidth * end); 0 for unlimited edges.
func (u LinkUsage) Utilisation(end Time) float64 {
	if end <= 0 || math.IsInf(u.Bandwidth, 1) || u.Bandwidth <= 0 {
		return 0
	}
	return float64(u.Bytes) / (u.Bandwidth * end.Seconds())
}

// LinksCSVHeader is the header row WriteLinksCSV writes. Names end in
// their unit (_s seconds, _bytes_per_s); bytes_carried and
// messages_carried are the edge's, named apart from the bytes of the
// collective call that a links.csv row starts with.
var LinksCSVHeader = []string{"link", "from", "to", "bandwidth_bytes_per_s", "latency_s", "bytes_carried", "messages_carried", "busy_s", "busy_fraction", "utilisation", "peak_flows", "failed"}

// WriteLinksCSV writes links as CSV (the links.csv of a run): a header
// row, then one row per edge in topology order, with times in seconds to
// the clock's picosecond (12 decimals) and busy_fraction and utilisation
// relative to end, the run's End. Edges that carried nothing are written
// too, so that rows line up across runs.
func WriteLinksCSV(w io.Writer, links []LinkUsage, end Time) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(LinksCSVHeader); err != nil {
		return err
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, u := range links {
		busyFrac := 0.0
		if end > 0 {
			busyFrac = float64(u.Busy) / float64(end)
		}
		bw := "inf"
		if !math.IsInf(u.Bandwidth, 1) {
			bw = g(u.Bandwidth)
		}
		row := []string{u.Link, u.From, u.To, bw, secondsText(u.Latency),
			strconv.FormatInt(u.Bytes, 10), strconv.FormatInt(u.Messages, 10),
			secondsText(u.Busy), g(busyFrac), g(u.Utilisation(end)),
			strconv.Itoa(u.PeakFlows), strconv.FormatBool(u.Failed)}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// secondsText writes t in seconds with 12 decimals, its picoseconds
// exactly: "0.000001000000".
func secondsText(t Time) string {
	sign := ""
	if t < 0 {
		sign, t = "-", -t
	}
	return fmt.Sprintf("%s%d.%012d", sign, t/Second, t%Second)
}
