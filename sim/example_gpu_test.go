package sim_test

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/sim"
)

// Build two DGX H100-like hosts: 8 GPUs on NVLink (450 GB/s each way,
// 0.6 us a hop), a 400 Gbit/s NIC per GPU on PCIe, the NICs on a
// rail-optimised fat tree (a hop on one rail 2.7 us). A message between
// GPUs of one host stays on NVLink; between hosts it leaves by the
// sender's rail. Then time a ring allreduce of 256 MiB on one host and
// on both.
func ExampleGPUCluster() {
	nic := sim.LinkParams{Bandwidth: 50e9, Latency: 850 * sim.Nanosecond}
	cluster := sim.GPUCluster{
		Nodes:       2,
		GPUsPerNode: 8,
		NVLink:      sim.LinkParams{Bandwidth: 450e9, Latency: 300 * sim.Nanosecond},
		PCIe:        sim.LinkParams{Bandwidth: 64e9, Latency: 500 * sim.Nanosecond},
		NIC:         nic,
		Fabric:      sim.RailFatTree{Rails: 8, Radix: 64, NIC: nic, Link: sim.LinkParams{Latency: 200 * sim.Nanosecond}},
	}
	top, err := cluster.Build(16)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(top)
	fmt.Println("GPU 2 to GPU 5:", top.Route(2, 5))
	fmt.Println("GPU 2 to GPU 10:", top.Route(2, 10))
	fmt.Println("domains of GPUs 7 and 8:", top.Domain(7), top.Domain(8))
	for _, world := range []int{8, 16} {
		res, err := sim.Run(sim.Config{World: world, Model: sim.Flow{Topology: cluster}}, func(ctx context.Context, l algos.Link) error {
			return algos.RingAllreduce(ctx, l, l.Alloc(256<<20), device.F32, device.Sum)
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		busbw := 2 * float64(world-1) / float64(world) * float64(256<<20) / res.End.Seconds() / 1e9
		fmt.Printf("ring allreduce of 256 MiB on %d GPUs: %.1f us, busbw %.1f GB/s\n", world, res.End.Seconds()*1e6, busbw)
	}
	// Output:
	// gpu_cluster(2x8, NVLink domain 8, 8 NICs/node, fabric rail_fat_tree(8 rails x 1 leaves, 32:32)) (16 devices, 74 nodes, 608 edges)
	// GPU 2 to GPU 5: [gpu0.2->nvs0 nvs0->gpu0.5]
	// GPU 2 to GPU 10: [gpu0.2->nic0.2 nic0.2->inter.rail2.leaf0 inter.rail2.leaf0->nic1.2 nic1.2->gpu1.2]
	// domains of GPUs 7 and 8: 0 1
	// ring allreduce of 256 MiB on 8 GPUs: 1052.3 us, busbw 446.4 GB/s
	// ring allreduce of 256 MiB on 16 GPUs: 10159.3 us, busbw 49.5 GB/s
}
