package units_test

import (
	"fmt"

	"github.com/nexar-go/nexar-go/units"
)

func ExampleParseBytes() {
	for _, s := range []string{"1024", "8MiB", "1.5KB", "1.5B"} {
		n, err := units.ParseBytes(s)
		fmt.Println(n, err)
	}
	// Output:
	// 1024 <nil>
	// 8388608 <nil>
	// 1500 <nil>
	// 0 "1.5B" is not a whole number of bytes
}

func ExampleParseNCCLBytes() {
	for _, s := range []string{"128M", "8", "8MiB"} {
		n, _ := units.ParseNCCLBytes(s)
		fmt.Println(s, "=", n)
	}
	// Output:
	// 128M = 134217728
	// 8 = 8
	// 8MiB = 8388608
}

func ExampleParseDuration() {
	d, _ := units.ParseDuration("1.5 ms")
	fmt.Println(int64(d), "ps =", d, "=", d.Seconds(), "s")
	// Output:
	// 1500000000 ps = 1.5ms = 0.0015 s
}

func ExampleParseBandwidth() {
	for _, s := range []string{"12.5GB/s", "100Gbit/s", "1GiB/s", "inf"} {
		bw, _ := units.ParseBandwidth(s)
		fmt.Printf("%s = %g B/s\n", s, bw)
	}
	// Output:
	// 12.5GB/s = 1.25e+10 B/s
	// 100Gbit/s = 1.25e+10 B/s
	// 1GiB/s = 1.073741824e+09 B/s
	// inf = +Inf B/s
}

func ExampleParseFLOPS() {
	rate, _ := units.ParseFLOPS("989TFLOP/s")
	work, _ := units.ParseFLOPs("1.2 TFLOP")
	fmt.Println(units.FormatSeconds(work / rate))
	// Output:
	// 1.21 ms
}

func ExampleParseByteRange() {
	sizes, _ := units.ParseByteRange("1KiB..1MiB x4")
	fmt.Println(sizes)
	steps, _ := units.ParseByteRange("0..3KiB +1KiB")
	fmt.Println(steps)
	_, err := units.ParseByteRange("0..1KiB")
	fmt.Println(err)
	// Output:
	// [1024 4096 16384 65536 262144 1048576]
	// [0 1024 2048 3072]
	// range "0..1KiB": a range that multiplies must start above 0 (list 0 on its own: [0, "1..8 x2"]) (want START..END, START..END xFACTOR or START..END +STEP, such as "1KiB..1GiB x2")
}

func ExampleParseIntRange() {
	worlds, _ := units.ParseIntRange("2..64 x2")
	fmt.Println(worlds)
	// Output:
	// [2 4 8 16 32 64]
}

// A Range is what nccl-tests' -b, -e and -f (or -i) flags describe.
func ExampleRange() {
	r := units.Range{Start: 1 << 10, End: 1 << 20, Factor: 4} // -b 1K -e 1M -f 4
	sizes, ok := r.Values()
	fmt.Println(sizes, ok)
	fmt.Println(r)
	// Output:
	// [1024 4096 16384 65536 262144 1048576] true
	// 1024..1048576 x4
}

func ExampleFormatBytes() {
	for _, b := range []float64{512, 1536, 1e6, 64 << 20} {
		fmt.Printf("%q ", units.FormatBytes(b))
	}
	fmt.Println()
	// Output:
	// "512 B" "1.5 KiB" "977 KiB" "64 MiB"
}

// The writers of sizes, side by side.
func ExampleFormatBytesCompact() {
	for _, n := range []int64{1000, 64 << 10, 1536 << 10, 1 << 30} {
		fmt.Printf("%-9s %-10s %-10s %-8s %s\n", units.FormatBytesCompact(n), units.FormatBytesExact(n),
			units.FormatBytesFixed(n), units.FormatBytesG(float64(n)), units.FormatBytes(float64(n)))
	}
	// Output:
	// 1000B     1000 B     1000 B     1000 B   0.977 KiB
	// 64KiB     64 KiB     64.0 KiB   64 KiB   64 KiB
	// 1536KiB   1536 KiB   1.50 MiB   1.5 MiB  1.5 MiB
	// 1GiB      1 GiB      1.00 GiB   1 GiB    1 GiB
}

// The writers of durations, side by side.
func ExampleFormatSeconds() {
	for _, s := range []float64{250e-9, 12.5e-6, 1.5e-3} {
		ps := units.Picoseconds(s * 1e12)
		fmt.Printf("%-8s %-8s %-8s %-14s %s\n", ps, units.FormatSeconds(s), units.FormatSecondsG(s),
			units.FormatNanoseconds(s, 3), units.FormatNCCLMicros(s))
	}
	// Output:
	// 250ns    250 ns   250 ns   250.000ns         0.25
	// 12.5us   12.5 µs  12.5 µs  12500.000ns      12.50
	// 1.5ms    1.5 ms   1.5 ms   1500000.000ns   1500.0
}

// The writers of bandwidths, side by side.
func ExampleFormatBandwidth() {
	bw, _ := units.ParseBandwidth("100Gbit/s")
	fmt.Println(units.FormatBandwidth(bw), units.FormatBandwidthWhole(bw), units.FormatBandwidthGB(bw, 5), units.FormatBandwidthG(bw))
	// Output:
	// 1.25e+10B/s 12500000000B/s 12.5GB/s 12.5 GB/s
}

func ExampleFormatSecondsRough() {
	fmt.Println(units.FormatCount(123456), "messages, roughly", units.FormatSecondsRough(5000), "and", units.FormatBytesFixed(15784004812))
	// Output:
	// 123k messages, roughly 1.4 h and 14.7 GiB
}
