package sweep_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/sweep"
)

// crossbar is alpha-beta's network as a flow-model crossbar.
const crossbar = `name = "links"
seed = 3

[network]
model = "flow"
topology = "crossbar"
latency = "5us"
bandwidth = "12.5GB/s"
reduce_bandwidth = "25GB/s"
`

func planOn(t *testing.T, net, sweeps string) []sweep.Point {
	t.Helper()
	s, err := scenario.Parse("links.toml", []byte(net+sweeps))
	if err != nil {
		t.Fatal(err)
	}
	points, err := sweep.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	return points
}

// TestRunLinks checks the per-link account of a ring allreduce on a
// crossbar against what the algorithm sends: in 2(p-1) steps each rank
// sends one block of n/p bytes to the next, so its port into the switch
// and the next rank's port out of it carry 2(p-1)n/p bytes in 2(p-1)
// messages, busy (one message at a time, at the port's bandwidth) for
// 2(p-1)n/p / bandwidth.
func TestRunLinks(t *testing.T) {
	points := planOn(t, crossbar, `
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2, 4]
bytes = ["1MiB"]
`)
	for _, p := range points {
		if err := p.CheckLinks(); err != nil {
			t.Fatalf("%v: %v", p, err)
		}
		a, err := sweep.RunLinks(p)
		if err != nil {
			t.Fatal(err)
		}
		row, err := sweep.RunPoint(p)
		if err != nil {
			t.Fatal(err)
		}
		if a.End.Seconds() != row.Time || a.Seed != p.Seed {
			t.Errorf("p=%d: account of a run of %v s (seed %d), the row's took %v s (seed %d)", p.World, a.End.Seconds(), a.Seed, row.Time, p.Seed)
		}
		n, w := int64(1<<20), int64(p.World)
		wantBytes, wantMsgs := 2*(w-1)*n/w, 2*(w-1)
		wantBusy := float64(wantBytes) / 12.5e9
		if len(a.Usage) != 2*p.World {
			t.Fatalf("p=%d: %d edges, want 2p = %d", p.World, len(a.Usage), 2*p.World)
		}
		for _, u := range a.Usage {
			if u.Bytes != wantBytes || u.Messages != wantMsgs || relErr(u.Busy.Seconds(), wantBusy) > 1e-9 || u.PeakFlows != 1 {
				t.Errorf("p=%d: %s carried %d bytes in %d messages, busy %v, peak %d; want %d bytes in %d, busy %gs, peak 1",
					p.World, u.Link, u.Bytes, u.Messages, u.Busy, u.PeakFlows, wantBytes, wantMsgs, wantBusy)
			}
		}
	}
}

// TestFatTreeLinksConserveBytes checks a fat tree's account: the hosts'
// links into their leaves carry every byte the ranks send, 2(p-1)n for a
// ring allreduce, and the links out to the hosts every byte received.
func TestFatTreeLinksConserveBytes(t *testing.T) {
	points := planOn(t, `name = "ft"
[network]
model = "flow"
topology = "fat_tree"
radix = 4
link_bandwidth = "50GB/s"
nic_bandwidth = "25GB/s"
`, `
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [8]
bytes = ["8MiB"]
`)
	a, err := sweep.RunLinks(points[0])
	if err != nil {
		t.Fatal(err)
	}
	var up, down, spine int64
	for _, u := range a.Usage {
		switch {
		case strings.HasPrefix(u.From, "host"):
			up += u.Bytes
		case strings.HasPrefix(u.To, "host"):
			down += u.Bytes
		default:
			spine += u.Bytes
		}
	}
	want := int64(2 * 7 * 8 << 20)
	if up != want || down != want {
		t.Errorf("hosts sent %d bytes and received %d, want %d each", up, down, want)
	}
	// Ring neighbours 1-2, 3-4, 5-6 and 7-0 sit on different leaves (two
	// hosts a leaf): 4 of the 8 ranks' messages cross a spine, twice.
	if spine != want {
		t.Errorf("leaf-spine links carried %d bytes, want %d", spine, want)
	}
}

