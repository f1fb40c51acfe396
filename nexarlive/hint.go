package nexarlive

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/verify"
)

// hintAbove is the median |predicted/measured - 1| over which a live run
// points to calibrate: the model is off by more than a quarter.
const hintAbove = 0.25

// calibrateModels are the models the hint has calibrate choose among (by
// their held-out error): those that follow ranks on one machine and on a
// network.
const calibrateModels = "alpha-beta,alpha-beta-protocol,shared-host"

// calibrateHint returns, for a model whose median error over n points
// is med, the commands that fit a model to the measurements in files and
// check it, writing the model into dir; "" when the model is close
// enough (or there are no points).
func calibrateHint(cmd, model string, med float64, n int, files []string, dir string) string {
	if n == 0 || math.IsNaN(med) || med <= hintAbove {
		return ""
	}
	cal := filepath.Join(dir, "calibrated.toml")
	return fmt.Sprintf("nexar-live %s: the model of %s is %.0f%% off these measurements (median |predicted/measured - 1| over %d points, more than %.0f%%); fit one to them and check it:\n"+
		"  nexar-live calibrate --model %s --out %s %s\n"+
		"  nexar-live compare %s %s",
		cmd, model, 100*med, n, 100*hintAbove, calibrateModels, cal, strings.Join(files, " "), cal, strings.Join(files, " "))
}

// runHint is calibrateHint of a finished run into out: its compare.csv
// against its results.csv; "" without a comparison.
func runHint(cmd, scenarioFile, out string) string {
	f, err := os.Open(filepath.Join(out, verify.CompareFile))
	if err != nil {
		return ""
	}
	defer f.Close()
	med, n, err := compareError(f)
	if err != nil {
		return ""
	}
	return calibrateHint(cmd, scenarioFile, med, n, []string{filepath.Join(out, live.ResultsFile)}, out)
}

// compareError reads a compare.csv (verify.WriteCompareCSV) and returns
// the median |predicted/measured - 1| over its points with a measured
// time, and how many there are.
func compareError(r io.Reader) (med float64, n int, err error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return 0, 0, err
	}
	pi, mi := slices.Index(head, "predicted_s"), slices.Index(head, "measured_s")
	if pi < 0 || mi < 0 {
		return 0, 0, errors.New("no predicted_s and measured_s columns")
	}
	var errs []float64
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, err
		}
		p, err1 := strconv.ParseFloat(rec[pi], 64)
		m, err2 := strconv.ParseFloat(rec[mi], 64)
		if err1 != nil || err2 != nil {
			return 0, 0, fmt.Errorf("line %d: not a time", len(errs)+2)
		}
		if m > 0 && !math.IsInf(p, 0) && !math.IsNaN(p) {
			errs = append(errs, math.Abs(p/m-1))
		}
	}
	if len(errs) == 0 {
		return math.NaN(), 0, nil
	}
	slices.Sort(errs)
	k := len(errs)
	if k%2 == 1 {
		return errs[k/2], k, nil
	}
	return (errs[k/2-1] + errs[k/2]) / 2, k, nil
}
