package plots

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Options configures WriteAll. The zero value writes PNG and SVG, without a
// bandwidth ceiling or an auto budget line.
type Options struct {
	// Formats are the image formats to write, "png" and/or "svg";
	// nil means both.
	Formats []string
	// CeilingGBps is the link bandwidth in GB/s drawn on the busbw plots;
	// 0 draws none.
	CeilingGBps float64
	// AutoBudgetPct is the slowdown auto is allowed, drawn on the auto
	// plots; 0 draws none.
	AutoBudgetPct float64
	// Subtitle is printed under every figure's title (Figure.SetSubtitle):
	// what the points are of, such as the scenario and its network; ""
	// prints none.
	Subtitle string
}

// WriteAll writes every plot that applies to points into dir (created if
// missing), for each collective present, and returns the paths written in
// a deterministic order: by collective (then dtype), then latency, busbw,
// crossover, auto, then format. Files are named kind_collective.ext, or
// kind_collective_dtype.ext when a collective has several dtypes:
//
//	latency_allreduce.png    LatencyPanels
//	busbw_allreduce.png      BusBWPanels, when points carry busbw
//	crossover_allreduce.png  CrossoverMap, when two or more algorithms ran
//	auto_allreduce.png       AutoSlowdown, when "auto" ran beside them
//
// A collective with nothing to draw (a barrier has no sizes) is skipped.
// Invalid points and I/O failures are errors.
func WriteAll(dir string, points []Point, opts Options) ([]string, error) {
	formats := opts.Formats
	if formats == nil {
		formats = []string{"png", "svg"}
	}
	for _, f := range formats {
		if f != "png" && f != "svg" {
			return nil, fmt.Errorf("plots: unsupported image format %q (want png or svg)", f)
		}
	}
	type group struct{ collective, dtype string }
	var groups []group
	dtypes := map[string][]string{}
	for _, p := range points {
		g := group{p.Collective, p.DType}
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
			dtypes[p.Collective] = append(dtypes[p.Collective], p.DType)
		}
	}
	slices.SortFunc(groups, func(a, b group) int {
		if c := strings.Compare(a.collective, b.collective); c != 0 {
			return c
		}
		return strings.Compare(a.dtype, b.dtype)
	})
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}

	var written []string
	for _, g := range groups {
		var sub []Point
		for _, p := range points {
			if p.Collective == g.collective && p.DType == g.dtype {
				sub = append(sub, p)
			}
		}
		s, err := selectPoints(sub, g.collective)
		if err != nil {
			return written, err
		}
		base := fileName(g.collective)
		if len(dtypes[g.collective]) > 1 {
			base += "_" + fileName(g.dtype)
		}
		figs := []struct {
			kind string
			make func() (*Figure, error)
		}{
			{"latency", func() (*Figure, error) { return LatencyPanels(sub, g.collective) }},
			{"busbw", func() (*Figure, error) { return BusBWPanels(sub, g.collective, opts.CeilingGBps) }},
			{"crossover", func() (*Figure, error) {
				if len(s.algorithms) < 2 {
					return nil, ErrNoData
				}
				return CrossoverMap(sub, g.collective)
			}},
			{"auto", func() (*Figure, error) { return AutoSlowdown(sub, g.collective, opts.AutoBudgetPct) }},
		}
		for _, fg := range figs {
			fig, err := fg.make()
			if errors.Is(err, ErrNoData) || errors.Is(err, ErrNoAuto) || errors.Is(err, ErrNoBusBW) {
				continue
			}
			if err != nil {
				return written, err
			}
			fig.SetSubtitle(opts.Subtitle)
			for _, ext := range formats {
				path := filepath.Join(dir, fg.kind+"_"+base+"."+ext)
				if err := fig.Save(path); err != nil {
					return written, err
				}
				written = append(written, path)
			}
		}
	}
	return written, nil
}

// fileName makes a collective or dtype name safe as part of a file name.
func fileName(s string) string {
	if s == "" {
		return "none"
	}
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}
