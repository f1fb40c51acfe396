package nexarsim

import (
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/nexar-go/nexar-go/algos/nccl/tuner"
	"github.com/nexar-go/nexar-go/derive"
	"github.com/nexar-go/nexar-go/plots"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/sweep"
)

// Names of the files of a run's output directory.
const (
	resultsFile    = "results.csv"
	jsonFile       = "results.json"
	tuningFile     = "tuning.toml"
	crossoversFile = "crossovers.csv"
)

// autoBudgetPct is the slowdown of auto the figures draw as acceptable:
// the 5% the derived tables are held to.
const autoBudgetPct = 5

// newResultsWriter returns a writer of nexar-sim's results.csv to w: its
// columns, times to the picosecond of the simulator's clock.
func newResultsWriter(w io.Writer) *results.Writer {
	return results.NewWriter(w, results.SimColumns, results.SimDecimals)
}

// writeCSV stages results.csv.
func writeCSV(o *outputs, rows []sweep.Row) error {
	return o.write(resultsFile, func(w io.Writer) error {
		cw := newResultsWriter(w)
		if err := cw.WriteHeader(); err != nil {
			return err
		}
		for _, r := range rows {
			if err := cw.Write(r.Row); err != nil {
				return err
			}
		}
		return cw.Flush()
	})
}

// writeFull stages everything a whole run writes besides results.csv:
// results.json, crossovers.csv, tuning.toml (when some collective had
// competing algorithms) and, unless noPlots, the figures. It returns the
// derivation's notes, for the user.
func writeFull(o *outputs, m manifest, rows []sweep.Row, noPlots bool) ([]string, error) {
	opt := derive.Options{
		Description: fmt.Sprintf("derived by nexar-sim from scenario %q: per swept world size, the fastest algorithm at each swept message size, switching at the crossovers interpolated on the log scale", m.Scenario),
		Source:      fmt.Sprintf("nexar-sim run %s (scenario sha256 %s)", filepath.Base(m.File), short(m.Hash)),
		Transport:   m.Transport,
	}
	if cl := m.NCCLCluster; cl != nil {
		opt.Channels = cl.Channels
		opt.Nodes = func(world int) int { return (world + cl.GPUsPerNode - 1) / max(cl.GPUsPerNode, 1) }
		if p, err := tuner.NewPolicy(*cl); err == nil {
			opt.Policy = p
		}
	}
	res, err := derive.Derive(rows, opt)
	if err != nil {
		return nil, err
	}
	rep, err := resultsJSON(m, rows, res)
	if err != nil {
		return nil, err
	}
	if err := o.write(jsonFile, rep.Encode); err != nil {
		return nil, err
	}
	if err := o.write(crossoversFile, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write([]string{"collective", "dtype", "world", "below", "above", "bytes", "lo_bytes", "hi_bytes"})
		for _, x := range res.Crossovers {
			cw.Write([]string{x.Collective, x.DType, strconv.Itoa(x.World), x.Below, x.Above,
				strconv.FormatFloat(x.Bytes, 'f', 0, 64), strconv.Itoa(x.Lo), strconv.Itoa(x.Hi)})
		}
		// realnet's two paths cross once at most; a pair of ranks.
		if x := res.Transport; x != nil && x.Hi > 0 {
			cw.Write([]string{"transport", "", "2", "quic", "bulk",
				strconv.FormatFloat(x.Bytes, 'f', 0, 64), strconv.Itoa(x.Lo), strconv.Itoa(x.Hi)})
		}
		cw.Flush()
		return cw.Error()
	}); err != nil {
		return nil, err
	}
	if res.Tuning != nil {
		if err := o.write(tuningFile, func(w io.Writer) error {
			_, err := res.Tuning.WriteTo(w)
			return err
		}); err != nil {
			return nil, err
		}
	}
	if res.NCCLTuner != nil {
		if err := o.write(derive.NCCLTunerFile, func(w io.Writer) error {
			_, err := res.NCCLTuner.WriteTo(w)
			return err
		}); err != nil {
			return nil, err
		}
	}
	if !noPlots {
		if err := writePlots(o, rows, m); err != nil {
			return nil, err
		}
	}
	return res.Notes, nil
}

// writePlots stages the figures of rows, with m's link bandwidth as the
// busbw ceiling and its scenario and network as their subtitle.
func writePlots(o *outputs, rows []sweep.Row, m manifest) error {
	pts := make([]plots.Point, len(rows))
	for i, r := range rows {
		pts[i] = plots.Point{Collective: r.Collective, Algorithm: r.Algorithm, DType: r.DType, World: r.World,
			Bytes: int64(r.Bytes), Time: r.Time, BusBW: r.BusBW, Spread: r.Spread}
	}
	return stagePlots(o, pts, plots.Options{CeilingGBps: m.LinkBandwidth / 1e9, AutoBudgetPct: autoBudgetPct, Subtitle: m.subtitle()})
}

// stagePlots draws pts into the staging directory.
func stagePlots(o *outputs, pts []plots.Point, opt plots.Options) error {
	paths, err := plots.WriteAll(o.stage, pts, opt)
	if err != nil {
		return err
	}
	for _, p := range paths {
		o.add(filepath.Base(p))
	}
	return nil
}

// short abbreviates a hash for messages.
func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}
