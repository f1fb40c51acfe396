package calibrate

import (
	"bytes"
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var updatePublic = flag.Bool("calibrate.update-public", false,
	"simulate the public logs again, fit the machines, and rewrite testdata/public/predictions.csv and fits.csv (minutes)")

// publicLog is a log of testdata/public and the machine that describes its
// cluster: a preset, with the keys where the cluster is known to differ.
type publicLog struct {
	file    string
	machine Machine
}

var dgxH100 = Machine{Preset: "dgx-h100"}

// publicOptions simulate up to 128 MiB and extrapolate above (a 64-rank
// point of 256 MiB takes a minute and two gigabytes).
var publicOptions = PredictOptions{MaxSimulated: 128 << 20}

// publicLogs are the logs whose hardware is public (testdata/public/
// README.md). A3 Mega is the a3-highgpu-8g preset with its eight NICs of
// 200 Gb/s a node (Google Cloud, "GPU machine types": a3-megagpu-8g, 8
// NICs for GPU traffic at 200 Gbps each).
var publicLogs = []publicLog{
	{"nccl-tests-290-h100-1node-all_reduce_perf.log", dgxH100},
	{"nccl-tests-309-xe9680-h100-2nodes-all_reduce_perf.log", dgxH100},
	{"nccl-tests-309-vm-h100-4nodes-all_reduce_perf.log", dgxH100},
	{"nccl-tests-309-ib400-h100-2nodes-all_reduce_perf.log", dgxH100},
	{"nccl-tests-309-ib400-h100-4nodes-all_reduce_perf.log", dgxH100},
	{"nccl-tests-309-ib400-h100-8nodes-all_reduce_perf.log", dgxH100},
	{"a3mega-h100-2nodes-all_reduce_perf.log", Machine{Preset: "gcp-a3-highgpu-8g", Keys: map[string]any{"nics_per_node": int64(8)}}},
}

// transfers are the calibrate-then-predict experiments: a machine fitted
// to one log of a system, predicting the others of the same system.
var transfers = []struct{ fit, predict string }{
	{"nccl-tests-309-ib400-h100-2nodes-all_reduce_perf.log", "nccl-tests-309-ib400-h100-4nodes-all_reduce_perf.log"},
	{"nccl-tests-309-ib400-h100-2nodes-all_reduce_perf.log", "nccl-tests-309-ib400-h100-8nodes-all_reduce_perf.log"},
	{"nccl-tests-309-ib400-h100-4nodes-all_reduce_perf.log", "nccl-tests-309-ib400-h100-8nodes-all_reduce_perf.log"},
	{"nccl-tests-309-xe9680-h100-2nodes-all_reduce_perf.log", "nccl-tests-309-vm-h100-4nodes-all_reduce_perf.log"},
}

// The figures docs/nccl-predictions.md reports: median |predicted/measured
// - 1| of busbw from 1 MiB and of time below 64 KiB (NaN: no such size),
// from the presets alone and after calibrating on another log.
var (
	wantPreset = map[string][2]float64{
		"nccl-tests-290-h100-1node-all_reduce_perf.log":         {0.2671, math.NaN()},
		"nccl-tests-309-xe9680-h100-2nodes-all_reduce_perf.log": {0.1109, 0.1390},
		"nccl-tests-309-vm-h100-4nodes-all_reduce_perf.log":     {0.1132, 0.0752},
		"nccl-tests-309-ib400-h100-2nodes-all_reduce_perf.log":  {0.1988, math.NaN()},
		"nccl-tests-309-ib400-h100-4nodes-all_reduce_perf.log":  {0.3330, math.NaN()},
		"nccl-tests-309-ib400-h100-8nodes-all_reduce_perf.log":  {0.1224, math.NaN()},
		"a3mega-h100-2nodes-all_reduce_perf.log":                {1.1921, 0.7956},
	}
	// wantTransfer is keyed by the fitted log, then the predicted one.
	wantTransfer = map[[2]string][2]float64{
		{"nccl-tests-309-ib400-h100-2nodes-all_reduce_perf.log", "nccl-tests-309-ib400-h100-4nodes-all_reduce_perf.log"}: {0.0573, math.NaN()},
		{"nccl-tests-309-ib400-h100-2nodes-all_reduce_perf.log", "nccl-tests-309-ib400-h100-8nodes-all_reduce_perf.log"}: {0.0786, math.NaN()},
		{"nccl-tests-309-ib400-h100-4nodes-all_reduce_perf.log", "nccl-tests-309-ib400-h100-8nodes-all_reduce_perf.log"}: {0.0305, math.NaN()},
		{"nccl-tests-309-xe9680-h100-2nodes-all_reduce_perf.log", "nccl-tests-309-vm-h100-4nodes-all_reduce_perf.log"}:   {0.1221, 0.1962},
	}
)

func readPublic(t testing.TB, file string) []Sample {
	t.Helper()
	log, err := ReadFile(filepath.Join("testdata", "public", file), FormatNCCLTests, LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 {
		t.Fatalf("%s: %d runs", file, len(log.Runs))
	}
	return log.Samples()
}

func machineOf(t testing.TB, file string) Machine {
	for _, l := range publicLogs {
		if l.file == file {
			return l.machine
		}
	}
	t.Fatalf("%s is not a public log", file)
	return Machine{}
}

// TestPublicLogs holds the model's predictions of the public logs
// (testdata/public/predictions.csv, which -calibrate.update-public
// rewrites by simulating them, minutes) against the logs, and against the
// figures the documentation gives; without -short it simulates the
// smallest sizes of each log again and demands the recorded times.
func TestPublicLogs(t *testing.T) {
	if *updatePublic {
		updatePublicPredictions(t)
	}
	rows := readPredictions(t)
	for _, l := range publicLogs {
		ss := readPublic(t, l.file)
		pred := rows.times(t, "preset", l.file, "", ss)
		a := Agree(ss, pred)
		check(t, "presets alone: "+l.file, a, wantPreset[l.file])
		if testing.Short() {
			continue
		}
		// The smallest three sizes once more (milliseconds to simulate).
		n := min(3, len(ss))
		pr, err := PredictMachine(context.Background(), l.machine, ss[:n], publicOptions)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if got := pr[i].Time; math.Abs(got/pred[i]-1) > 1e-9 {
				t.Errorf("%s, %d bytes: simulated %.9g s, recorded %.9g s (run with -calibrate.update-public)", l.file, ss[i].Bytes, got, pred[i])
			}
		}
	}
	for _, x := range transfers {
		ss := readPublic(t, x.predict)
		a := Agree(ss, rows.times(t, "calibrated", x.predict, x.fit, ss))
		check(t, fmt.Sprintf("calibrated on %s: %s", x.fit, x.predict), a, wantTransfer[[2]string{x.fit, x.predict}])
	}
}

func check(t *testing.T, what string, a Agreement, want [2]float64) {
	t.Helper()
	same := func(got, want float64) bool {
		return math.IsNaN(got) && math.IsNaN(want) || math.Abs(got-want) < 5e-4
	}
	if !same(a.BusBW, want[0]) || !same(a.Time, want[1]) {
		t.Errorf("%s: %s; the documentation says busbw %.4f, time %.4f", what, a, want[0], want[1])
	}
}

// predictionRows are the rows of predictions.csv.
type predictionRows [][]string

const predictionsFile = "testdata/public/predictions.csv"

var predictionsHeader = []string{"kind", "log", "fitted_on", "bytes", "measured_s", "predicted_s", "ran", "extrapolated"}

func readPredictions(t testing.TB) predictionRows {
	f, err := os.ReadFile(predictionsFile)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(f)).ReadAll()
	if err != nil || len(recs) == 0 || strings.Join(recs[0], ",") != strings.Join(predictionsHeader, ",") {
		t.Fatalf("%s: %v", predictionsFile, err)
	}
	return recs[1:]
}

