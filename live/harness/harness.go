// Package harness is what the ranks of a real run exchange besides the
// collectives they measure: the check that every rank runs one job
// (Hello), the warm-up of their connections (WarmUp), one clock (Now,
// and SleepUntil, a sleep that wakes on time) and the instant at which
// every rank starts an iteration (Starter: agreed on, not a barrier,
// which ranks leave a latency apart). Package live measures a sweep's
// points with it, package step (live/step) training steps.
//
// The harness's messages travel on communicators of their own (the Comm
// constants), at the top of the communicator space, so that they never
// meet the measured collectives (communicator 0) or the sub-communicators
// algorithms split off (which count up from 1). They are allocated here,
// for every user of the harness, so that no two meet.
package harness

import "github.com/nexar-go/nexar-go/algos"

// The harness's communicators.
const (
	// CommHello carries Hello and WarmUp.
	CommHello = 1<<algos.CommBits - 1
	// CommStart carries the Starter's clock synchronisation, instants
	// and barriers.
	CommStart = 1<<algos.CommBits - 2
	// CommStats carries a point's times to rank 0 (package live).
	CommStats = 1<<algos.CommBits - 3
	// CommElastic carries rank 0's decision at each point boundary of an
	// elastic world (package live's recovery).
	CommElastic = 1<<algos.CommBits - 4
	// CommStep carries a training step's stream records to rank 0
	// (package step).
	CommStep = 1<<algos.CommBits - 5
)
