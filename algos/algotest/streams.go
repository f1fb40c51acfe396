package algotest

import (
	"slices"
	"sync"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
)

// StreamLog keeps the records of every rank's streams
// (algos.WithStreamObserver). It is safe for concurrent use: the
// simulator reports from one thread, real links from the streams'
// goroutines.
type StreamLog struct {
	mu   sync.Mutex
	recs []algos.StreamRecord
}

// StreamItem implements algos.StreamObserver.
func (s *StreamLog) StreamItem(r algos.StreamRecord) {
	s.mu.Lock()
	s.recs = append(s.recs, r)
	s.mu.Unlock()
}

// Records returns the records so far, in the order they were reported.
func (s *StreamLog) Records() []algos.StreamRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.recs)
}

// Find returns the record of rank labelled label, failing t if there is
// not exactly one.
func (s *StreamLog) Find(t testing.TB, rank int, label string) algos.StreamRecord {
	t.Helper()
	recs := s.Records()
	var out []algos.StreamRecord
	for _, x := range recs {
		if x.Rank == rank && x.Label == label {
			out = append(out, x)
		}
	}
	if len(out) != 1 {
		t.Fatalf("rank %d: %d records labelled %q, want 1 (%v)", rank, len(out), label, recs)
	}
	return out[0]
}