// times returns the recorded predictions of a log's samples.
func (rows predictionRows) times(t testing.TB, kind, log, fittedOn string, ss []Sample) []float64 {
	t.Helper()
	out := make([]float64, len(ss))
	i := 0
	for _, r := range rows {
		if r[0] != kind || r[1] != log || r[2] != fittedOn {
			continue
		}
		if i >= len(ss) || r[3] != strconv.Itoa(ss[i].Bytes) {
			t.Fatalf("%s: %s %s row %d does not match the log's sizes", predictionsFile, kind, log, i)
		}
		v, err := strconv.ParseFloat(r[5], 64)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = v
		i++
	}
	if i != len(ss) {
		t.Fatalf("%s: %d predictions of %s (%s), want %d", predictionsFile, i, log, kind, len(ss))
	}
	return out
}

// updatePublicPredictions simulates every public log on its machine, fits
// the machines of the transfers, and rewrites predictions.csv and
// fits.csv.
func updatePublicPredictions(t *testing.T) {
	ctx := context.Background()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(predictionsHeader)
	add := func(kind, log, fitted string, ss []Sample, pr []Prediction) {
		for i, s := range ss {
			w.Write([]string{kind, log, fitted, strconv.Itoa(s.Bytes), strconv.FormatFloat(s.Time, 'g', -1, 64),
				strconv.FormatFloat(pr[i].Time, 'g', 12, 64), pr[i].Ran, strconv.FormatBool(pr[i].Extrapolated)})
		}
	}
	for _, l := range publicLogs {
		ss := readPublic(t, l.file)
		pr, err := PredictMachine(ctx, l.machine, ss, publicOptions)
		if err != nil {
			t.Fatal(err)
		}
		add("preset", l.file, "", ss, pr)
		t.Logf("%s on %s: %s", l.file, l.machine, Agree(ss, times(pr)))
	}
	var fits bytes.Buffer
	fw := csv.NewWriter(&fits)
	fw.Write([]string{"fitted_on", "key", "machine", "fitted", "held", "why"})
	fitted := map[string]*MachineFit{}
	for _, x := range transfers {
		fit := fitted[x.fit]
		if fit == nil {
			var err error
			fit, err = FitMachine(ctx, machineOf(t, x.fit), readPublic(t, x.fit), MachineFitOptions{PredictOptions: publicOptions})
			if err != nil {
				t.Fatal(err)
			}
			fitted[x.fit] = fit
			for _, p := range fit.Params {
				fw.Write([]string{x.fit, p.Key, formatFigure(p.Preset, p.Bandwidth), p.Text(), strconv.FormatBool(p.Held), p.Why})
			}
			for _, n := range fit.Notes {
				fw.Write([]string{x.fit, "note", "", "", "", n})
			}
			t.Logf("fitted on %s: %s; %s", x.fit, fit.Describe(), fit.AfterFit)
		}
		ss := readPublic(t, x.predict)
		pr, err := PredictMachine(ctx, fit.Machine, ss, publicOptions)
		if err != nil {
			t.Fatal(err)
		}
		add("calibrated", x.predict, x.fit, ss, pr)
		t.Logf("calibrated on %s, %s: %s", x.fit, x.predict, Agree(ss, times(pr)))
	}
	w.Flush()
	fw.Flush()
	if err := os.WriteFile(predictionsFile, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("testdata/public/fits.csv", fits.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
