package schedule_test

import (
	"fmt"
	"path/filepath"

	"github.com/nexar-go/nexar-go/schedule"
)

// ExampleParseMSCCLPP reads an MSCCL++ execution plan as a schedule: the
// ring allreduce's puts become sends at their signals, its waits
// receives, its reduces local steps.
func ExampleParseMSCCLPP() {
	s, err := schedule.LoadMSCCLPP(filepath.Join("testdata", "mscclpp", "ring_allreduce_4gpu.json"))
	if err != nil {
		fmt.Println(err)
		return
	}
	count := map[schedule.Op]int{}
	for _, tb := range s.GPUs[0].TBs {
		for _, st := range tb.Steps {
			count[st.Type]++
		}
	}
	fmt.Printf("%s on %d GPUs, in place %v: gpu 0 sends %d, receives %d, reduces %d\n", s.Coll, s.NGPUs, s.InPlace, count[schedule.Send], count[schedule.Recv], count[schedule.Reduce])
	// Output:
	// allreduce on 4 GPUs, in place true: gpu 0 sends 6, receives 6, reduces 3
}
