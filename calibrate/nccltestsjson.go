package calibrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/nexar-go/nexar-go/device"
)

// FormatNCCLTestsJSON is nccl-tests' own JSON report, which its -J
// FILE.json writes (nccl-tests 2.17 and later).
const FormatNCCLTestsJSON = "nccl-tests-json"

// ncclReport is nccl-tests' JSON report, the keys read of it (src/util.cu
// writes them: version 3 as of nccl-tests 2.19).
type ncclReport struct {
	Version     *int            `json:"version"`
	Args        []string        `json:"args"`
	Env         []string        `json:"env"`
	NCCLVersion int             `json:"nccl_version"`
	Config      *ncclConfig     `json:"config"`
	Results     []ncclResult    `json:"results"`
	Bandwidth   json.RawMessage `json:"average_bus_bandwidth"`
}

type ncclConfig struct {
	NThreads int `json:"nthreads"`
	NGPUs    int `json:"ngpus"`
	// Devices has one entry for each process, its first rank's.
	Devices []struct {
		Rank       int    `json:"rank"`
		Group      int    `json:"group"`
		Hostname   string `json:"hostname"`
		DeviceInfo string `json:"device_info"`
	} `json:"devices"`
}

type ncclResult struct {
	Size       *int64      `json:"size"`
	Count      int64       `json:"count"`
	Type       string      `json:"type"`
	Redop      string      `json:"redop"`
	Root       string      `json:"root"`
	OutOfPlace *ncclTiming `json:"out_of_place"`
	InPlace    *ncclTiming `json:"in_place"`
}

type ncclTiming struct {
	Time    *reportFloat `json:"time"`
	CPUTime *reportFloat `json:"cpu_time"`
	NWrong  *reportFloat `json:"nwrong"`
}

// reportFloat is a number of the report, which writes a NaN or an
// infinity as a string ("nan", "inf"): then not ok.
type reportFloat struct {
	v  float64
	ok bool
}

func (f *reportFloat) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		f.v, f.ok = 0, false
		return nil
	}
	if err := json.Unmarshal(b, &f.v); err != nil {
		return err
	}
	f.ok = !math.IsNaN(f.v) && !math.IsInf(f.v, 0)
	return nil
}

// isNCCLReport reports whether data is nccl-tests' JSON report: an object
// with its version, results and config, or one cut short that began as
// one (its keys, in the writer's order), so that its reader says why.
func isNCCLReport(data []byte) bool {
	t := bytes.TrimSpace(data)
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	var r ncclReport
	if json.Unmarshal(t, &r) == nil {
		return r.Version != nil && r.Results != nil && r.Config != nil
	}
	head := t[:min(len(t), 4096)]
	return bytes.Contains(head, []byte(`"version"`)) && bytes.Contains(t, []byte(`"nccl_version"`))
}

// ReadNCCLTestsJSON reads nccl-tests' JSON report (FormatNCCLTestsJSON):
// one run, one sample per result, with the out-of-place time (the
// in-place one with opt.InPlace), in microseconds as written.
//
//   - The collective is the binary's (args[0], "./build/all_reduce_perf"),
//     else opt.Collective.
//   - The world is config.devices' processes (one entry each) x nthreads
//     x ngpus; opt.World overrides it.
//   - NCCLInfo holds NCCL's release (nccl_version), the devices' hosts
//     (every process's: a full list) and GPU, and the NCCL_* variables of
//     env, NCCL_ALGO and NCCL_PROTO among them.
//
// Results without the chosen time (null) or whose nwrong is above 0 are
// left out, and a note counts them. An error names the JSON path.
func ReadNCCLTestsJSON(file string, data []byte, opt LogOptions) (*Log, error) {
	var r ncclReport
	if err := json.Unmarshal(data, &r); err != nil {
		why := err.Error()
		if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(why, "unexpected end of JSON input") {
			why += " (a report cut short: nccl-tests writes it as it runs, and the run did not finish)"
		}
		return nil, fmt.Errorf("%s: not nccl-tests' JSON report: %s", file, why)
	}
	fail := func(key, format string, args ...any) error {
		return fmt.Errorf("%s: %s: %s", file, key, fmt.Sprintf(format, args...))
	}
	if r.Config == nil || r.Results == nil {
		return nil, fail("config, results", "missing: want nccl-tests' report (all_reduce_perf -J FILE.json)")
	}
	log := &Log{File: file, Format: FormatNCCLTestsJSON}
	run := Run{Line: 1}
	if len(r.Args) > 0 {
		run.Benchmark = path.Base(r.Args[0])
	}
	coll, bench, err := reportCollective(run.Benchmark, opt)
	if err != nil {
		return nil, fail("args[0]", "%v", err)
	}
	run.Collective = coll
	if run.World, run.WorldFrom, err = reportWorld(r.Config, opt, log); err != nil {
		return nil, fail("config.devices", "%v", err)
	}
	run.NCCL = reportInfo(&r)
	nodes := 0
	if run.NCCL != nil {
		nodes = run.NCCL.NodesOf(run.World)
	}
	if n := opt.Nodes; n > 0 {
		if n > run.World {
			return nil, fail("config.devices", "%d nodes given for a run of %d ranks", n, run.World)
		}
		nodes = n
	}
	var missing, wrong []int
	for _, res := range r.Results {
		if t := res.OutOfPlace; t != nil && t.Time == nil && t.CPUTime != nil {
			log.note(1, "the times are CPU times (-C 1): the time to enqueue each collective, not to complete it")
			break
		}
	}
	for i, res := range r.Results {
		s, ok, err := reportSample(res, opt.InPlace)
		key := fmt.Sprintf("results[%d]", i)
		switch {
		case err != nil:
			return nil, fail(key, "%v", err)
		case !ok:
			missing = append(missing, i)
			continue
		case s.Time < 0:
			wrong = append(wrong, i)
			continue
		}
		s.Collective, s.World, s.Nodes, s.NCCL = coll, run.World, nodes, run.NCCL
		s.Source = fmt.Sprintf("%s:%s", file, key)
		switch {
		case coll == PointToPoint:
			s.Algorithm = bench
		default:
			s.Algorithm, s.Assumed = opt.assumedAlgorithm(coll), true
		}
		if err := checkSample(&s); err != nil {
			return nil, fail(key, "%v", err)
		}
		run.Samples = append(run.Samples, s)
	}
	for _, c := range []struct {
		idx []int
		why string
	}{{missing, "without the time asked for (null or nan)"}, {wrong, "whose results were wrong (nwrong above 0)"}} {
		if len(c.idx) > 0 {
			log.note(1, "%d result(s) %s left out (results %s)", len(c.idx), c.why, lineList(c.idx))
		}
	}
	if len(run.Samples) == 0 {
		return nil, fail("results", "no result with a time: nothing to read")
	}
	log.Runs = []Run{run}
	return log, nil
}

