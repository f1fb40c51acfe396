package schedule

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
)

// Formats are the schedule formats a scenario names a file by, as
// "format:file": msccl (MSCCL XML), teccl (a TE-CCL solution) and
// mscclpp (an MSCCL++ execution plan).
var Formats = []string{"msccl", "teccl", "mscclpp"}

// readers read the formats other than msccl into schedules.
var readers = map[string]struct {
	what string
	read func(file string, data []byte) (*Schedule, error)
}{
	"teccl": {"TE-CCL solution", func(file string, data []byte) (*Schedule, error) {
		t, err := ParseTECCL(file, data)
		if err != nil {
			return nil, err
		}
		return t.Schedule()
	}},
	"mscclpp": {"MSCCL++ execution plan", ParseMSCCLPP},
}

// FormatName is the name a file of format registers under: the format,
// an underscore and the file's base name without its extension,
// non-alphanumerics made underscores (AlgorithmName for msccl).
func FormatName(format, path string) string {
	return format + strings.TrimPrefix(AlgorithmName(path), "msccl")
}

// UseFormat is Use for a file of any of the Formats: it reads the file's
// data as format says, and registers the schedule as an algorithm of its
// collective named FormatName(format, path), once.
func UseFormat(format, path string, data []byte, want string) (*algos.Algorithm, *Schedule, error) {
	if format == "msccl" {
		return Use(path, data, want)
	}
	rd, ok := readers[format]
	if !ok {
		return nil, nil, fmt.Errorf("%s: schedule format %q: want one of %s", path, format, strings.Join(Formats, ", "))
	}
	usedMu.Lock()
	defer usedMu.Unlock()
	key := format + ":" + path
	if e, ok := used[key]; ok && bytes.Equal(e.data, data) {
		s := byAlgo[e.a]
		if err := s.wantCollective(want); err != nil {
			return nil, nil, err
		}
		return e.a, s, nil
	}
	s, err := rd.read(path, data)
	if err != nil {
		return nil, nil, err
	}
	if err := s.wantCollective(want); err != nil {
		return nil, nil, err
	}
	coll, _ := s.Collective()
	a, err := s.Algorithm(FormatName(format, path))
	if err != nil {
		return nil, nil, err
	}
	a.Family = format
	a.Summary = fmt.Sprintf("%s %s (%s, %d GPUs), run as an MSCCL schedule", rd.what, filepath.Base(path), coll, s.NGPUs)
	if err := algos.RegisterAlgorithm(coll, a); err != nil {
		return nil, nil, err
	}
	used[key] = &useEntry{data: bytes.Clone(data), a: a}
	byAlgo[a] = s
	return a, s, nil
}
