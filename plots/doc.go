// Package plots draws the figures of a collective-communication sweep: the
// pictures a researcher reads to decide which algorithm to run where.
//
// Its only input is a slice of [Point] (collective, algorithm, world size,
// message size, time, bus bandwidth), so it does not depend on the sweep
// runner; [ReadCSV] makes Points from the runner's results.csv. From them
// it draws, per collective:
//
//   - [LatencyPanels]: time against message size on log-log axes, one line
//     per algorithm, one panel per world size;
//   - [BusBWPanels]: bus bandwidth against message size, with the link
//     bandwidth drawn as the ceiling the bandwidth-bound sizes approach;
//   - [CrossoverMap]: world size by message size, each sweep point coloured
//     by its fastest algorithm, with the crossover boundaries drawn;
//   - [AutoSlowdown]: how much slower the dispatcher's "auto" policy is than
//     the best algorithm at each point.
//
// "Fastest" and "best" follow one rule, the one derive's crossovers and
// tuning tables follow: neither auto (a policy) nor a lossy algorithm (a
// compressed allreduce, which computes something else) is a candidate
// (algos.Competes), though both are drawn, the lossy ones in grey and
// named "(lossy)"; among times within [TieTolerance] the simpler wins
// (algos.CompareSimplicity: fewest parameters, then the catalogue's
// order), never the first name.
//
// For training steps (package workload, nexar-sim step), [StepBucketPanels]
// draws a network's step time and exposed communication against the
// gradient bucket size, a panel per layout and a line per choice of
// algorithms, and [StepBreakdown] each layout's step at its best bucket as
// stacked compute, exposed communication by group, bubble and idle time;
// their input is [StepPoint]s.
//
// For measurements held against the model (package verify: nexar-live
// compare and verify), [WriteComparePNG] draws measured and predicted
// times against message size, a panel per collective, algorithm and world
// size, and [WriteRatioPNG] the ratio of two variants' times around a
// crossover, with the table's, the model's and the measured crossover
// marked; their input is [Measured] points and [RatioPanel]s.
//
// [WriteAll] writes all of those that apply, as PNG and SVG, for every
// collective in a sweep; it is what `nexar-sim run` and `nexar-sim plot`
// call. [Winners] is the table the crossover map is drawn from, exported so
// that the tuning-table derivation and tests read the same numbers the
// picture shows.
//
// Readability rules the figures follow: a subtitle under the title says
// what the points are of ([Options].Subtitle: nexar-sim prints the scenario
// and its network's model and parameters), so that an image alone tells one
// study from another; message sizes are labelled in binary units (B, KiB,
// MiB, GiB) at powers of two, with both ends of the axis labelled, times in
// s/ms/µs/ns, bandwidth in GB/s (1e9 B/s, as nccl-tests); each algorithm
// keeps one colour, dash pattern and marker in every figure of a collective
// (a palette of 12 colours and 12 markers that keeps 12 lines apart,
// colour-blind-safe Okabe-Ito colours first, given to the algorithms that
// compete in the order of simplicity, greys to the lossy ones, with auto
// drawn thin, dotted and black, last, so that the line it runs shows
// through); one legend per figure sits between the title and the panels,
// never over data, and names only what the figure draws; every cell of a
// crossover map says how far behind its runner-up is; every panel labels
// both its axes. The compare figure ends with a panel of every point,
// measured against predicted, with the line y = x.
//
// Output is deterministic: the same points, in any order, give the same
// bytes. Figures are written atomically (a temporary file renamed into
// place), so a reader polling the output directory never sees half an image.
// Bad data is an error, never a panic: [ErrNoData] and its relatives say
// that a figure has nothing to draw, an [*InvalidPointError] that a point is
// not a measurement (NaN or negative time, world below one).
package plots
