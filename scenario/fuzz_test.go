package scenario

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"0", "1024", "8MiB", "1.5 KB", "-1", "1e3", "1_0KiB", "x", "1e99", "0.5B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseBytes(s)
		if err == nil && (n < 0 || n > MaxBytes) {
			t.Fatalf("ParseBytes(%q) = %d, outside [0, MaxBytes]", s, n)
		}
		if err != nil && n != 0 {
			t.Fatalf("ParseBytes(%q) = %d with error %v", s, n, err)
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"0", "5us", "1.5 ms", "2.5ps", "-1s", "5", "1e-3s", "µs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err == nil && (d < 0 || d > maxDuration) {
			t.Fatalf("ParseDuration(%q) = %v, outside [0, %v]", s, d, maxDuration)
		}
	})
}

func FuzzParseBandwidth(f *testing.F) {
	for _, s := range []string{"12.5GB/s", "100Gbit/s", "1KiB/s", "inf", "0GB/s", "-1B/s", "1e40TB/s", "8bit/s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		bw, err := ParseBandwidth(s)
		if err == nil && !(bw > 0) {
			t.Fatalf("ParseBandwidth(%q) = %g, not positive", s, bw)
		}
		if err == nil && math.IsInf(bw, 1) {
			switch strings.TrimSpace(s) {
			case "inf", "Inf", "+inf", "+Inf":
			default:
				t.Fatalf("ParseBandwidth(%q) is infinite", s)
			}
		}
	})
}

func FuzzParseByteRange(f *testing.F) {
	for _, s := range []string{"1KiB..1GiB x2", "0..4KiB +1KiB", "8MiB", "1..1", "1..9e15 x3", "5..1", "0..1MiB +1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vals, err := ParseByteRange(s)
		if err != nil {
			return
		}
		if len(vals) == 0 || len(vals) > MaxRangeValues {
			t.Fatalf("ParseByteRange(%q) gave %d values", s, len(vals))
		}
		for i, v := range vals {
			if v < 0 || v > MaxBytes || i > 0 && v <= vals[i-1] {
				t.Fatalf("ParseByteRange(%q) = %v: not increasing sizes", s, vals)
			}
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	for _, c := range badCases {
		f.Add([]byte(c.src))
	}
	f.Add([]byte("a = 1\n[[sweep]]\n[[sweep]]\nworld = \"1..8\"\n"))
	f.Add([]byte(policyFile(`policy = "nccl"`, `policy = "table"`)))
	f.Add([]byte(""))
	f.Add([]byte(workloadFile))
	f.Add([]byte(withNetwork(`model = "flow"
latency = "5us"
bandwidth = "12.5GB/s"
sharing = "latency_weighted"
eager_limit = "64KiB"
envelope = 16
lat_factors = "0:2;64KiB:1"
handshake = "rts_cts"`, "")))
	f.Add([]byte(withNetwork(`preset = "gb200-nvl72"
nodes = 36
nvlink_domain = 8
nvls_bandwidth = "inf"
inter = "fat_tree"
inter_radix = 16`, "")))
	f.Add([]byte(withNetwork(`model = "flow"
topology = "gpu_cluster"
gpus_per_node = 8
nics_per_node = 3
nvlink_bandwidth = "450GB/s"
nic_bandwidth = "400Gbit/s"
inter_radix = 6
inter_oversubscription = 2
gpu = "blackwell"
[network.nccl]
ll_step = "1us"
tree_channel_bandwidth = "inf"`, "")))
	f.Add([]byte(withNetwork(`model = "alpha-beta"
latency = "2.7us"
bandwidth = "50GB/s"
preset = "dgx-2"
cpu = "AMD"
ranks_per_node = 16
[network.nccl]
ll_bandwith = "1GB/s"`, "")))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.toml", data)
		if err != nil {
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("error %T %v, want non-empty Errors", err, err)
			}
			for i, e := range errs {
				if e.File != "fuzz.toml" || e.Line < 0 || e.Msg == "" || i > 0 && e.Line < errs[i-1].Line {
					t.Fatalf("bad error %d: %+v", i, e)
				}
			}
			return
		}
		// A scenario that parses is complete and within limits.
		if s.Network.Sim == nil || len(s.Sweeps) == 0 && (s.Workload == nil || len(s.Workload.Points) == 0) {
			t.Fatalf("parsed scenario lacks a network, or sweeps and a workload: %+v", s)
		}
		if w := s.Workload; w != nil {
			for _, p := range w.Points {
				if len(p.Values) != len(w.Axes) || p.Spec.Validate() != nil {
					t.Fatalf("workload point %+v of axes %v", p, w.Axes)
				}
			}
		}
		if m := s.Network.MachineFor(5); m != nil && (len(m.Node) != 0 && len(m.Node) != 5 || s.Network.Model == "flow" && m.Node != nil) {
			t.Fatalf("machine %+v for 5 ranks", m)
		}
		for _, sw := range s.Sweeps {
			if sw.Collective == nil || len(sw.Algorithms) == 0 || len(sw.World) == 0 || len(sw.Bytes) == 0 {
				t.Fatalf("incomplete sweep %+v", sw)
			}
			for _, w := range sw.World {
				if w < 1 || w > MaxWorld {
					t.Fatalf("world %d", w)
				}
			}
			for _, b := range sw.Bytes {
				if b < 0 || b > MaxBytes || b%sw.DTypes[0].Size() != 0 {
					t.Fatalf("bytes %d for %s", b, sw.DTypes[0])
				}
			}
		}
	})
}
