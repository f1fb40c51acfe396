package sweep

import "github.com/nexar-go/nexar-go/results"

// TableLine is the line of nccl-tests' table (results.NCCLTable) of the
// row r of point p: r with p's element count, reduction operator and
// root, and times, the timed iterations (none: the row's minimum, mean
// and maximum).
func TableLine(p Point, r results.Row, times []float64) results.TableLine {
	_, _, used := p.Layout()
	l := results.TableLine{Row: r, Count: used, Root: -1, Times: times}
	if p.Collective != nil && p.Collective.Reduces {
		l.Redop = p.Op.String()
	}
	if p.Collective != nil && p.Collective.Rooted {
		l.Root = p.Root
	}
	return l
}
