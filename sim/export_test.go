package sim

// RecordStat is what recording a body kept, for tests.
type RecordStat struct {
	Programs, Chunks int
	Ops              int64
	Err              error
}

// RecordStats records body on a world and says how much it kept.
func RecordStats(world int, body Body) RecordStat {
	cfg := Config{World: world}
	progs, err := record(cfg, body, newRunInfo(cfg))
	if err != nil {
		return RecordStat{Err: err}
	}
	distinct := map[*program]bool{}
	for _, p := range progs.ranks {
		distinct[p] = true
	}
	return RecordStat{Programs: len(distinct), Chunks: len(progs.chunks), Ops: progs.ops}
}

// FlowRoutesUnshared runs run with the flow model's shared routes
// (flowroutes.go) emptied first and after.
func FlowRoutesUnshared[T any](run func() T) T {
	empty := func() {
		routeStores.mu.Lock()
		routeStores.stores = nil
		routeStores.mu.Unlock()
	}
	empty()
	defer empty()
	return run()
}

// SetDenseRoutes sets the largest world whose flow-model routes are kept
// in rows, until restore is called.
func SetDenseRoutes(k int) (restore func()) { return setForTest(&denseRoutes, k) }

// SetSharedRoutesEach sets how many routes a store of shared flow-model
// routes keeps, until restore is called.
func SetSharedRoutesEach(k int) (restore func()) { return setForTest(&sharedRoutesEach, k) }

// setForTest sets *p to v until restore is called.
func setForTest[T any](p *T, v T) (restore func()) {
	old := *p
	*p = v
	return func() { *p = old }
}
