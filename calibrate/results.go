package calibrate

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sweep"
)

// ReadResults reads a results.csv that nexar-sim or nexar-live wrote:
// one sample per row, with its collective, algorithm variant, world size
// and time. Columns are found by their names in the header (collective,
// algorithm, world, bytes, dtype and time_s are needed; params, op and
// nexar-live's wrong, device, bulk_threshold and eager_threshold are
// read when present), so files of other versions read too. Rows whose
// results were wrong are left out, and a note says so; rows measured on a
// device (nexar-live --device cuda) are kept, and a note says their times
// include its copies. The thresholds a run recorded (bytes; bulk -1:
// never, eager 0: off) go on every sample as Sample.Transport. Each
// collective and world size is a run. opt is not used: a results file
// says everything.
func ReadResults(file string, r io.Reader, _ LogOptions) (*Log, error) {
	log := &Log{File: file, Format: FormatResults}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &LogError{file, 1, "empty file: want the header of a results file"}
	}
	if err != nil {
		return nil, resultsError(file, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(h)] = i
	}
	for _, need := range []string{"collective", "algorithm", "world", "bytes", "dtype", "time_s"} {
		if _, ok := col[need]; !ok {
			return nil, &LogError{file, 1, fmt.Sprintf("the header has no %s column: want a results.csv of nexar-sim or nexar-live (%s)", need, strings.Join(sweep.Header, ","))}
		}
	}
	_, hasBulk := col["bulk_threshold"]
	_, hasEager := col["eager_threshold"]
	if hasBulk != hasEager {
		return nil, &LogError{file, 1, "the header has one of the bulk_threshold and eager_threshold columns: want both or neither"}
	}
	get := func(rec []string, name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	var wrong, device []int
	runs := map[string]int{} // collective and world: index in log.Runs
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, resultsError(file, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(head) {
			return nil, &LogError{file, line, fmt.Sprintf("%d fields under a header of %d", len(rec), len(head))}
		}
		s, err := resultSample(rec, get)
		if err != nil {
			return nil, &LogError{file, line, err.Error()}
		}
		if w := get(rec, "wrong"); w != "" && w != "0" && w != "-1" {
			wrong = append(wrong, line)
			continue
		}
		if d := get(rec, "device"); d != "" && d != "host" {
			device = append(device, line)
		}
		if hasBulk {
			if s.Transport, err = resultThresholds(rec, get); err != nil {
				return nil, &LogError{file, line, err.Error()}
			}
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

// resultSample reads a row's sample.
func resultSample(rec []string, get func([]string, string) string) (Sample, error) {
	s := Sample{Collective: get(rec, "collective"), Algorithm: get(rec, "algorithm"), Op: device.Sum}
	var err error
	if s.World, err = strconv.Atoi(get(rec, "world")); err != nil {
		return s, fmt.Errorf("world %q: want a number of ranks", get(rec, "world"))
	}
	if s.Bytes, err = strconv.Atoi(get(rec, "bytes")); err != nil {
		return s, fmt.Errorf("bytes %q: want a number of bytes", get(rec, "bytes"))
	}
	if s.DType, err = device.ParseDType(get(rec, "dtype")); err != nil {
		return s, err
	}
	var ok bool
	if s.Time, ok = parseNumber(get(rec, "time_s")); !ok {
		return s, fmt.Errorf("time_s %q: want a number of seconds", get(rec, "time_s"))
	}
	if s.Params, err = sweep.ParseParams(get(rec, "params")); err != nil {
		return s, err
	}
	if op := get(rec, "op"); op != "" {
		if s.Op, err = device.ParseOp(op); err != nil {
			return s, err
		}
	}
	return s, nil
}

// resultThresholds reads a row's bulk_threshold and eager_threshold.
func resultThresholds(rec []string, get func([]string, string) string) (*algos.Thresholds, error) {
	return ParseThresholds(get(rec, "bulk_threshold"), get(rec, "eager_threshold"))
}

// ParseThresholds reads the bulk_threshold and eager_threshold columns of
// a results.csv: whole bytes, the bulk one -1 for never, the eager one 0
// for off.
func ParseThresholds(bulk, eager string) (*algos.Thresholds, error) {
	b, err := strconv.Atoi(bulk)
	if err != nil || b < -1 {
		return nil, fmt.Errorf("bulk_threshold %q: want a number of bytes, or -1 (never)", bulk)
	}
	e, err := strconv.Atoi(eager)
	if err != nil || e < 0 {
		return nil, fmt.Errorf("eager_threshold %q: want a number of bytes (0: off)", eager)
	}
	return &algos.Thresholds{Bulk: b, Eager: e}, nil
}

// resultsError turns a CSV parse error into a LogError.
func resultsError(file string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &LogError{file, pe.Line, pe.Err.Error()}
	}
	return fmt.Errorf("%s: %w", file, err)
}
