package nexarsim

import (
	"io"
	"slices"
	"strconv"

	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/sweep"
)

// simTiming heads each block of nexar-sim's table: what its time column
// is.
const simTiming = "simulated (time = the median over the point's repeats of the slowest rank's time)"

// writeTable prints the rows of a finished run on w as nccl-tests prints
// its results (results.NCCLTable, as nexar-live does): a block per sweep,
// collective, algorithm variant and world size, in the plan's order, its
// lines in the order of the points (dtype, then size). points[i] is the
// point of rows[i]; a row without one (none: a merge) prints without its
// count and root. stdout holds nothing else, so that it reads as a log of
// nccl-tests (calibrate reads it back).
func writeTable(w io.Writer, m manifest, points []sweep.Point, rows []sweep.Row) {
	var order []string
	blocks := map[string][]results.TableLine{}
	for i, r := range rows {
		l := results.TableLine{Row: r.Row, Root: -1}
		sw := 0
		if i < len(points) {
			l, sw = sweep.TableLine(points[i], r.Row, nil), points[i].Sweep
		}
		key := strconv.Itoa(sw) + "\x00" + r.Collective + "\x00" + r.Algorithm + "\x00" + strconv.Itoa(r.World)
		if _, ok := blocks[key]; !ok {
			order = append(order, key)
		}
		blocks[key] = append(blocks[key], l)
	}
	t := results.NewNCCLTable(w, "nexar-sim run: "+m.subtitle())
	t.Header = "timing: " + simTiming
	for _, key := range order {
		b := blocks[key]
		// The points' order, but a block's dtypes together, in the order
		// they come.
		rank := map[string]int{}
		for _, l := range b {
			if _, ok := rank[l.DType]; !ok {
				rank[l.DType] = len(rank)
			}
		}
		slices.SortStableFunc(b, func(x, y results.TableLine) int { return rank[x.DType] - rank[y.DType] })
		for _, l := range b {
			t.Add(l)
		}
	}
	t.Close()
}
