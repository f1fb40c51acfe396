package nccl

import (
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/algos"
)

// TestHardwareDefaults holds the figures a Hopper machine with Intel CPUs
// resolves to, across two nodes, to NCCL 2.30.7's tables as the package
// documentation derives them.
func TestHardwareDefaults(t *testing.T) {
	h, err := resolveHardware(&algos.Machine{GPU: "hopper", CPU: "intel"}, 2, 16)
	if err != nil {
		t.Fatal(err)
	}
	us := func(x float64) time.Duration { return time.Duration(x * 1e3) }
	checks := []struct {
		what      string
		got, want time.Duration
	}{
		{"ring LL step", h.step[AlgoRing][LL][0], 0},
		{"ring LL128 step", h.step[AlgoRing][LL128][0], us(1.3)},
		{"ring Simple step", h.step[AlgoRing][Simple][0], us(2.2)},
		{"tree LL128 step", h.step[AlgoTree][LL128][0], us(0.65)},
		{"tree Simple step", h.step[AlgoTree][Simple][0], us(2.8)},
		{"PAT Simple step", h.step[AlgoPAT][Simple][0], us(2.8)},
		{"ring LL net lag", h.step[AlgoRing][LL][1], 0},
		{"ring LL128 net lag", h.step[AlgoRing][LL128][1], us(0.3)},
		{"ring Simple net lag", h.step[AlgoRing][Simple][1], us(8.3)},
		{"tree LL net lag", h.step[AlgoTree][LL][1], us(1.3)},
		{"tree LL128 net lag", h.step[AlgoTree][LL128][1], us(4.8)},
		{"net overhead", h.netOverhead, us(1)},
		{"Simple net hold", h.netHold(Simple), us(3)},
		{"ring LL base", h.base[AlgoRing][LL], us(6.6)},
		{"NVLS base across nodes", h.base[AlgoNVLS][Simple], us(43)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
	if h.llBus != 39e9 || h.ll128Ch != 36.7e9 || h.treeCh != 41.4e9 {
		t.Errorf("caps: LL %g, LL128 a channel %g, tree a channel %g; want 39 (llMaxBws row 0, Intel, across 2 nodes), 36.7, 41.4 GB/s", h.llBus, h.ll128Ch, h.treeCh)
	}
	amd, err := resolveHardware(&algos.Machine{GPU: "hopper", CPU: "amd", Figures: map[string]float64{FigSimpleStep: 1e-6}}, 4, 32)
	if err != nil {
		t.Fatal(err)
	}
	if amd.netOverhead != us(2) || amd.llBus != 19e9 || amd.step[AlgoTree][Simple][0] != us(1) {
		t.Errorf("AMD, 4 nodes, simple_step 1us: net overhead %v, LL %g, tree Simple step %v", amd.netOverhead, amd.llBus, amd.step[AlgoTree][Simple][0])
	}
	if _, err := resolveHardware(&algos.Machine{GPU: "pascal"}, 1, 8); err == nil {
		t.Error("an unknown generation was accepted")
	}
	if _, err := resolveHardware(&algos.Machine{Figures: map[string]float64{"ll_speed": 1}}, 1, 8); err == nil {
		t.Error("an unknown figure was accepted")
	}
}
