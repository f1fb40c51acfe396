package nexarsim

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/sweep"
)

// shardOutput is the output directory of one shard.
type shardOutput struct {
	dir  string
	m    *manifest
	rows []sweep.Row
}

// readShards reads and checks the outputs of the shards of one run: the
// same scenario (by hash) and shard count, every shard exactly once, each
// with the rows its share of the points gives.
func readShards(dirs []string) ([]*shardOutput, error) {
	var shards []*shardOutput
	for _, dir := range dirs {
		m, err := readManifest(dir)
		if err != nil {
			return nil, notMerged(dir, err)
		}
		rows, err := readShardRows(filepath.Join(dir, resultsFile))
		if err != nil {
			return nil, err
		}
		if err := applyChanges(rows, m.Changes); err != nil {
			return nil, fmt.Errorf("%s: %v", filepath.Join(dir, manifestFile), err)
		}
		shards = append(shards, &shardOutput{dir: dir, m: m, rows: rows})
	}
	first := shards[0].m
	byIndex := make([]*shardOutput, first.Shards+1)
	for _, s := range shards {
		switch {
		case s.m.Hash != first.Hash:
			return nil, fmt.Errorf("%s is of scenario %q (%s), %s of %q (%s): not shards of one run",
				s.dir, s.m.Scenario, short(s.m.Hash), shards[0].dir, first.Scenario, short(first.Hash))
		case s.m.Shards != first.Shards || s.m.Points != first.Points:
			return nil, fmt.Errorf("%s is shard %d/%d of %d points, %s shard %d/%d of %d: not shards of one run",
				s.dir, s.m.Shard, s.m.Shards, s.m.Points, shards[0].dir, first.Shard, first.Shards, first.Points)
		case s.m.Shard < 1 || s.m.Shard > s.m.Shards:
			return nil, fmt.Errorf("%s: shard %d/%d is out of range", s.dir, s.m.Shard, s.m.Shards)
		case byIndex[s.m.Shard] != nil:
			return nil, fmt.Errorf("%s and %s are both shard %d/%d", byIndex[s.m.Shard].dir, s.dir, s.m.Shard, s.m.Shards)
		}
		want := 0
		for k := s.m.Shard - 1; k < s.m.Points; k += s.m.Shards {
			want++
		}
		if len(s.rows) != want || s.m.Rows != want {
			return nil, fmt.Errorf("%s: shard %d/%d has %d rows, want %d", s.dir, s.m.Shard, s.m.Shards, len(s.rows), want)
		}
		byIndex[s.m.Shard] = s
	}
	var missing []string
	for i := 1; i <= first.Shards; i++ {
		if byIndex[i] == nil {
			missing = append(missing, fmt.Sprintf("%d/%d", i, first.Shards))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing shard(s) %s of scenario %q", strings.Join(missing, ", "), first.Scenario)
	}
	return byIndex[1:], nil
}

// readShardRows reads the rows of a shard's results.csv, as every reader
// of results.csv does (results.Read: columns by name, earlier versions'
// names), and refuses one with columns nexar-sim does not write, which
// the merged results.csv would drop.
func readShardRows(path string) ([]sweep.Row, error) {
	t, err := results.ReadFile(path, results.SimColumns...)
	if err != nil {
		return nil, err
	}
	if cols := foreignColumns(t); cols != nil {
		return nil, fmt.Errorf("%s has the %s, which nexar-sim does not write and the merged results.csv would not keep", path, columnList(cols))
	}
	rows, err := sweep.Rows(t)
	if err != nil {
		return nil, results.WithFile(err, path)
	}
	return rows, nil
}

// interleave puts the shards' rows back in the order of the points: shard
// i holds points i-1, i-1+n, ...
func interleave(shards []*shardOutput, points int) []sweep.Row {
	n := len(shards)
	rows := make([]sweep.Row, points)
	for i, s := range shards {
		for j, r := range s.rows {
			rows[i+j*n] = r
		}
	}
	return rows
}

func mergeCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	out := fs.String("out", "", "output directory")
	noPlots := fs.Bool("no-plots", false, "write no figures")
	quiet := fs.Bool("quiet", false, "say nothing on success")
	fs.BoolVar(quiet, "q", false, "say nothing on success")
	dirs, status, ok := cmdline.ParseCmd("merge", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	switch {
	case len(dirs) == 0:
		return cmdline.UsageError(stderr, "merge", "no shard directories given")
	case *out == "":
		return cmdline.UsageError(stderr, "merge", "missing --out DIR")
	}
	shards, err := readShards(dirs)
	if err != nil {
		fmt.Fprintf(stderr, "nexar-sim merge: %v\n", err)
		return exitUsage
	}
	m := *shards[0].m
	m.Shard, m.Shards, m.Rows, m.Files = 1, 1, m.Points, nil
	rows := interleave(shards, m.Points)
	if m.Changes, err = changesOf(rows); err != nil {
		fmt.Fprintf(stderr, "nexar-sim merge: %v\n", err)
		return exitFailed
	}
	o, err := newOutputs(*out)
	if err != nil {
		return cmdline.UsageError(stderr, "merge", "--out: %v", err)
	}
	if err := writeCSV(o, rows); err != nil {
		o.abort()
		fmt.Fprintf(stderr, "nexar-sim merge: %v\n", err)
		return exitFailed
	}
	notes, err := writeFull(o, m, rows, *noPlots)
	if err == nil {
		err = stageReport(o, m, "merge", args, notes) // report.html (jsonout.go)
	}
	if err == nil {
		err = o.commit(m)
	}
	if err != nil {
		o.abort()
		fmt.Fprintf(stderr, "nexar-sim merge: %v\n", err)
		return exitFailed
	}
	if !*quiet {
		for _, n := range notes {
			fmt.Fprintf(stderr, "nexar-sim: note: %s\n", n)
		}
		fmt.Fprintf(stderr, "nexar-sim: merged %d shards of %q into %s: %s\n", len(shards), m.Scenario, *out, strings.Join(o.files, ", "))
	}
	return exitOK
}
