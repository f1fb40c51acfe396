// Package derive reads the thresholds a sweep implies: where one algorithm
// overtakes another, which parameter setting of a tunable algorithm is
// best, and the tuning table that encodes both, in the format the "auto"
// dispatchers read (algos.Tuning).
//
// Its input is the rows of a sweep (sweep.Row, from a run or read back
// from results.csv), so a table can be derived again from merged shards
// or an old results file. For each collective with at least two competing
// algorithm variants (auto itself never competes), and one dtype (the
// first the rows name for it; the tables select by bytes, not by type):
//
//   - Crossovers: for each world size and each pair of variants, the
//     message sizes at which the faster of the two changes. Between two
//     swept sizes b1 < b2 where the sign of ln(tA/tB) changes, the
//     crossover is where the straight line through the two points on the
//     log-log scale crosses zero: ln b* = ln b1 + (ln b2 - ln b1) f1/(f1 -
//     f2), f = ln(tA/tB). Sizes where the two tie (within TieTolerance) are
//     skipped, so a variant that equals another over a range crosses
//     nothing there.
//   - BestParams: for each algorithm swept with several parameter
//     settings, the best setting at each world and size.
//   - Tuning: per world size, the fastest variant (algorithm and
//     parameters) at each swept size, as the steps of a crossover table
//     entry; where the fastest changes between b1 and b2 the step starts
//     at the interpolated crossover of the two, rounded up and kept within
//     (b1, b2], so that at every swept size the table selects exactly the
//     variant that was fastest there. Where two tie at b1 (the simpler
//     chosen there) and split at b2, the crossing is at b1 itself and the
//     step starts just above it. Lossy algorithms (algos.Competes) are
//     never chosen. The table states the worlds it was derived from (in
//     its description) and is not applied beyond them: a power of two's
//     entry covers only its own world (an algorithm that folds the ranks
//     beyond a power of two, as halving-doubling does, costs more on the
//     non-powers above it), a non-power's covers the worlds between its
//     swept neighbours, down to a swept power below it; worlds between two
//     swept powers with nothing swept between take a rule bounded to the
//     swept range (the variant that won most), and the worlds outside that
//     range nexar's own rule (algos.DefaultTuning's rules for the
//     collective), which no sweep confirmed.
//   - Transport: given a description of realnet's two paths between a
//     pair of ranks (Options.Transport, a scenario's [network.transport]),
//     the bulk threshold of the table's [transport]: DeriveTransport
//     simulates one message of each size from 1 byte to 1 TiB on the QUIC
//     path and on the bulk path (realnet's protocol: a request to send and
//     a clear to send over QUIC, then the payload on TCP), each path an
//     alpha-beta link run through the simulator, and interpolates where
//     the bulk path becomes faster on the log scale, as above.
//   - NCCLTuner: the same steps among NCCL's algorithms alone (the
//     catalogue's nccl_* variants), as nccl_tuner.conf, the CSV file NCCL's
//     example tuner plugin reads (tuner.Config): per swept world a rule a
//     step, for the world's ranks and nodes (Options.Nodes), with the
//     channels the variant ran on (its channels parameter, else the
//     machine's, Options.Channels), then for the other worlds the rules
//     of the largest world swept, on any ranks and nodes. Given NCCL's own choice
//     (Options.Policy), the notes say where the file departs from it and
//     by how much the simulation says it gains. docs/nccl-tuner.md says
//     how to load the file into NCCL and measure the difference.
//
// # One rule for every crossover
//
// A crossover is read by one rule, whether from simulated times (the
// Crossovers and the table's steps above, the transport's thresholds) or
// from measured ones (MeasuredCrossover, which nexar-live verify uses):
// between two sizes b1 < b2 where f = ln(tA/tB) changes sign, the
// straight line through (ln b1, f1) and (ln b2, f2) crosses zero at
// ln b* = ln b1 + (ln b2 - ln b1) f1/(f1 - f2): log-time interpolated in
// log-size. Sizes are swept on a geometric grid (powers of two, x2 or x4
// steps) and times span decades, from a latency to a bandwidth bound, so
// the log-log axes are the ones on which a curve between two neighbouring
// sizes is nearly straight: a power law t = c·n^k is exactly straight
// there, and so the crossover of two is exact, where interpolating times
// linearly in the size is exact only for affine times. (On affine times
// the log-log rule is close: alpha-beta times crossing at 20000 bytes
// read 20038 between 16000 and 32000.) One rule makes a predicted and a
// measured crossover comparable: a difference between them is the
// model's or the machine's, never the rules'. Measured times are noisy,
// so MeasuredCrossover first picks the one boundary the fewest sizes
// contradict (a Boundary, with how many do), then interpolates there.
//
// For training steps (package workload), BestBuckets reads the rows of
// step.csv: for each network (scenario), layout, schedule, ZeRO stage and
// choice of algorithms, the gradient bucket size that gave the shortest
// step, as best_bucket.csv (what to set DDP's bucket_cap_mb to there).
//
// Derive is deterministic: the same rows, in the same order, give the same
// result. Where variants tie (within TieTolerance), the simpler wins by
// the one declared order, algos.CompareSimplicity (fewest parameters, then
// the catalogue's order), as on the crossover map of package plots.
package derive