// reportCollective is the collective of the report's binary, or of
// opt.Collective where it does not name one.
func reportCollective(binary string, opt LogOptions) (coll, bench string, err error) {
	name := binary
	if opt.Collective != "" {
		name = opt.Collective
	}
	if name == "" {
		return "", "", fmt.Errorf("the report names no binary: give the collective")
	}
	coll, bench, ok := benchmarkName(name)
	if !ok {
		return "", "", fmt.Errorf("benchmark %q is not one nexar-go models", name)
	}
	return coll, bench, nil
}

// reportWorld is the report's world size and where it comes from.
func reportWorld(c *ncclConfig, opt LogOptions, log *Log) (int, string, error) {
	perProcess := max(c.NThreads, 1) * max(c.NGPUs, 1)
	procs := 0 // of the first group: NCCL_TESTS_SPLIT makes several communicators
	for _, d := range c.Devices {
		if d.Group == c.Devices[0].Group {
			procs++
		}
	}
	world := procs * perProcess
	from := fmt.Sprintf("%d process(es) (config.devices) x nThread %d x nGpus %d", procs, max(c.NThreads, 1), max(c.NGPUs, 1))
	if procs < len(c.Devices) {
		log.note(1, "the report's %d processes run %d-process communicators (NCCL_TESTS_SPLIT): its world is one's", len(c.Devices), procs)
	}
	if opt.World > 0 {
		if world > 0 && world != opt.World {
			log.note(1, "the report gives %d ranks (%s); the world size given, %d, is taken instead", world, from, opt.World)
		}
		return opt.World, "given", nil
	}
	if world == 0 || world > 1<<20 {
		return 0, "", fmt.Errorf("%d ranks: give the world size", world)
	}
	return world, from, nil
}

// reportInfo is what the report says of NCCL and the machine, nil if
// nothing.
func reportInfo(r *ncclReport) *NCCLInfo {
	info := &NCCLInfo{}
	any := false
	if v := r.NCCLVersion; v > 0 {
		info.Version = ncclRelease(v)
		any = true
	}
	var hosts []string
	for _, d := range r.Config.Devices {
		if d.Hostname != "" && !slices.Contains(hosts, d.Hostname) {
			hosts = append(hosts, d.Hostname)
		}
		if info.GPU == "" {
			info.GPU = strings.TrimSpace(d.DeviceInfo)
		}
	}
	info.Hosts = len(hosts)
	any = any || info.Hosts > 0 || info.GPU != ""
	for _, kv := range r.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "NCCL_") && v != "" {
			if info.Env == nil {
				info.Env = map[string]string{}
			}
			info.Env[k] = v
			any = true
		}
	}
	if !any {
		return nil
	}
	return info
}

// reportSample is the sample of a result: ok false where it has no time
// of the kind asked for, Time -1 where it was wrong.
func reportSample(res ncclResult, inPlace bool) (Sample, bool, error) {
	s := Sample{Op: device.Sum}
	if res.Size == nil || *res.Size < 0 || *res.Size > 1<<50 {
		return s, false, fmt.Errorf("size: want a number of bytes")
	}
	s.Bytes = int(*res.Size)
	var err error
	if s.DType, err = resultDType(res.Type, *res.Size, res.Count); err != nil {
		return s, false, err
	}
	if s.Op, err = resultOp(res.Redop); err != nil {
		return s, false, err
	}
	if root, err := strconv.Atoi(strings.TrimSpace(res.Root)); err == nil {
		s.Root = max(root, 0)
	}
	t := res.OutOfPlace
	if inPlace {
		t = res.InPlace
	}
	if t == nil {
		return s, false, nil
	}
	us := t.Time
	if us == nil {
		us = t.CPUTime
	}
	if us == nil || !us.ok {
		return s, false, nil
	}
	if t.NWrong != nil && t.NWrong.ok && t.NWrong.v > 0 {
		s.Time = -1
		return s, true, nil
	}
	s.Time = us.v * 1e-6
	return s, true, nil
}
