package plots

import (
	"math"
	"slices"
	"testing"
)

func TestFormatBytes(t *testing.T) {
	cases := []struct {
		in   float64
		want string
	}{
		{0, "0 B"},
		{1, "1 B"},
		{512, "512 B"},
		{999, "999 B"},
		{1000, "0.977 KiB"},
		{1023, "0.999 KiB"},
		{1024, "1 KiB"},
		{1536, "1.5 KiB"},
		{64 << 20, "64 MiB"},
		{256 << 20, "256 MiB"},
		{1 << 30, "1 GiB"},
		{1 << 40, "1 TiB"},
		{1005 << 10, "0.981 MiB"},
		{1023.9, "1 KiB"}, // rounds to 1000 of B, so steps up
		{1e6, "977 KiB"},  // 976.5625 KiB, three significant digits
		{-2048, "-2 KiB"},
	}
	for _, c := range cases {
		if got := FormatBytes(c.in); got != c.want {
			t.Errorf("FormatBytes(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestFormatSeconds(t *testing.T) {
	cases := []struct {
		in   float64
		want string
	}{
		{0, "0 s"},
		{1e-5, "10 µs"},
		{1e-3, "1 ms"},
		{1.5e-3, "1.5 ms"},
		{0.999999999999e-3, "1 ms"}, // floating noise below a unit boundary
		{250e-9, "250 ns"},
		{2, "2 s"},
		{1538.0064e-6, "1.54 ms"}, // ring, worked example of cost-models.md
		{5e-13, "0.5 ps"},
		{-3e-6, "-3 µs"},
		{1200, "1200 s"},
	}
	for _, c := range cases {
		if got := FormatSeconds(c.in); got != c.want {
			t.Errorf("FormatSeconds(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestBytesTicks(t *testing.T) {
	cases := []struct {
		lo, hi    float64
		maxLabels int
		want      []string
	}{
		// 19 powers of two: every 6th, from end to end.
		{1 << 10, 256 << 20, 5, []string{"1 KiB", "64 KiB", "4 MiB", "256 MiB"}},
		// The last size has its label too.
		{1 << 10, 4 << 20, 5, []string{"1 KiB", "8 KiB", "64 KiB", "512 KiB", "4 MiB"}},
		// 18 powers of two: no step labels both ends evenly, so the ends
		// and every 4th between, which lands on 1 MiB; 4 KiB is too near
		// 1 KiB to be labelled.
		{1 << 10, 128 << 20, 5, []string{"1 KiB", "64 KiB", "1 MiB", "16 MiB", "128 MiB"}},
		{1 << 10, 256 << 20, 10, []string{"1 KiB", "4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB", "4 MiB", "16 MiB", "64 MiB", "256 MiB"}},
		{1 << 10, 256 << 20, 3, []string{"1 KiB", "512 KiB", "256 MiB"}},
		{8, 64, 5, []string{"8 B", "16 B", "32 B", "64 B"}},
		{1, 1 << 30, 4, []string{"1 B", "1 KiB", "1 MiB", "1 GiB"}},
		// Within one octave: the bounds are not powers of two, no label.
		{1100, 1500, 5, nil},
	}
	for _, c := range cases {
		var got []string
		ticks := bytesTicks{maxLabels: c.maxLabels}.Ticks(c.lo, c.hi)
		for _, tk := range ticks {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
			if tk.Value < c.lo || tk.Value > c.hi {
				t.Errorf("bytesTicks(%v, %v): tick %v out of range", c.lo, c.hi, tk.Value)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("bytesTicks(%v, %v, %d) labels %q, want %q", c.lo, c.hi, c.maxLabels, got, c.want)
		}
	}
}

func TestDecadeTicks(t *testing.T) {
	cases := []struct {
		lo, hi float64
		want   []string
	}{
		{10e-6, 100e-3, []string{"10 µs", "100 µs", "1 ms", "10 ms", "100 ms"}},
		{1e-6, 10e-6, []string{"1 µs", "2 µs", "5 µs", "10 µs"}},
		// 13 decades: every other one fits six labels.
		{1e-9, 1e3, []string{"10 ns", "1 µs", "100 µs", "10 ms", "1 s", "100 s"}},
		// 19 decades: every sixth, on unit boundaries.
		{1e-12, 1e6, []string{"1 ps", "1 µs", "1 s", "1000000 s"}},
		{20e-6, 50e-6, []string{"20 µs", "50 µs"}},
	}
	for _, c := range cases {
		var got []string
		for _, tk := range (decadeTicks{maxLabels: 6, format: FormatSeconds}).Ticks(c.lo, c.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("decadeTicks(%v, %v) labels %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}

func TestLinearTicks(t *testing.T) {
	cases := []struct {
		lo, hi float64
		want   []string
	}{
		{0, 13.5, []string{"0%", "2%", "4%", "6%", "8%", "10%", "12%"}},
		{0, 115, []string{"0%", "20%", "40%", "60%", "80%", "100%"}},
		{-1.5, 1.2, []string{"-1.5%", "-1.0%", "-0.5%", "0.0%", "0.5%", "1.0%"}},
	}
	for _, c := range cases {
		var got []string
		for _, tk := range (linearTicks{want: 6, suffix: "%"}).Ticks(c.lo, c.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("linearTicks(%v, %v) labels %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}

func TestNiceRanges(t *testing.T) {
	if lo, hi := niceLogRange(13e-6, 70e-3); lo != 10e-6 || hi != 100e-3 {
		t.Errorf("niceLogRange(13µs, 70ms) = %v, %v; want 10µs, 100ms", lo, hi)
	}
	if lo, hi := niceLogRange(3e-6, 3e-6); !(lo < 3e-6 && hi > 3e-6) {
		t.Errorf("niceLogRange of one value = %v, %v; want a range around it", lo, hi)
	}
	if lo, hi := pow2Range(1000, 1000); lo != 512 || hi != 1024 {
		t.Errorf("pow2Range(1000, 1000) = %v, %v; want 512, 1024", lo, hi)
	}
	if lo, hi := pow2Range(1024, 1024); lo != 512 || hi != 2048 {
		t.Errorf("pow2Range(1024, 1024) = %v, %v; want 512, 2048", lo, hi)
	}
}

func TestSizeTicks(t *testing.T) {
	pow2 := func(lo, hi, step int) []float64 {
		var out []float64
		for e := lo; e <= hi; e += step {
			out = append(out, float64(int64(1)<<e))
		}
		return out
	}
	cases := []struct {
		sizes     []float64
		maxLabels int
		want      []string
		lo, hi    float64 // the axis; 0: the first and last size
	}{
		{pow2(10, 28, 1), 10, []string{"1 KiB", "4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB", "4 MiB", "16 MiB", "64 MiB", "256 MiB"}, 0, 0},
		{pow2(11, 27, 2), 10, []string{"2 KiB", "8 KiB", "32 KiB", "128 KiB", "512 KiB", "2 MiB", "8 MiB", "32 MiB", "128 MiB"}, 0, 0},
		// An even number of sizes: the last is labelled, the one before
		// it is too near.
		{pow2(10, 29, 1), 10, []string{"1 KiB", "4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB", "4 MiB", "16 MiB", "64 MiB", "512 MiB"}, 0, 0},
		// Mixed with sizes that are not powers of two: the ends, and
		// powers of two between.
		{[]float64{1000, 1024, 3000, 4096, 9000, 16384, 20000}, 3, []string{"0.977 KiB", "4 KiB", "19.5 KiB"}, 0, 0},
		{[]float64{1000, 1024, 3000, 4096, 9000, 16384, 20000}, 2, []string{"0.977 KiB", "19.5 KiB"}, 0, 0},
		// Sizes a few bytes apart (an alltoall's rounding at several world
		// sizes) get one label, not three on top of each other.
		// (The crossover map's axis reaches half an octave beyond.)
		{[]float64{16320, 16368, 16380}, 10, []string{"15.9 KiB"}, 16320 / math.Sqrt2, 16380 * math.Sqrt2},
		// No powers of two: every other size.
		{[]float64{1000, 3000, 9000}, 2, []string{"0.977 KiB", "8.79 KiB"}, 0, 0},
	}
	for _, c := range cases {
		var got []string
		lo, hi := c.lo, c.hi
		if lo == 0 {
			lo, hi = c.sizes[0], c.sizes[len(c.sizes)-1]
		}
		ticks := sizeTicks{sizes: c.sizes, maxLabels: c.maxLabels}.Ticks(lo, hi)
		for _, tk := range ticks {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("sizeTicks(%v) labels %q, want %q", c.sizes, got, c.want)
		}
	}
}
