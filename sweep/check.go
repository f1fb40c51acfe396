package sweep

import (
	"fmt"
	"sync"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/algos/algotest"
	"github.com/nexar-go/nexar-go/device"
)

// Check fills the buffers of one host-data point with each rank's input
// and verifies them after the collective. The simulator runs one rank at a
// time, but a Check should not assume it.
type Check struct {
	// Fill writes rank's input into the call's buffers (Send, or Buf for
	// in-place collectives), which hold real bytes.
	Fill func(rank int, c *algos.Call)
	// Verify returns an error if rank's buffers do not hold what the
	// collective must leave there.
	Verify func(rank int, c algos.Call) error
}

// CheckMaker makes the Check of one point, where it can compute the
// expected result once for every rank.
type CheckMaker func(p Point) *Check

var (
	checksMu sync.Mutex
	// checks are keyed by collective name: a collective's layout does not
	// say what it computes (scan and allreduce look alike).
	checks = map[string]CheckMaker{"allreduce": AllreduceCheck}
)

// RegisterCheck makes m the host-data check of the collective called name,
// replacing any earlier one. Only allreduce has one built in (reference
// results for the other collectives will come with the catalogue).
func RegisterCheck(name string, m CheckMaker) {
	checksMu.Lock()
	defer checksMu.Unlock()
	checks[name] = m
}

// checkFor returns the check maker for c, or nil if it has none.
func checkFor(c *algos.Collective) CheckMaker {
	checksMu.Lock()
	defer checksMu.Unlock()
	return checks[c.Name]
}

// HasCheck reports whether points of c can run with host data.
func HasCheck(c *algos.Collective) bool { return checkFor(c) != nil }

// AllreduceCheck fills every rank's buffer with algotest.Input and checks
// that every rank ends with algotest.Reduced: the check of collectives that
// leave the reduction of every rank's whole buffer on every rank, in place.
// A lossy algorithm (a compressed allreduce) is held to what it must
// compute instead, algotest.CompressedReduced: the same compression
// applied to the same inputs, bit for bit.
func AllreduceCheck(p Point) *Check {
	_, _, used := p.Layout()
	want := algotest.AllreduceExpected(p.Algorithm, p.Params, used, p.DType, p.Op, p.World, p.Seed)
	return &Check{
		Fill: func(rank int, c *algos.Call) {
			b, _ := device.HostBytes(c.Buf)
			algotest.Fill(b, p.DType, p.Op, rank, p.World, p.Seed)
		},
		Verify: func(rank int, c algos.Call) error {
			b, ok := device.HostBytes(c.Buf)
			if !ok {
				return fmt.Errorf("buffer is %T, not host memory", c.Buf)
			}
			if len(b) < len(want) {
				return fmt.Errorf("buffer of %d bytes, want %d", len(b), len(want))
			}
			return algotest.Compare(b[:len(want)], want, p.DType)
		},
	}
}
