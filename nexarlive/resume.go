package nexarlive

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/sweep"
	"github.com/nexar-go/nexar-go/units"
)

// resumeRun reads the partial file in out and checks that its rows are
// the first points of job, measured as this run would measure them: a
// file of another scenario or of other flags is refused, with what
// differs.
func resumeRun(job *live.Job, out string, cfg realnet.Config, device string) (resumed, error) {
	path := filepath.Join(out, live.PartialResultsFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return resumed{}, nil
	}
	if err != nil {
		return resumed{}, err
	}
	defer f.Close()
	rows, err := live.ReadPartialResults(f)
	if err != nil {
		return resumed{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := checkResumed(job, rows, live.ThresholdsOf(cfg), device); err != nil {
		return resumed{}, fmt.Errorf("%s is not of this run: %v; run without --resume to start over (the file is then kept as %s), or give another --out",
			path, err, strings.Replace(live.PartialResultsFile, ".csv", ".1.csv", 1))
	}
	if len(rows) == 0 {
		return resumed{}, nil
	}
	return resumed{rows: rows, file: path}, nil
}

// checkResumed checks that rows are those of the first points of job,
// measured with thresholds used on device, and says what differs in the
// first that is not.
func checkResumed(job *live.Job, rows []live.Result, used live.Thresholds, device string) error {
	if len(rows) > len(job.Points) {
		return fmt.Errorf("it holds %d rows, and this run has %d points", len(rows), len(job.Points))
	}
	host := func(d string) bool { return d == "" || d == live.DeviceHost }
	for i, r := range rows {
		p := job.Points[i]
		var diffs []string
		if d := pointDiffs(r, p); d != "" {
			diffs = append(diffs, d)
		}
		if t := r.Transport(); t == nil || *t != used {
			diffs = append(diffs, fmt.Sprintf("transport thresholds %s, not %s", thresholds(t), thresholds(&used)))
		}
		if r.Device != device && !(host(r.Device) && host(device)) {
			diffs = append(diffs, fmt.Sprintf("device %q, not %q", r.Device, device))
		}
		if o := job.Options; o.MinTime == 0 && o.Timing == live.TimingStart && r.Repeats != o.Iters {
			diffs = append(diffs, fmt.Sprintf("%d timed iterations, not --iters %d", r.Repeats, o.Iters))
		}
		if len(diffs) > 0 {
			return fmt.Errorf("its row %d is not this run's point %d (%v): %s", i+1, p.Index+1, p, strings.Join(diffs, "; "))
		}
	}
	return nil
}

// pointDiffs says how the point row r measured differs from p, "" if
// it does not: another scenario, world size or sweep.
func pointDiffs(r live.Result, p sweep.Point) string {
	want := sweep.NewRow(p, []float64{1}, 0)
	var d []string
	add := func(what, got, want string) {
		if got != want {
			d = append(d, fmt.Sprintf("%s %s, not %s", what, got, want))
		}
	}
	add("collective", r.Collective, want.Collective)
	add("algorithm", r.Algorithm, want.Algorithm)
	add("params", quoted(r.Params), quoted(want.Params))
	add("world", fmt.Sprint(r.World), fmt.Sprint(want.World))
	add("size", units.FormatBytesExact(int64(r.Bytes)), units.FormatBytesExact(int64(want.Bytes)))
	add("dtype", r.DType, want.DType)
	add("op", quoted(r.Op), quoted(want.Op))
	return strings.Join(d, ", ")
}

func quoted(s string) string { return fmt.Sprintf("%q", s) }

// thresholds writes transport thresholds as results.csv's columns name
// them; "none" for a row that does not record them.
func thresholds(t *live.Thresholds) string {
	if t == nil {
		return "none"
	}
	return fmt.Sprintf("bulk %s, eager %v", units.FormatBytesExact(int64(t.Bulk)), t.Eager)
}
