package schedule_test

import (
	"fmt"
	"path/filepath"

	"github.com/nexar-go/nexar-go/schedule"
)

// ExampleParseTECCL reads a TE-CCL allgather solution and makes it a
// schedule: per GPU a copy, one threadblock receiving from its ring
// neighbour and one sending to the other.
func ExampleParseTECCL() {
	sol, err := schedule.LoadTECCL(filepath.Join("testdata", "teccl", "ring4_allgather_1chunk.json"))
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := sol.Schedule()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d GPUs, %d chunk(s) each, %d flows, TE-CCL's finish %gs\n", len(sol.GPUs), sol.Chunks, len(sol.Flows), sol.Finish)
	fmt.Printf("%s: %d chunks a loop, gpu 0 has %d threadblocks\n", s.Coll, s.NChunksPerLoop, len(s.GPUs[0].TBs))
	// Output:
	// 4 GPUs, 1 chunk(s) each, 12 flows, TE-CCL's finish 1.8e-05s
	// allgather: 4 chunks a loop, gpu 0 has 3 threadblocks
}
