package sweep

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sim"
)

// Row is the measurement of one point.
type Row struct {
	Collective string
	Algorithm  string
	World      int
	// Bytes is the message size run, after the collective's rounding.
	Bytes int
	DType string
	// Time is the simulated time of the collective in seconds: when the
	// last rank finished.
	Time float64
	// AlgBW is Bytes/Time in GB/s (10^9 bytes per second), and BusBW is
	// AlgBW times the collective's bus factor, as nccl-tests reports them;
	// both are 0 when Bytes or Time is.
	AlgBW, BusBW float64
}

// DataError reports that a host-data run left wrong data on a rank.
type DataError struct {
	Rank int
	Err  error
}

func (e *DataError) Error() string {
	return fmt.Sprintf("rank %d: wrong data: %v", e.Rank, e.Err)
}

func (e *DataError) Unwrap() error { return e.Err }

// RunPoint simulates p and returns its row. A failed run (a deadlock, an
// algorithm's error, wrong data) returns an error that names the point
// and wraps the simulator's error (*sim.DeadlockError or *sim.RankErrors,
// whose ranks' errors include *DataError).
func RunPoint(p Point) (Row, error) {
	send, recv, used := p.Layout()
	sz := p.DType.Size()
	host := p.Data == scenario.Host
	var chk *Check
	if host {
		m := checkFor(p.Collective)
		if m == nil {
			return Row{}, fmt.Errorf("%v: collective %s has no host-data check", p, p.Collective.Name)
		}
		chk = m(p)
	}
	inPlace := p.InPlace()
	res, err := sim.Run(sim.Config{World: p.World, Model: p.Model, HostData: host}, func(ctx context.Context, l algos.Link) error {
		c := algos.Call{DType: p.DType, Op: p.Op, Root: p.Root, Params: p.Params, Buf: l.Alloc(recv * sz)}
		if !inPlace {
			c.Send = l.Alloc(send * sz)
		}
		if chk != nil {
			chk.Fill(l.Rank(), &c)
		}
		if err := p.Algorithm.Run(ctx, l, c); err != nil {
			return err
		}
		if chk != nil {
			if err := chk.Verify(l.Rank(), c); err != nil {
				return &DataError{Rank: l.Rank(), Err: err}
			}
		}
		return nil
	})
	if err != nil {
		return Row{}, fmt.Errorf("%v: %w", p, err)
	}
	row := Row{
		Collective: p.Collective.Name,
		Algorithm:  p.Algorithm.Name,
		World:      p.World,
		Bytes:      used * sz,
		DType:      p.DType.String(),
		Time:       res.End.Seconds(),
	}
	if row.Bytes > 0 && row.Time > 0 {
		row.AlgBW = float64(row.Bytes) / row.Time / 1e9
		row.BusBW = row.AlgBW * p.Collective.BusFactor(p.World)
	}
	return row, nil
}

// Options tune Run.
type Options struct {
	// Progress, if not nil, is called before the first point of each
	// sweep with that sweep's points.
	Progress func(sweep int, points []Point)
}

// Run runs points one after the other, in order, and passes each row to
// emit. It stops at the first failed point, error of emit, or cancellation
// of ctx (checked between points).
func Run(ctx context.Context, points []Point, opt Options, emit func(Row) error) error {
	for i, p := range points {
		if err := ctx.Err(); err != nil {
			return err
		}
		if opt.Progress != nil && (i == 0 || points[i-1].Sweep != p.Sweep) {
			j := i
			for j < len(points) && points[j].Sweep == p.Sweep {
				j++
			}
			opt.Progress(p.Sweep, points[i:j])
		}
		row, err := RunPoint(p)
		if err != nil {
			return err
		}
		if err := emit(row); err != nil {
			return err
		}
	}
	return nil
}