func TestNoLinks(t *testing.T) {
	for _, net := range []string{network, `name = "l"
[network]
model = "loggp"
latency = "2us"
bandwidth = "10GB/s"
`} {
		p := planOn(t, net, `
[[sweep]]
collective = "sweeptest-allreduce"
algorithms = ["hang"]
world = [4]
bytes = ["1KiB"]
`)[0]
		// The check builds the network only: the point would deadlock.
		err := p.CheckLinks()
		var nl *sweep.NoLinksError
		if !errors.As(err, &nl) || nl.Model != p.Network.Model || !strings.Contains(err.Error(), `links exist only for model = "flow"`) {
			t.Errorf("%s: CheckLinks: %v", p.Network.Model, err)
		}
	}
	p := planOn(t, network, `
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [4]
bytes = ["1KiB"]
`)[0]
	var nl *sweep.NoLinksError
	if _, err := sweep.RunLinks(p); !errors.As(err, &nl) {
		t.Errorf("RunLinks on alpha-beta: %v", err)
	}
}

func TestWriteLinksCSV(t *testing.T) {
	points := planOn(t, crossbar, `
[[sweep]]
collective = "allreduce"
algorithms = ["ring", "halving_doubling"]
world = [2, 4]
bytes = ["4KiB"]
`)
	var accounts []*sweep.Links
	for _, i := range []int{1, 3} { // ring at p=4, halving_doubling at p=4
		a, err := sweep.RunLinks(points[i])
		if err != nil {
			t.Fatal(err)
		}
		accounts = append(accounts, a)
	}
	var b bytes.Buffer
	if err := sweep.WriteLinksCSV(&b, accounts); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split("point,collective,algorithm,world,bytes,dtype,seed,time_s,link,from,to,bandwidth_bytes_per_s,latency_s,bytes_carried,messages_carried,busy_s,busy_fraction,utilisation,peak_flows,failed", ",")
	if !slices.Equal(rows[0], want) || !slices.Equal(sweep.LinksHeader, want) {
		t.Fatalf("header %v, want %v", rows[0], want)
	}
	// Every column has a name of its own, for readers that look columns
	// up by name.
	if names := slices.Compact(slices.Sorted(slices.Values(want))); len(names) != len(want) {
		t.Errorf("header %v names a column twice", want)
	}
	if len(rows) != 1+8+8 {
		t.Fatalf("%d rows, want a header and 8 edges of each point", len(rows))
	}
	for k, row := range rows[1:] {
		a := accounts[k/8]
		key := []string{strconv.Itoa(a.Point.Index), "allreduce", a.Point.VariantName(), "4", "4096", "f32", "3", strconv.FormatFloat(a.End.Seconds(), 'f', 12, 64)}
		if !slices.Equal(row[:8], key) || row[8] != a.Usage[k%8].Link {
			t.Errorf("row %d: %v, want %v then %s", k+1, row, key, a.Usage[k%8].Link)
		}
	}
}

// ExampleWriteLinksCSV writes the per-link account of a ring allreduce of
// 1 MiB on two ranks of a crossbar: each port carries the two halves
// ranks exchange (one in the reduce-scatter, one in the allgather), busy
// 1 MiB / 12.5 GB/s = 83.9 us of the 114.9 us the allreduce takes.
func ExampleWriteLinksCSV() {
	s, err := scenario.Parse("example.toml", []byte(crossbar+`
[[sweep]]
collective = "allreduce"
algorithms = ["ring"]
world = [2]
bytes = ["1MiB"]
`))
	if err != nil {
		panic(err)
	}
	points, err := sweep.Plan(s)
	if err != nil {
		panic(err)
	}
	a, err := sweep.RunLinks(points[0])
	if err != nil {
		panic(err)
	}
	if err := sweep.WriteLinksCSV(os.Stdout, []*sweep.Links{a}); err != nil {
		panic(err)
	}
	// Output:
	// point,collective,algorithm,world,bytes,dtype,seed,time_s,link,from,to,bandwidth_bytes_per_s,latency_s,bytes_carried,messages_carried,busy_s,busy_fraction,utilisation,peak_flows,failed
	// 0,allreduce,ring,2,1048576,f32,3,0.000114857600,dev0->switch,dev0,switch,1.25e+10,0.000005000000,1048576,2,0.000083886080,0.7303485359262252,0.7303485359262252,1,false
	// 0,allreduce,ring,2,1048576,f32,3,0.000114857600,switch->dev0,switch,dev0,1.25e+10,0.000000000000,1048576,2,0.000083886080,0.7303485359262252,0.7303485359262252,1,false
	// 0,allreduce,ring,2,1048576,f32,3,0.000114857600,dev1->switch,dev1,switch,1.25e+10,0.000005000000,1048576,2,0.000083886080,0.7303485359262252,0.7303485359262252,1,false
	// 0,allreduce,ring,2,1048576,f32,3,0.000114857600,switch->dev1,switch,dev1,1.25e+10,0.000000000000,1048576,2,0.000083886080,0.7303485359262252,0.7303485359262252,1,false
}
