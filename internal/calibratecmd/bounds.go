package calibratecmd

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nexar-go/nexar-go/calibrate"
	"github.com/nexar-go/nexar-go/units"
)

// bounds are the bounds the fitted values are held against: the
// memory's bandwidth from --memory-bandwidth (a bandwidth, or "measure":
// this machine's memcpy), else calibrate's conservative default.
func (f *flags) bounds() (calibrate.Bounds, error) {
	b := calibrate.DefaultBounds()
	switch v := *f.memoryBandwidth; v {
	case "":
	case "measure":
		bw := measureMemcpy()
		b.MaxBandwidth = bw
		b.MaxWhy = fmt.Sprintf("%s, this machine's memcpy (--memory-bandwidth measure)", units.FormatBandwidthG(bw))
	default:
		bw, err := units.ParseBandwidth(v)
		if err != nil || !(bw > 0) {
			return b, fmt.Errorf("--memory-bandwidth %q: want a bandwidth (25GB/s) or \"measure\"", v)
		}
		b.MaxBandwidth = bw
		b.MaxWhy = units.FormatBandwidthG(bw) + ", given (--memory-bandwidth)"
	}
	return b, nil
}

// measureMemcpy is the bytes per second one core copies between two
// buffers of 64 MiB, far larger than any cache: the best of five copies.
func measureMemcpy() float64 {
	const n = 64 << 20
	src, dst := make([]byte, n), make([]byte, n)
	for i := range src {
		src[i] = byte(i)
	}
	best := time.Duration(1<<63 - 1)
	for range 5 {
		t0 := time.Now()
		copy(dst, src)
		best = min(best, time.Since(t0))
	}
	return n / max(best.Seconds(), 1e-9)
}

// reportChoice says which model the ranking chose and why: its error on
// points it did not fit beside the runners-up', and the models the
// samples do not determine.
func reportChoice(w io.Writer, cs []calibrate.ModelChoice) {
	if len(cs) == 0 || cs[0].Err != nil {
		return
	}
	var others, refused []string
	for _, c := range cs[1:] {
		if c.Err != nil {
			refused = append(refused, c.Model)
			continue
		}
		others = append(others, fmt.Sprintf("%s %.1f%%", c.Model, 100*c.HeldOut))
	}
	why := fmt.Sprintf("chose %s: the least median error on points it did not fit, %.1f%%", cs[0].Model, 100*cs[0].HeldOut)
	if len(others) > 0 {
		why += " (runners-up: " + strings.Join(others, ", ") + ")"
	}
	if len(refused) > 0 {
		why += "; the samples do not determine " + strings.Join(refused, ", ") + " (above: why)"
	}
	fmt.Fprintln(w, why)
}
