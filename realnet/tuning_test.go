package realnet

import (
	"bytes"
	"context"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// TestApplyTuning reads the bulk threshold of a tuning table's [transport]
// into a Config, in each of its forms.
func TestApplyTuning(t *testing.T) {
	parse := func(text string) *algos.Tuning {
		t.Helper()
		table, err := algos.ParseTuning("t.toml", []byte("version = 1\n"+text))
		if err != nil {
			t.Fatal(err)
		}
		return table
	}
	for _, c := range []struct {
		name  string
		table *algos.Tuning
		start int // the Config's Thresholds.Bulk before
		want  int
	}{
		{"nil table", nil, 0, 0},
		{"no [transport]: the caller's value stays", parse(""), 4096, 4096},
		{"no [transport]: the default stays", algos.DefaultTuning(), 0, 0},
		{"a threshold", parse("[transport]\nbulk_threshold = 65536\n"), 0, 65536},
		{"the table overrides", parse("[transport]\nbulk_threshold = 8192\n"), 4096, 8192},
		{"0: every payload", parse("[transport]\nbulk_threshold = 0\n"), 0, 1},
		{"never", parse("[transport]\nbulk_threshold = \"never\"\n"), 4096, -1},
	} {
		cfg := Config{Thresholds: algos.Thresholds{Bulk: c.start}}
		cfg.ApplyTuning(c.table)
		if cfg.Thresholds.Bulk != c.want {
			t.Errorf("%s: Thresholds.Bulk %d, want %d", c.name, cfg.Thresholds.Bulk, c.want)
		}
	}
}

// TestTunedThreshold starts two ranks with the threshold of a table and
// checks that messages on each side of it take the path it says, and
// arrive intact.
func TestTunedThreshold(t *testing.T) {
	checkGoroutines(t)
	table, err := algos.ParseTuning("t.toml", []byte("version = 1\n[transport]\nbulk_threshold = 3000\n"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg Config
	cfg.ApplyTuning(table)
	links := newWorld(t, 2, cfg)
	defer closeWorld(t, links)
	for _, l := range links {
		p := l.peers[1-l.Rank()]
		if p.bulk == nil {
			t.Fatalf("rank %d has no bulk connection on loopback", l.Rank())
		}
		if p.useBulk(2999) || !p.useBulk(3000) {
			t.Errorf("rank %d: 2999 bytes bulk %t, 3000 bytes bulk %t; want false, true", l.Rank(), p.useBulk(2999), p.useBulk(3000))
		}
	}
	sizes := []int{1, 2999, 3000, 1 << 20}
	errs := run(links, func(ctx context.Context, l *Link) error {
		other := 1 - l.Rank()
		for i, n := range sizes {
			tag := algos.Tag(i)
			got := make(device.Host, n)
			if err := algos.SendRecv(ctx, l, other, pattern(n, l.Rank()), other, got, tag); err != nil {
				return err
			}
			if !bytes.Equal(got, pattern(n, other)) {
				t.Errorf("rank %d: %d bytes from rank %d arrived wrong", l.Rank(), n, other)
			}
		}
		return nil
	})
	if err := firstErr(errs); err != nil {
		t.Fatal(err)
	}
}

// TestUsed: the thresholds a rank configured with a Config uses, realnet's
// default where it leaves them 0.
func TestUsed(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want algos.Thresholds
	}{
		{Config{}, algos.Thresholds{Bulk: algos.DefaultBulkThreshold}},
		{Config{Thresholds: algos.DefaultThresholds()}, algos.DefaultThresholds()},
		{Config{Thresholds: algos.Thresholds{Bulk: algos.BulkNever}}, algos.Thresholds{Bulk: algos.BulkNever}},
		{Config{Thresholds: algos.Thresholds{Bulk: -5, Eager: 4096}}, algos.Thresholds{Bulk: algos.BulkNever, Eager: 4096}},
		{Config{Thresholds: algos.Thresholds{Bulk: 1, Eager: 4096}}, algos.Thresholds{Bulk: 1, Eager: 4096}},
		{Config{Thresholds: algos.Thresholds{Bulk: 1, Eager: 4096}, NoBulk: true}, algos.Thresholds{Bulk: algos.BulkNever}},
	} {
		if got := c.cfg.Used(); got != c.want {
			t.Errorf("%v, no bulk %v: Used() = %v, want %v", c.cfg.Thresholds, c.cfg.NoBulk, got, c.want)
		}
	}
}
