package sim

import (
	"math"
	"testing"
)

// TestProbe prints the probe's readings (go test ./sim -run Probe -v),
// which refHeapNs and refSwitchNs take on the reference machine, and
// checks that they are sane.
func TestProbe(t *testing.T) {
	for range 3 {
		h, s := probeNs()
		t.Logf("heap %.1f ns, switch %.1f ns", h, s)
		if !(h > 0 && h < 10000 && s > 0 && s < 100000) {
			t.Errorf("probe read heap %g ns, switch %g ns", h, s)
		}
	}
}

// TestPricesFollowTheProbe: an event's price is the reference machine's,
// scaled by this machine's speed (machineSpeed), and the same on every
// call.
func TestPricesFollowTheProbe(t *testing.T) {
	heap, coroutine := machineSpeed()
	if heap < 0.2 || heap > 5 || coroutine < 0.2 || coroutine > 5 {
		t.Fatalf("speed %g, %g: outside its clamp", heap, coroutine)
	}
	if got, want := eventSeconds(1024), 250e-9*heap; math.Abs(got-want) > 1e-18 {
		t.Errorf("a replayed event at 1024 ranks: %g s, want %g", got, want)
	}
	if got, want := coroutineSeconds(1024, 1000), (1000*191e-9+1024*25.5e-6)*coroutine; math.Abs(got-want) > 1e-12 {
		t.Errorf("1000 events of 1024 ranks on coroutines: %g s, want %g", got, want)
	}
	h2, c2 := machineSpeed()
	if h2 != heap || c2 != coroutine {
		t.Errorf("the speed moved within a process: %g, %g then %g, %g", heap, coroutine, h2, c2)
	}
}
