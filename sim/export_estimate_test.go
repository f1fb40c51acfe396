package sim

// FlowWork runs cfg with its flow model counting the work of its max-min
// passes, and FlowWorkPerMessage is the estimate's figure of that work
// per message (see flowSeconds).
var (
	FlowWork           = flowWork
	FlowWorkPerMessage = flowWorkPerMessage
	FlowCounted        = func(cfg Config, body Body) (*Result, int64, int64, error) {
		res, c, err := flowCounted(cfg, body)
		return res, c.work, c.searches, err
	}
)

// FlowCalibrate is the flow estimate's calibration: on the topology
// built once if the spec is of fixed size and once is set, else built by
// every run.
func FlowCalibrate(cfg Config, body Body, once bool) (perMessage, searchesPerRank float64, ok bool) {
	if once {
		cfg = builtOnce(cfg)
	}
	c, ok := flowCalibrate(cfg, body)
	return c.perMessage, c.searchesPerRank, ok
}

// Floor is BenchmarkScale's floor (speed.go).
type Floor = floor

// NewFloor returns a floor with n events pending.
func NewFloor(n int) *Floor { return newFloor(n) }

// Run does ops of the floor's operations (see floor.run).
func (f *floor) Run(ops int, next func() (struct{}, bool)) { f.run(ops, next) }

// Switcher is switcher (speed.go).
func Switcher() (next func() (struct{}, bool), stop func()) { return switcher() }

// MachineSpeed is machineSpeed (speed.go).
func MachineSpeed() (heap, coroutine float64) { return machineSpeed() }
