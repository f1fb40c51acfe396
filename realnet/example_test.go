package realnet_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/realnet"
)

// Two ranks on loopback, in one process for the example: rank 0 hosts the
// seed, both join through it, and both run the same ring allreduce the
// simulator runs.
func Example() {
	ca, err := realnet.NewCA() // what a launcher does for a run on one machine
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	results := make([][]float32, 2)
	var wg sync.WaitGroup
	seedReady := make(chan string)
	for rank := range 2 {
		wg.Go(func() {
			creds, err := ca.RankCredentials("example", rank)
			if err != nil {
				panic(err)
			}
			ep, err := realnet.ListenAddr("127.0.0.1:0", realnet.Config{Credentials: creds})
			if err != nil {
				panic(err)
			}
			seed := ""
			if rank == 0 {
				if err := ep.HostSeed(2, ""); err != nil {
					panic(err)
				}
				seed = ep.Addr().String()
				seedReady <- seed
			} else {
				seed = <-seedReady
			}
			l, err := ep.Join(ctx, seed, rank, 2)
			if err != nil {
				panic(err)
			}
			defer l.Close()

			// Rank r holds (r+1) x [1 2 3 4], as little-endian f32.
			buf := make(device.Host, 4*4)
			for i := range 4 {
				binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(float32((i+1)*(rank+1))))
			}
			if err := algos.RingAllreduce(ctx, l, buf, device.F32, device.Sum); err != nil {
				panic(err)
			}
			for i := range 4 {
				results[rank] = append(results[rank], math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:])))
			}
		})
	}
	wg.Wait()
	fmt.Println("rank 0:", results[0])
	fmt.Println("rank 1:", results[1])
	// Output:
	// rank 0: [3 6 9 12]
	// rank 1: [3 6 9 12]
}
