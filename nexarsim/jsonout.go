package nexarsim

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/nexar-go/nexar-go/derive"
	"github.com/nexar-go/nexar-go/internal/cli"
	"github.com/nexar-go/nexar-go/report"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// resultsJSON is the results.json of a whole run of manifest m
// (report.JSON, the schema nexar-live's follows too; docs/results-json.md):
// its rows, and what derivation read out of them (res).
func resultsJSON(m manifest, rows []sweep.Row, res *derive.Result) (*report.JSON, error) {
	rep := &report.JSON{Tool: report.ToolSim, Scenario: report.Scenario{Scenario: m.Scenario, Description: m.Description, File: m.File, Hash: m.Hash,
		Network: m.Network, NetworkSummary: m.NetworkSummary, LinkBandwidth: m.LinkBandwidth, Shard: m.Shard, Shards: m.Shards, Points: m.Points, Rows: m.Rows},
		Crossovers: res.Crossovers, BestParams: res.BestParams, Transport: res.Transport, Tuning: res.Tuning != nil,
		NCCLTuner: res.NCCLTuner != nil, Notes: res.Notes}
	var err error
	if m.Transport != nil {
		if rep.Scenario.Transport, err = json.Marshal(m.Transport); err != nil {
			return nil, err
		}
	}
	if m.NCCLCluster != nil {
		if rep.Scenario.NCCLCluster, err = json.Marshal(m.NCCLCluster); err != nil {
			return nil, err
		}
	}
	rep.Rows = make([]report.Row, len(rows))
	for i, r := range rows {
		rep.Rows[i] = report.RowOf(r.Row, false)
		rep.Rows[i].Symmetry = r.Symmetry
		if x := r.Recovery; x != nil {
			rep.Rows[i].Recovery = &report.Recovery{FailedRank: x.Failed, WorldFrom: x.World, WorldTo: x.World - 1, Hit: x.Hit,
				FailedAt: x.FailedAt.Seconds(), Detected: x.Detected.Seconds(), Agreed: x.Agreed.Seconds(), Rebuilt: x.Rebuilt.Seconds(), End: x.End.Seconds()}
		}
		if g := r.Join; g != nil {
			rep.Rows[i].Join = &report.Join{Joined: g.Joined, WorldFrom: g.World, WorldTo: g.World + g.Joined,
				Agreed: g.Agreed.Seconds(), Rebuilt: g.Rebuilt.Seconds(), End: g.End.Seconds()}
		}
	}
	return rep, nil
}

// stageReport stages report.html (package report) of a whole run of
// manifest m, made by nexar-sim's subcommand cmd with args, from the
// files staged so far; notes are derivation's.
func stageReport(o *outputs, m manifest, cmd string, args []string, notes []string) error {
	info := report.Info{Title: "nexar-sim " + cmd, Command: cli.CommandLine(append([]string{"nexar-sim", cmd}, args...)), Scenario: m.Scenario, ScenarioFile: m.File,
		Description: m.Description, Network: m.NetworkSummary, Notes: notes}
	if info.Network == "" {
		info.Network = m.Network
	}
	info.Facts = append(info.Facts, report.Fact{Name: "points", Value: strconv.Itoa(m.Points)}, report.Fact{Name: "times", Value: simTiming})
	if err := report.Write(o.stage, info); err != nil {
		return err
	}
	o.add(report.File)
	return nil
}

// writeStepReport writes report.html (package report) into out, where
// nexar-sim step, given args, wrote the outputs of the scenarios scens.
func writeStepReport(out string, args []string, scens []*scenario.Scenario) error {
	info := report.Info{Title: "nexar-sim step", Command: cli.CommandLine(append([]string{"nexar-sim", "step"}, args...))}
	for _, s := range scens {
		info.Facts = append(info.Facts, report.Fact{Name: s.Name, Value: fmt.Sprintf("%s: %s on %s, %d point(s)", s.File, s.Workload.Model, s.Network.Summary, len(s.Workload.Points))})
	}
	return report.Write(out, info)
}

// finiteBandwidth is bw, or 0 (no single figure) where it is not finite:
// a network whose links never bind (bandwidth "inf", as loopback's
// model) has no busbw ceiling, and JSON no infinity.
func finiteBandwidth(bw float64) float64 {
	if math.IsInf(bw, 0) || math.IsNaN(bw) {
		return 0
	}
	return bw
}
