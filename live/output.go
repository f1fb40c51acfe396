package live

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// Files a run writes into its output directory (Output.Compare may add
// its own: nexar-live's compare.csv and compare.png, package verify's).
const (
	ResultsFile        = "results.csv"
	PartialResultsFile = "results.partial.csv" // what a failed run had measured
)

// Output says where rank 0 of a run puts what it measures.
type Output struct {
	// Dir receives results.csv (and what Compare writes); empty writes
	// no files.
	Dir string
	// Table, if not nil, receives the nccl-tests-style table as points
	// finish.
	Table io.Writer
	// Preamble lines head the table.
	Preamble []string
	// Timing is named in the table's block headers.
	Timing Timing
	// MinMax adds the fastest, mean and slowest timed iteration of each
	// point to the table, and the mean (results.MinMaxColumns) to
	// results.csv (nexar-live run --minmax, OSU's -f).
	MinMax bool
	// Scenario is the scenario run (Worker sets it from its file), which
	// Compare holds the results against.
	Scenario *scenario.Scenario
	// Compare, if not nil, is called on rank 0 once results.csv holds
	// every row of a run that finished (wrong data included), with the
	// Scenario, Dir, Table and the rows: it holds them against a model.
	// nexar-live's is verify.CompareRun, which predicts each point on the
	// scenario's network and writes compare.csv and compare.png into the
	// directory, and a summary into the table. Its warnings go into the
	// Report; its error fails the run.
	Compare func(s *scenario.Scenario, dir string, table io.Writer, rows []results.Row) (warnings []string, err error)

	// Device is where the ranks' buffers are (DeviceHost if ""): a run on
	// GPUs adds the device column to results.csv (and a comparison
	// predicts its points with the staging copies).
	Device string
	// Transport, if set, is the thresholds the ranks' transport uses:
	// results.csv records them in its results.ThresholdColumns.
	Transport *Thresholds

	// Started, if not nil, is called on rank 0 with the index of each
	// point as the rank starts it (an in-process run's progress; a
	// launcher follows its workers' on their status pipes).
	Started func(index int)

	// Resume are the rows of the run this one resumes (the job's first
	// points, measured already), which go first in results.csv and in
	// the comparison; ResumeFile is the partial file they came from,
	// removed once results.csv holds them.
	Resume     []Result
	ResumeFile string
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

// Report is what a run measured.
type Report struct {
	Results []Result
	// Warnings are problems that did not fail the run (Output.Compare's:
	// a prediction that could not be made).
	Warnings []string
	// Recoveries are the rebuilds of the world after a lost rank
	// (--recovery shrink; recovery.go).
	Recoveries []RecoveryEvent
}

// recorder writes rank 0's outputs as results arrive. Its rows go into a
// temporary file beside results.csv as they come (the name says whose
// process writes it: a later run can tell one whose writer died), and
// that file becomes results.csv only when the run succeeded and every
// row was written; otherwise it becomes the partial file (SavePartial),
// which never replaces what an earlier run left.
type recorder struct {
	out   Output
	tmp   *os.File
	csv   *results.Writer
	table *Table
	rep   Report
	err   error
}

func newRecorder(out Output) (*recorder, error) {
	r := &recorder{out: out}
	if out.Table != nil {
		r.table = NewTable(out.Table, out.Preamble...)
		r.table.Timing = out.Timing
		r.table.MinMax = out.MinMax
	}
	if out.Dir == "" {
		return r, nil
	}
	if err := os.MkdirAll(out.Dir, 0o777); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(out.Dir, fmt.Sprintf(tempFormat, os.Getpid()))
	if err != nil {
		return nil, err
	}
	f.Chmod(0o644) // CreateTemp makes it private; results are not
	r.tmp = f
	r.csv = newResultsWriter(f, out.Device, out.Transport)
	if out.MinMax {
		r.csv = results.NewWriter(f, results.WithMinMax(resultsColumns(out.Device, out.Transport)), results.LiveDecimals)
	}
	if err := r.csv.WriteHeader(); err != nil {
		f.Close()
		os.Remove(f.Name()) // nothing measured yet
		return nil, err
	}
	for _, res := range out.Resume {
		r.rep.Results = append(r.rep.Results, res)
		r.write(res)
	}
	return r, nil
}

func (r *recorder) add(p sweep.Point, res Result) {
	res.Device = r.out.Device
	res.setTransport(r.out.Transport)
	if r.out.MinMax && len(res.Times) > 0 {
		// To the nanosecond of the clock, as results.csv holds it.
		_, avg, _ := results.MinAvgMax(res.Times)
		res.TimeAvg = math.Round(avg*1e9) / 1e9
	}
	r.rep.Results = append(r.rep.Results, res)
	if r.table != nil {
		r.table.Add(p, res)
	}
	r.write(res)
}

// write writes res to the results file, on this run's device and with its
// thresholds (a resumed row was measured with them too), and flushes it:
// a run that dies later keeps the rows already measured.
func (r *recorder) write(res Result) {
	if r.csv == nil || r.err != nil {
		return
	}
	res.Device = r.out.Device
	res.setTransport(r.out.Transport)
	if r.err = r.csv.Write(res.Row); r.err == nil {
		r.err = r.csv.Flush()
	}
}

// finish closes the outputs. After a successful run whose every row was
// written, the rows go to results.csv, followed by Output.Compare's
// comparison with the model. After a failed run (runErr), or one whose rows could not all
// be written (a full disk), what was written goes to the partial file,
// and an earlier results.csv is left as it was.
func (r *recorder) finish(runErr error) (*Report, error) {
	if r.table != nil {
		r.table.Close()
	}
	partial := ""
	if r.tmp != nil {
		if err := r.csv.Flush(); err != nil && r.err == nil {
			r.err = err
		}
		if err := r.tmp.Close(); err != nil && r.err == nil {
			r.err = err
		}
		if runErr == nil && r.err == nil {
			if err := os.Rename(r.tmp.Name(), filepath.Join(r.out.Dir, ResultsFile)); err != nil {
				r.err = err
			} else if r.out.ResumeFile != "" {
				os.Remove(r.out.ResumeFile) // its rows are in results.csv
			}
		}
		if runErr != nil || r.err != nil {
			var err error
			if partial, err = SavePartial(r.out.Dir, r.tmp.Name()); err != nil {
				partial = r.tmp.Name() // left where it is: say so
				if r.err == nil {
					r.err = err
				}
			}
		}
	}
	if runErr != nil {
		return &r.rep, runErr
	}
	if r.err != nil {
		if partial != "" {
			return &r.rep, fmt.Errorf("live: writing results: %w (the rows written are in %s)", r.err, partial)
		}
		return &r.rep, fmt.Errorf("live: writing results: %w", r.err)
	}
	if r.out.Compare != nil {
		warnings, err := r.out.Compare(r.out.Scenario, r.out.Dir, r.out.Table, Rows(r.rep.Results))
		r.rep.Warnings = append(r.rep.Warnings, warnings...)
		if err != nil {
			return &r.rep, err
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

// tempFormat names the temporary file a recorder writes its rows into
// before renaming it to results.csv or the partial file: the process id
// of its writer, then a random part. tempGlob matches them all.
const (
	tempFormat = "." + ResultsFile + ".%d.*.tmp"
	tempGlob   = "." + ResultsFile + ".*.tmp"
)

// SavePartial renames src, a file of rows a run could not finish, to
// dir's results.partial.csv and returns that path. A partial file already
// there (an earlier run's) is kept: it is renamed to the first free
// results.partial.N.csv first, so that no measured row is ever lost.
func SavePartial(dir, src string) (string, error) {
	dst := filepath.Join(dir, PartialResultsFile)
	if _, err := os.Lstat(dst); err == nil {
		base := strings.TrimSuffix(PartialResultsFile, ".csv")
		for n := 1; ; n++ {
			older := filepath.Join(dir, fmt.Sprintf("%s.%d.csv", base, n))
			if _, err := os.Lstat(older); errors.Is(err, os.ErrNotExist) {
				if err := os.Rename(dst, older); err != nil {
					return "", err
				}
				break
			}
		}
	}
	if err := os.Rename(src, dst); err != nil {
		return "", err
	}
	return dst, nil
}

// WriterAlive reports whether the process that a run's temporary results
// file names (its pid, tempFormat) is still running, not a zombie: the
// file is then in use, and RecoverLeftovers leaves it alone.
func WriterAlive(tempFile string) bool {
	var pid int
	_, err := fmt.Sscanf(filepath.Base(tempFile), "."+ResultsFile+".%d.", &pid)
	return err == nil && processAlive(pid)
}

// RecoverLeftovers saves as partial files (SavePartial), oldest first, the
// temporary results files in dir whose writer is gone: a rank 0 killed
// before it could rename its own, or every rank of a launcher that was
// killed. It returns the paths they were saved at, newest last. A file
// whose writer still runs on this host is left alone.
func RecoverLeftovers(dir string) ([]string, error) {
	if dir == "" {
		return nil, nil
	}
	names, err := filepath.Glob(filepath.Join(dir, tempGlob))
	if err != nil {
		return nil, err
	}
	type leftover struct {
		name string
		mod  time.Time
	}
	var found []leftover
	for _, n := range names {
		if WriterAlive(n) {
			continue
		}
		if info, err := os.Stat(n); err == nil {
			found = append(found, leftover{n, info.ModTime()})
		}
	}
	slices.SortFunc(found, func(a, b leftover) int { return a.mod.Compare(b.mod) })
	var saved []string
	for _, f := range found {
		p, err := SavePartial(dir, f.name)
		if err != nil {
			return saved, err
		}
		saved = append(saved, p)
	}
	return saved, nil
}

// IsWrongData reports whether err is a WrongDataError.
func IsWrongData(err error) bool {
	var w *WrongDataError
	return errors.As(err, &w)
}

// FinishResumed writes the outputs of a resumed run whose every point the
// partial file holds already (out.Resume): results.csv and the
// comparison, as rank 0 writes them at the end of a run.
func FinishResumed(out Output) (*Report, error) {
	r, err := newRecorder(out)
	if err != nil {
		return nil, err
	}
	return r.finish(nil)
}
