package schedule

import (
	"bytes"
	"path/filepath"
	"strings"
	"sync"

	"github.com/nexar-go/nexar-go/algos"
)

var (
	usedMu sync.Mutex
	// used are the schedules registered by Use, by path, and the
	// algorithms they became.
	used   = map[string]*useEntry{}
	byAlgo = map[*algos.Algorithm]*Schedule{}
)

type useEntry struct {
	data []byte
	a    *algos.Algorithm
}

// AlgorithmName is the name a schedule file registers under: msccl_ and
// the file's base name without its extension, non-alphanumerics made
// underscores.
func AlgorithmName(path string) string {
	return "msccl_" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
}

// Use reads the schedule data of the file at path and registers it as an
// algorithm of its collective, named AlgorithmName(path), once: a second
// Use of the same path and bytes returns the same algorithm, so that a
// scenario read twice (by a command and by each of its ranks) names one
// algorithm. It fails for a bad file, for a collective other than want
// (the sweep's, "" for any), and for a name another schedule took.
func Use(path string, data []byte, want string) (*algos.Algorithm, *Schedule, error) {
	usedMu.Lock()
	defer usedMu.Unlock()
	if e, ok := used[path]; ok && bytes.Equal(e.data, data) {
		s := byAlgo[e.a]
		if err := s.wantCollective(want); err != nil {
			return nil, nil, err
		}
		return e.a, s, nil
	}
	s, err := Parse(path, data)
	if err != nil {
		return nil, nil, err
	}
	if err := s.wantCollective(want); err != nil {
		return nil, nil, err
	}
	coll, _ := s.Collective()
	a, err := s.Algorithm(AlgorithmName(path))
	if err != nil {
		return nil, nil, err
	}
	if err := algos.RegisterAlgorithm(coll, a); err != nil {
		return nil, nil, err
	}
	used[path] = &useEntry{data: bytes.Clone(data), a: a}
	byAlgo[a] = s
	return a, s, nil
}

// Of returns the schedule that algorithm a runs, if Use registered it.
func Of(a *algos.Algorithm) (*Schedule, bool) {
	usedMu.Lock()
	defer usedMu.Unlock()
	s, ok := byAlgo[a]
	return s, ok
}

func (s *Schedule) wantCollective(want string) error {
	coll, err := s.Collective()
	if err != nil {
		return err
	}
	if want != "" && coll != want {
		return &collectiveError{s.File, s.Coll, want}
	}
	return nil
}

type collectiveError struct{ file, coll, want string }

func (e *collectiveError) Error() string {
	return e.file + ": a schedule of " + e.coll + ", where the sweep runs " + e.want
}
