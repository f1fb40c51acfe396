package sim_test

import (
	"context"
	"fmt"
	"os"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// Build a two-tier fat tree with 2:1 oversubscribed leaves, run a ring
// allreduce of 64 MiB on 24 ranks with the flow model, and find the
// busiest link; the links' account is what links.csv holds.
func ExampleFlow() {
	tree := sim.FatTree{
		Tiers:            2,
		Radix:            6, // 4 hosts and 2 uplinks per leaf: 2:1
		Oversubscription: 2,
		Link:             sim.LinkParams{Bandwidth: 12.5e9, Latency: 500 * sim.Nanosecond}, // 100 Gbit/s
	}
	model := sim.Flow{Topology: tree, ReduceBandwidth: 100e9}
	res, err := sim.Run(sim.Config{World: 24, Model: model}, func(ctx context.Context, l algos.Link) error {
		return algos.RingAllreduce(ctx, l, l.Alloc(64<<20), device.F32, device.Sum)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	busiest := res.Links[0]
	for _, u := range res.Links {
		if u.Busy > busiest.Busy {
			busiest = u
		}
	}
	fmt.Printf("allreduce: %.1f us on %d ranks, %d messages\n", res.End.Seconds()*1e6, len(res.Finish), res.Messages)
	fmt.Printf("busiest link: %s, %d bytes, busy %.0f%% of the run\n", busiest.Link, busiest.Bytes, 100*float64(busiest.Busy)/float64(res.End))
	if err := sim.WriteLinksCSV(os.Stdout, res.Links[:2], res.End); err != nil {
		fmt.Println(err)
	}
	// Output:
	// allreduce: 11025.2 us on 24 ranks, 1104 messages
	// busiest link: host15->leaf3, 128625328 bytes, busy 93% of the run
	// link,from,to,bandwidth_bytes_per_s,latency_s,bytes_carried,messages_carried,busy_s,busy_fraction,utilisation,peak_flows,failed
	// host0->leaf0,host0,leaf0,1.25e+10,0.000000500000,128625320,46,0.010290025600,0.9333227132538411,0.9333227132538411,1,false
	// leaf0->host0,leaf0,host0,1.25e+10,0.000000500000,128625320,46,0.010290025600,0.9333227132538411,0.9333227132538411,1,false
}
