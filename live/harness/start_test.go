package harness

import (
	"testing"
	"time"
)

// TestSpinMargin: the spin margin covers all but the latest tenth of the
// recent wakes, within its bounds.
func TestSpinMargin(t *testing.T) {
	var s Starter
	for i := range spinWindow {
		s.learnOversleep(int64(i) * int64(time.Microsecond)) // 0..31 µs
	}
	// The 90th percentile of 0..31 µs is 28 µs; plus a tenth.
	if want := int64(28*time.Microsecond) * 11 / 10; s.spin != want {
		t.Errorf("spin %v, want %v", time.Duration(s.spin), time.Duration(want))
	}
	for range spinWindow {
		s.learnOversleep(int64(time.Second))
	}
	if s.spin != maxSpin {
		t.Errorf("after late wakes: spin %v, want the bound %v", time.Duration(s.spin), time.Duration(maxSpin))
	}
	for range spinWindow {
		s.learnOversleep(0)
	}
	if s.spin != minSpin {
		t.Errorf("after punctual wakes: spin %v, want the bound %v", time.Duration(s.spin), time.Duration(minSpin))
	}
}

// TestLead: the lead doubles when an instant arrives with too little to
// spare, and shrinks back towards its least when instants arrive early.
func TestLead(t *testing.T) {
	s := Starter{lead: int64(time.Millisecond), minLead: int64(300 * time.Microsecond)}
	s.adjustLead(-5)
	if s.lead != int64(2*time.Millisecond) {
		t.Errorf("late: lead %v", time.Duration(s.lead))
	}
	for range 100 {
		s.adjustLead(int64(time.Millisecond))
	}
	if s.lead != s.minLead {
		t.Errorf("early: lead %v, want %v", time.Duration(s.lead), time.Duration(s.minLead))
	}
	for range 100 {
		s.adjustLead(-1)
	}
	if s.lead != maxLead {
		t.Errorf("always late: lead %v, want %v", time.Duration(s.lead), time.Duration(maxLead))
	}
}
