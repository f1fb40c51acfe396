package calibrate

import (
	"fmt"
	"io"
	"strconv"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/sweep"
)

// ReadResults reads a results.csv that nexar-sim or nexar-live wrote, as
// results.Read reads it (dtype needed besides results.KeyColumns): one
// sample per row, with its collective, algorithm variant, world size and
// time, and its params, op, and nexar-live's wrong, device and transport
// thresholds where the file has them. Rows whose results were wrong are
// left out, and a note says so; rows measured on a device (nexar-live
// --device cuda) are kept, and a note says their times include its
// copies. The thresholds a run recorded (bytes; bulk -1: never, eager 0:
// off) go on every sample as Sample.Transport. Each collective and world
// size is a run. opt is not used: a results file says everything. A
// problem with the file or a field is a *results.Error; a sample that is
// none calibrate can fit (an algorithm not in the catalogue, a size that
// is no whole number of elements), or a file of no rows, a *LogError, as
// in the other formats.
func ReadResults(file string, r io.Reader, _ LogOptions) (*Log, error) {
	t, err := results.Read(r, results.ColDType)
	if err != nil {
		return nil, results.WithFile(err, file)
	}
	log := &Log{File: file, Format: FormatResults}
	var wrong, device []int
	runs := map[string]int{} // collective and world: index in log.Runs
	for i, row := range t.Rows {
		line := t.Lines[i]
		if row.Wrong > 0 {
			wrong = append(wrong, line)
			continue
		}
		if row.Device != "" && row.Device != "host" {
			device = append(device, line)
		}
		s, err := resultSample(t, i)
		if err != nil {
			return nil, results.WithFile(err, file)
		}
		s.Source = fmt.Sprintf("%s:%d", file, line)
		if err := checkSample(&s); err != nil {
			return nil, &LogError{file, line, err.Error()}
		}
		key := s.Collective + "\x00" + strconv.Itoa(s.World)
		i, ok := runs[key]
		if !ok {
			i = len(log.Runs)
			runs[key] = i
			log.Runs = append(log.Runs, Run{Line: line, Benchmark: "results", Collective: s.Collective, World: s.World, WorldFrom: "its rows"})
		}
		log.Runs[i].Samples = append(log.Runs[i].Samples, s)
	}
	if len(wrong) > 0 {
		log.note(wrong[0], "%d row(s) whose results were wrong left out (lines %s)", len(wrong), lineList(wrong))
	}
	if len(device) > 0 {
		log.note(device[0], "%d row(s) measured with buffers on a device (lines %s): their times include the copies between it and the host, "+
			"which the network model does not have; they are fitted as the network's", len(device), lineList(device))
	}
	if len(log.Runs) == 0 {
		return nil, &LogError{file, 1, "no rows under the header"}
	}
	return log, nil
}

// resultSample reads the sample of t's row i; a dtype, params or op it
// does not know is a *results.Error in that column.
func resultSample(t *results.Table, i int) (Sample, error) {
	row := t.Rows[i]
	s := Sample{Collective: row.Collective, Algorithm: row.Algorithm, World: row.World, Bytes: row.Bytes, Time: row.Time, Op: device.Sum}
	var err error
	if s.DType, err = device.ParseDType(row.DType); err != nil {
		return s, t.Errorf(i, results.ColDType, "%v", err)
	}
	if s.Params, err = sweep.ParseParams(row.Params); err != nil {
		return s, t.Errorf(i, results.ColParams, "%v", err)
	}
	if row.Op != "" {
		if s.Op, err = device.ParseOp(row.Op); err != nil {
			return s, t.Errorf(i, results.ColOp, "%v", err)
		}
	}
	if row.HasThresholds() {
		s.Transport = &algos.Thresholds{Bulk: row.BulkThreshold, Eager: row.EagerThreshold}
	}
	return s, nil
}
