package sim_test

import (
	"context"
	"encoding/csv"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

func TestWriteLinksCSV(t *testing.T) {
	// Rank 0 sends 1000 bytes to rank 1 over a crossbar (1 GB/s, 1 us):
	// its uplink and rank 1's downlink each carry 1000 bytes, busy 1 us of
	// the 2 us run; the others carry nothing.
	res := runModel(t, sim.FlowCrossbar(model), 3, func(ctx context.Context, l algos.Link) error {
		switch l.Rank() {
		case 0:
			return algos.Send(ctx, l, 1, 0, l.Alloc(1000))
		case 1:
			return algos.Recv(ctx, l, 0, 0, l.Alloc(1000))
		}
		return nil
	})
	var b strings.Builder
	if err := sim.WriteLinksCSV(&b, res.Links, res.End); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+6 || !slices.Equal(rows[0], sim.LinksCSVHeader) {
		t.Fatalf("got %d rows, header %v", len(rows), rows[0])
	}
	want := map[string][]string{
		"dev0->switch": {"dev0->switch", "dev0", "switch", "1e+09", "0.000001000000", "1000", "1", "0.000001000000", "0.5", "0.5", "1", "false"},
		"switch->dev1": {"switch->dev1", "switch", "dev1", "1e+09", "0.000000000000", "1000", "1", "0.000001000000", "0.5", "0.5", "1", "false"},
		"dev2->switch": {"dev2->switch", "dev2", "switch", "1e+09", "0.000001000000", "0", "0", "0.000000000000", "0", "0", "0", "false"},
	}
	for _, row := range rows[1:] {
		if w, ok := want[row[0]]; ok && !slices.Equal(row, w) {
			t.Errorf("row %v, want %v", row, w)
		}
	}
	if u := (sim.LinkUsage{Bandwidth: math.Inf(1), Bytes: 5}); u.Utilisation(sim.Second) != 0 {
		t.Error("an unlimited link has a utilisation")
	}
}
