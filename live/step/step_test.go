package step

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/live/harness"
	"github.com/nexar-go/nexar-go/workload"
)

// TestStepRecords: what a rank sends rank 0 of its step is what Stats
// reads of each record; records of failed work are left out.
func TestStepRecords(t *testing.T) {
	recs := []algos.StreamRecord{
		{Rank: 2, ItemInfo: algos.ItemInfo{Stream: "compute", Kind: algos.KindCompute, Label: "fwd"}, Start: 0, End: 2 * time.Millisecond},
		{Rank: 2, ItemInfo: algos.ItemInfo{Stream: "dp", Kind: algos.KindCollective, Collective: "allreduce", Label: "bucket 0", Bytes: 1 << 20},
			Start: 3 * time.Millisecond, End: 9 * time.Millisecond},
		{Rank: 2, ItemInfo: algos.ItemInfo{Stream: "compute", Kind: algos.KindWait}, Start: -5, End: 9 * time.Millisecond,
			Waited: algos.ItemInfo{Stream: "dp", Collective: "allreduce"}},
		{Rank: 2, ItemInfo: algos.ItemInfo{Stream: "dp", Kind: algos.KindCollective}, Err: context.Canceled},
	}
	b := encodeRecords(recs, 12345, 67)
	got, elapsed, sent, err := decodeRecords(b, 2)
	if err != nil || elapsed != 12345 || sent != 67 || len(got) != 3 {
		t.Fatalf("decoded %d records, %d ns, %d messages, %v", len(got), elapsed, sent, err)
	}
	for i, r := range got {
		want := recs[i]
		want.Label, want.Bytes = "", 0 // Stats does not read them
		if !reflect.DeepEqual(r, want) {
			t.Errorf("record %d: %+v, want %+v", i, r, want)
		}
	}
	for n := range len(b) {
		if _, _, _, err := decodeRecords(b[:n], 2); err == nil {
			t.Errorf("%d of %d bytes decoded", n, len(b))
		}
	}
}

// TestMedianRow: each measured column is the median over the steps.
func TestMedianRow(t *testing.T) {
	rows := []workload.Row{{Network: "n", Point: 3, Step: 3, Exposed: 1, Messages: 10}, {Network: "n", Point: 3, Step: 1, Exposed: 5, Messages: 30},
		{Network: "n", Point: 3, Step: 2, Exposed: 2, Messages: 20}, {Network: "n", Point: 3, Step: 10, Exposed: 3, Messages: 20}}
	rows[1].ExposedBy[workload.DP] = 4
	m := medianRow(rows)
	if m.Network != "n" || m.Point != 3 || m.Step != 2.5 || m.Exposed != 2.5 || m.Messages != 20 || m.ExposedBy[workload.DP] != 0 {
		t.Errorf("median row %+v", m)
	}
}

// TestComputeEmulator: compute that follows compute starts when the one
// before was due to end, however late its sleep woke; compute after a
// wait that held the stream up starts when the wait ended.
func TestComputeEmulator(t *testing.T) {
	e := &computeEmulator{}
	ctx := context.Background()
	t0 := harness.Now()
	if err := e.compute(ctx, 2*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	first := e.due
	if first < t0+int64(2*time.Millisecond) || first > harness.Now() {
		t.Fatalf("first compute due %d ns after its start", first-t0)
	}
	time.Sleep(time.Millisecond) // a late wake
	if err := e.compute(ctx, 2*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if e.due != first+int64(2*time.Millisecond) {
		t.Errorf("second compute due %d ns after the first, want 2 ms", e.due-first)
	}
	w0 := harness.Now()
	time.Sleep(time.Millisecond)
	e.observe(algos.StreamRecord{ItemInfo: algos.ItemInfo{Stream: workload.StreamCompute, Kind: algos.KindWait}, Start: time.Duration(w0), End: time.Duration(harness.Now())})
	ready := e.ready
	if err := e.compute(ctx, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if e.due != max(ready, first+int64(2*time.Millisecond))+int64(time.Millisecond) {
		t.Errorf("compute after a wait due %d ns after it ended", e.due-ready)
	}
}

// FuzzDecodeRecords: what a rank sends rank 0 of its step either fails
// to decode or decodes to records that encode and decode to themselves;
// no input panics or allocates beyond its length.
func FuzzDecodeRecords(f *testing.F) {
	f.Add(encodeRecords([]algos.StreamRecord{
		{ItemInfo: algos.ItemInfo{Stream: "compute", Kind: algos.KindCompute}, End: 2 * time.Millisecond},
		{ItemInfo: algos.ItemInfo{Stream: "compute", Kind: algos.KindWait}, Start: -5, End: 9,
			Waited: algos.ItemInfo{Stream: "dp", Collective: "allreduce"}},
	}, 12345, 67))
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, elapsed, sent, err := decodeRecords(b, 1)
		if err != nil {
			return
		}
		again, elapsed2, sent2, err := decodeRecords(encodeRecords(recs, elapsed, sent), 1)
		if err != nil || elapsed2 != elapsed || sent2 != sent || !reflect.DeepEqual(again, recs) {
			t.Fatalf("re-encoded: %v, %d/%d ns, %d/%d messages\n%+v\n%+v", err, elapsed2, elapsed, sent2, sent, again, recs)
		}
	})
}
