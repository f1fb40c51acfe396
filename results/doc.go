// Package results is the schema of results.csv, the file in which
// nexar-sim writes what it simulated and nexar-live what it measured: one
// Row per point, one Writer, one reader (Read) and one Error.
//
// The columns, in the order nexar-sim writes them (SimColumns), each a
// field of Row:
//
//	collective       Row.Collective  the collective: allreduce
//	algorithm        Row.Algorithm   the variant: pipelined_ring(segment=2MiB)
//	world            Row.World       ranks
//	bytes            Row.Bytes       the message size run
//	dtype            Row.DType       the element type: f32
//	time_s           Row.Time        seconds, the median over the repeats
//	algbw_GB_per_s   Row.AlgBW       bytes/time, GB/s (10^9 B/s)
//	busbw_GB_per_s   Row.BusBW       algbw times the bus factor, GB/s
//	params           Row.Params      the variant's parameters: segment=2097152
//	op               Row.Op          the reduction operator, if it reduces
//	repeats          Row.Repeats     runs (nexar-live: timed iterations)
//	time_min_s       Row.TimeMin     the fastest run, seconds
//	time_max_s       Row.TimeMax     the slowest run, seconds
//	spread_s         Row.Spread      half their difference, seconds
//	messages         Row.Messages    messages of a run, all ranks together
//
// nexar-live writes the same columns and then its own (LiveColumns):
//
//	wrong            Row.Wrong           elements that differed from the reference
//	device           Row.Device          cuda, for a run on GPUs (only then written)
//	bulk_threshold   Row.BulkThreshold   realnet's bulk path from this size (-1: never)
//	eager_threshold  Row.EagerThreshold  eager sends from this size (0: off)
//
// Times are written to the resolution of the clock that made them:
// picoseconds (SimDecimals) for the simulator, nanoseconds (LiveDecimals)
// for nexar-live. Bandwidths get the fewest digits that read back
// exactly.
//
// Read finds the columns by name, in any order, and maps the names
// earlier versions gave them (algbw_gbps and busbw_gbps held GB/s, not
// Gbit/s), so that every reader of results.csv (nexar-sim's merge,
// --resume and plot; calibrate; nexar-live's commands) reads the files of
// both commands and of their earlier versions alike. Each asks for the
// columns it needs beyond KeyColumns, and decides what to do with the
// others: plot and calibrate use what nexar-live adds, merge and --resume
// refuse a file whose columns they would drop, saying so.
package results
