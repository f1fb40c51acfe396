package sweep

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/sim"
)

// NoLinksError reports that a point's network model keeps no per-link
// account: only networks built on a topology have links to account for.
type NoLinksError struct {
	// Model is the scenario's network model, such as "alpha-beta".
	Model string
}

func (e *NoLinksError) Error() string {
	return fmt.Sprintf("network model %q has no links to account for: links exist only for model = \"flow\" topologies", e.Model)
}

// CheckLinks reports whether a run of p keeps a per-link account, without
// simulating p: it builds p's network for its world (as
// scenario.Network.Check does) and returns a *NoLinksError if the network
// keeps none, or the error of building it.
func (p Point) CheckLinks() error {
	cfg := sim.Config{World: p.World, Model: p.Model(p.Seed), Machine: p.Machine()}
	res, err := sim.Run(cfg, func(context.Context, algos.Link) error { return nil })
	if err != nil {
		return err
	}
	if res.Links == nil {
		return &NoLinksError{Model: p.Network.Model}
	}
	return nil
}

// Links is the per-link account of one run of a point.
type Links struct {
	Point Point
	// Seed is the seed of the run: the point's first, p.Seed.
	Seed uint64
	// End is the run's simulated time, which the busy fractions and
	// utilisations are relative to.
	End sim.Time
	// Usage has one entry per edge of the network, in topology order.
	Usage []sim.LinkUsage
}

// RunLinks simulates p once, with the seed of its first run, and returns
// its per-link account: a *NoLinksError if the network keeps none, or an
// error naming the point and wrapping RunOnce's if the run fails. Runs are
// deterministic, so the account is that of the run behind p's row (the
// first of its repeats).
func RunLinks(p Point) (*Links, error) {
	res, err := RunOnce(p, p.Seed, nil)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", p, err)
	}
	if res.Links == nil {
		return nil, &NoLinksError{Model: p.Network.Model}
	}
	return &Links{Point: p, Seed: p.Seed, End: res.End, Usage: res.Links}, nil
}

// LinksHeader is the header of a links.csv file: the point's index in
// the plan (its row of results.csv) and the key columns of results.csv,
// the run's seed and time, then sim.LinksCSVHeader's columns.
var LinksHeader = append([]string{"point", "collective", "algorithm", "world", "bytes", "dtype", "seed", "time_s"}, sim.LinksCSVHeader...)

// WriteLinksCSV writes accounts as a links.csv file: LinksHeader, then
// every account's edges in the order given, each edge's row as
// sim.WriteLinksCSV writes it after the point's columns. An account of
// zero edges writes no rows.
func WriteLinksCSV(w io.Writer, accounts []*Links) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(LinksHeader); err != nil {
		return err
	}
	for _, a := range accounts {
		// sim formats the edges' columns; read them back to prefix the
		// point's, so that the two files never disagree on a column.
		var b bytes.Buffer
		if err := sim.WriteLinksCSV(&b, a.Usage, a.End); err != nil {
			return err
		}
		rows, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			return err
		}
		if len(rows) == 0 || !slices.Equal(rows[0], sim.LinksCSVHeader) {
			return fmt.Errorf("sim.WriteLinksCSV wrote an unexpected header")
		}
		p := a.Point
		key := []string{strconv.Itoa(p.Index), p.Collective.Name, p.VariantName(), strconv.Itoa(p.World),
			strconv.Itoa(p.UsedBytes()), p.DType.String(), strconv.FormatUint(a.Seed, 10), strconv.FormatFloat(a.End.Seconds(), 'f', results.SimDecimals, 64)}
		for _, row := range rows[1:] {
			if err := cw.Write(append(slices.Clone(key), row...)); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
