package plots

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWrapText(t *testing.T) {
	sty := subtitleStyle()
	s := "scenario oversubscribed-ethernet · network flow: topology fat_tree, tiers 2, radix 16, oversubscription 3, link_bandwidth 25Gbit/s, link_latency 1us, routing ecmp"
	width := sty.Width("scenario oversubscribed-ethernet · network flow: topology fat_tree,")
	lines := wrapText(sty, s, width)
	if strings.Join(lines, " ") != s {
		t.Fatalf("lines %q do not make the text", lines)
	}
	for _, l := range lines {
		if sty.Width(l) > width {
			t.Errorf("line %q is wider than %v", l, width)
		}
		// Lines break after a comma or colon, or before "·": a "key
		// value" pair stays whole.
		if !strings.HasSuffix(l, ",") && !strings.HasSuffix(l, ":") && l != lines[len(lines)-1] {
			t.Errorf("line %q breaks inside a pair", l)
		}
	}
	// A piece wider than a line breaks at its spaces.
	if got := wrapText(sty, "a b c", sty.Width("a b")); !slices.Equal(got, []string{"a b", "c"}) {
		t.Errorf("wrapText = %q", got)
	}
	if got := wrapText(sty, "", width); got != nil {
		t.Errorf("wrapText of nothing = %q", got)
	}
}

// TestSubtitle checks that a subtitle grows the figure by its lines and
// that WriteAll prints it in every figure.
func TestSubtitle(t *testing.T) {
	f, err := LatencyPanels(synthSweep(), "allreduce")
	if err != nil {
		t.Fatal(err)
	}
	h := f.Height
	line := subtitleStyle().Height("Xg")
	f.SetSubtitle("scenario s · network alpha-beta: latency 5us, bandwidth 12.5GB/s")
	if grew := f.Height - h; grew < line || grew > 2*line {
		t.Errorf("one line of subtitle grew the figure by %v, want %v and a gap", grew, line)
	}
	f.SetSubtitle(strings.Repeat("word, ", 200))
	if grew := f.Height - h; grew < 4*line {
		t.Errorf("a long subtitle grew the figure by %v only", grew)
	}
	f.SetSubtitle("")
	if math.Abs(float64(f.Height-h)) > 1e-9 || f.Subtitle() != "" {
		t.Errorf("no subtitle: height %v, want %v", f.Height, h)
	}

	dir := t.TempDir()
	paths, err := WriteAll(dir, synthSweep(), Options{Formats: []string{"svg"}, Subtitle: "scenario synthetic · network alpha-beta: latency 5us"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte("scenario synthetic")) {
			t.Errorf("%s has no subtitle", filepath.Base(p))
		}
	}
	if len(paths) != 4 {
		t.Errorf("wrote %q, want the four figures", paths)
	}
}
