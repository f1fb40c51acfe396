package plots

import (
	"io"
	"testing"
)

// BenchmarkEncode measures drawing and encoding each figure of the
// synthetic sweep (5 worlds x 19 sizes x 4 algorithms).
func BenchmarkEncode(b *testing.B) {
	figs := figures(b, synthSweep())
	for _, kind := range []string{"latency", "busbw", "crossover", "auto"} {
		for _, format := range []string{"png", "svg"} {
			b.Run(kind+"/"+format, func(b *testing.B) {
				for b.Loop() {
					if err := figs[kind].Encode(io.Discard, format); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
