package live

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// Files a run writes into its output directory.
const (
	ResultsFile        = "results.csv"
	PartialResultsFile = "results.partial.csv" // what a failed run had measured
	CompareFile        = "compare.csv"
	ComparePlotFile    = "compare.png"
)

// Output says where rank 0 of a run puts what it measures.
type Output struct {
	// Dir receives results.csv and, unless NoCompare, compare.csv and
	// compare.png; empty writes no files.
	Dir string
	// Table, if not nil, receives the nccl-tests-style table as points
	// finish.
	Table io.Writer
	// Preamble lines head the table.
	Preamble []string
	// Timing is named in the table's block headers.
	Timing Timing
	// Scenario is the scenario run, whose network model predicts each
	// point for compare.csv.
	Scenario  *scenario.Scenario
	NoCompare bool

	// Device is where the ranks' buffers are (DeviceHost if ""): a run on
	// GPUs adds the device column to results.csv, and compare.csv predicts
	// its points with the staging copies (see networkFor).
	Device string
	// Transport, if set, is the thresholds the ranks' transport uses:
	// results.csv records them in its ThresholdColumns.
	Transport *Thresholds
}

// WrongDataError reports a run that finished but left wrong elements:
// its results are written, with the count in their wrong column.
type WrongDataError struct {
	Wrong int64
	// Points is the number of points with wrong elements.
	Points int
}

func (e *WrongDataError) Error() string {
	return fmt.Sprintf("live: %d wrong element(s) in %d point(s): see the wrong column of %s", e.Wrong, e.Points, ResultsFile)
}

// Report is what a run measured and predicted.
type Report struct {
	Results     []Result
	Comparisons []Comparison
	// Warnings are problems that did not fail the run (a prediction that
	// could not be made).
	Warnings []string
	// Recoveries are the rebuilds of the world after a lost rank
	// (--recovery shrink; recovery.go).
	Recoveries []RecoveryEvent
}

// recorder writes rank 0's outputs as results arrive.
type recorder struct {
	out   Output
	tmp   *os.File
	csv   *ResultsWriter
	table *Table
	rep   Report
	err   error
}

func newRecorder(out Output) (*recorder, error) {
	r := &recorder{out: out}
	if out.Table != nil {
		r.table = NewTable(out.Table, out.Preamble...)
		r.table.Timing = out.Timing
	}
	if out.Dir == "" {
		return r, nil
	}
	if err := os.MkdirAll(out.Dir, 0o777); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(out.Dir, tempPattern)
	if err != nil {
		return nil, err
	}
	f.Chmod(0o644) // CreateTemp makes it private; results are not
	r.tmp = f
	r.csv = NewResultsWriter(f)
	r.csv.Device = out.Device
	r.csv.Transport = out.Transport
	if err := r.csv.WriteHeader(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *recorder) add(p sweep.Point, res Result) {
	res.Device = r.out.Device
	res.Transport = r.out.Transport
	r.rep.Results = append(r.rep.Results, res)
	if r.table != nil {
		r.table.Add(p, res)
	}
	if r.csv != nil && r.err == nil {
		r.err = r.csv.Write(res)
	}
}

// finish closes the outputs. After a failed run (runErr) the rows measured
// so far go to results.partial.csv; after a successful one to results.csv,
// followed by the comparison with the model.
func (r *recorder) finish(runErr error) (*Report, error) {
	if r.table != nil {
		r.table.Close()
	}
	if r.tmp != nil {
		if err := r.csv.Flush(); err != nil && r.err == nil {
			r.err = err
		}
		if err := r.tmp.Close(); err != nil && r.err == nil {
			r.err = err
		}
		name := ResultsFile
		if runErr != nil {
			name = PartialResultsFile
		}
		if err := os.Rename(r.tmp.Name(), filepath.Join(r.out.Dir, name)); err != nil && r.err == nil {
			r.err = err
		}
	}
	if runErr != nil {
		return &r.rep, runErr
	}
	if r.err != nil {
		return &r.rep, fmt.Errorf("live: writing results: %w", r.err)
	}
	if !r.out.NoCompare && r.out.Scenario != nil {
		cs, err := Predict(r.out.Scenario, r.rep.Results)
		if err != nil {
			r.rep.Warnings = append(r.rep.Warnings, fmt.Sprintf("no comparison with the model: %v", err))
		} else {
			r.rep.Comparisons = cs
			if err := r.writeComparison(cs); err != nil {
				return &r.rep, err
			}
		}
	}
	var wrong int64
	points := 0
	for _, res := range r.rep.Results {
		if res.Wrong > 0 {
			wrong += res.Wrong
			points++
		}
	}
	if wrong > 0 {
		return &r.rep, &WrongDataError{Wrong: wrong, Points: points}
	}
	return &r.rep, nil
}

func (r *recorder) writeComparison(cs []Comparison) error {
	if r.out.Table != nil {
		fmt.Fprintf(r.out.Table, "# Model %q of %s: %v\n", r.out.Scenario.Network.Model, r.out.Scenario.File, Summarize(cs))
		if note := StagingNote(r.out.Scenario, r.rep.Results); note != "" {
			fmt.Fprintf(r.out.Table, "# %s\n", note)
		}
	}
	if r.out.Dir == "" {
		return nil
	}
	f, err := os.Create(filepath.Join(r.out.Dir, CompareFile))
	if err != nil {
		return err
	}
	if err := WriteCompareCSV(f, cs); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := ComparePlot(filepath.Join(r.out.Dir, ComparePlotFile), CompareSubtitle(r.out.Scenario), cs); err != nil {
		r.rep.Warnings = append(r.rep.Warnings, fmt.Sprintf("no comparison plot: %v", err))
	}
	return nil
}

// tempPattern names the temporary file a recorder writes its rows into
// before renaming it to results.csv or results.partial.csv.
const tempPattern = "." + ResultsFile + ".*.tmp"

// RemoveLeftovers removes from dir the temporary results files of
// recorders whose process was killed before it could rename them (a rank
// 0 its launcher had to kill), so that a failed or interrupted run leaves
// nothing hidden behind. Run it only once no rank of a run writes into
// dir any more.
func RemoveLeftovers(dir string) {
	if dir == "" {
		return
	}
	names, _ := filepath.Glob(filepath.Join(dir, tempPattern))
	for _, n := range names {
		os.Remove(n)
	}
}

// IsWrongData reports whether err is a WrongDataError.
func IsWrongData(err error) bool {
	var w *WrongDataError
	return errors.As(err, &w)
}
