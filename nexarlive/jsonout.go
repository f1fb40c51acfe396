package nexarlive

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/derive"
	"github.com/nexar-go/nexar-go/internal/atomicfile"
	"github.com/nexar-go/nexar-go/internal/cli"
	"github.com/nexar-go/nexar-go/report"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// runOutputs is the live.Output.Compare of a run measured with m: compare
// (comparer's: compare.csv and compare.png; nil: none), then results.json
// (report.JSON, the schema nexar-sim's follows too) and report.html
// (package report) of the run's folder.
func runOutputs(compare func(*scenario.Scenario, string, io.Writer, []results.Row) ([]string, error), m *measureFlags) func(*scenario.Scenario, string, io.Writer, []results.Row) ([]string, error) {
	return func(s *scenario.Scenario, dir string, table io.Writer, rows []results.Row) ([]string, error) {
		var warnings []string
		if compare != nil {
			w, err := compare(s, dir, table, rows)
			if warnings = w; err != nil {
				return warnings, err
			}
		}
		if dir == "" || s == nil {
			return warnings, nil
		}
		rep, notes, err := liveJSON(s, dir, rows, m.timing)
		if err != nil {
			return warnings, err
		}
		if err := writeJSON(dir, rep); err != nil {
			return warnings, err
		}
		return warnings, report.Write(dir, liveInfo(s, rows, m, notes))
	}
}

// liveJSON is the results.json of a run of s measured with timing: its
// rows, the crossovers measured among them, and the model's error where
// dir holds compare.csv. notes are what derivation left out.
func liveJSON(s *scenario.Scenario, dir string, rows []results.Row, timing string) (*report.JSON, []string, error) {
	rep := &report.JSON{Tool: report.ToolLive, Timing: timing, Scenario: report.Scenario{Scenario: s.Name, Description: s.Description, File: s.File, Hash: s.Hash,
		Network: s.Network.Model, NetworkSummary: s.Network.Summary, LinkBandwidth: s.Network.LinkBandwidth, Shard: 1, Shards: 1, Points: len(rows), Rows: len(rows)}}
	srows := make([]sweep.Row, len(rows))
	rep.Rows = make([]report.Row, len(rows))
	for i, r := range rows {
		srows[i] = sweep.Row{Row: r}
		rep.Rows[i] = report.RowOf(r, true)
	}
	res, err := derive.Derive(srows, derive.Options{
		Description: fmt.Sprintf("derived by nexar-live from the measurements of scenario %q", s.Name),
		Source:      "nexar-live run " + filepath.Base(s.File)})
	if err != nil {
		// What was measured stays good: say why there are no crossovers.
		res = &derive.Result{Notes: []string{fmt.Sprintf("no crossovers read out of the measurements: %v", err)}}
	}
	rep.Crossovers, rep.BestParams, rep.Notes = res.Crossovers, res.BestParams, res.Notes
	if rep.Model, err = report.ReadModelError(dir); err != nil {
		return nil, nil, err
	}
	return rep, res.Notes, nil
}

// writeJSON writes rep as dir's results.json, whole or not at all.
func writeJSON(dir string, rep *report.JSON) error {
	var b strings.Builder
	if err := rep.Encode(&b); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, report.JSONFile), []byte(b.String()))
}

// liveInfo is what report.html says of a run of s measured with m.
func liveInfo(s *scenario.Scenario, rows []results.Row, m *measureFlags, notes []string) report.Info {
	info := report.Info{Title: "nexar-live run", Scenario: s.Name, ScenarioFile: s.File, Description: s.Description, Network: s.Network.Summary, Notes: notes}
	// A launcher's worker (rank 0 writes the outputs) was not started by
	// the user: its command line is not theirs.
	if len(os.Args) > 1 && os.Args[1] == "run" {
		info.Command = cli.CommandLine(append([]string{"nexar-live"}, os.Args[1:]...))
	}
	if len(rows) > 0 {
		info.Facts = append(info.Facts, report.Fact{Name: "world", Value: strconv.Itoa(rows[0].World) + " ranks"})
	}
	info.Facts = append(info.Facts,
		report.Fact{Name: "timing", Value: m.timing},
		report.Fact{Name: "iterations", Value: fmt.Sprintf("%d warm-up, %d timed per point", m.warmup, m.iters)},
		report.Fact{Name: "points", Value: strconv.Itoa(len(rows))})
	return info
}

// writeStepReport writes report.html (package report) into out, where
// nexar-live step wrote what it measured of s and the model's prediction.
func writeStepReport(out string, s *scenario.Scenario) error {
	info := report.Info{Title: "nexar-live step", Scenario: s.Name, ScenarioFile: s.File, Description: s.Description, Network: s.Network.Summary}
	if len(os.Args) > 1 && os.Args[1] == "step" {
		info.Command = cli.CommandLine(append([]string{"nexar-live"}, os.Args[1:]...))
	}
	return report.Write(out, info)
}
