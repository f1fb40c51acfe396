package trace_test

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
	"github.com/nexar-go/nexar-go/trace"
)

// Record one message from rank 0 to rank 1 and look at the spans of the
// trace: a send on rank 0, a receive on rank 1, and rank 1's wait.
func ExampleRecorder() {
	rec := trace.NewRecorder()
	model := sim.AlphaBeta{Latency: 5 * sim.Microsecond, Bandwidth: 1e9}
	_, err := sim.Run(sim.Config{World: 2, Model: model, Observer: rec}, func(ctx context.Context, l algos.Link) error {
		buf := l.Alloc(1000)
		if l.Rank() == 0 {
			return algos.Send(ctx, l, 1, 7, buf)
		}
		return algos.Recv(ctx, l, 0, 7, buf)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range rec.Build(trace.Meta{Title: "one message"}).TraceEvents {
		if e.Ph == "X" {
			fmt.Printf("rank %d %-8s %g µs for %g µs\n", e.Pid, e.Name, *e.Ts, *e.Dur)
		}
	}
	// Output:
	// rank 0 send → 1 0 µs for 6 µs
	// rank 1 recv ← 0 0 µs for 6 µs
	// rank 0 wait     0 µs for 6 µs
	// rank 1 wait     0 µs for 6 µs
}
