// Package verify holds measurements of real runs against the simulator:
// how far the model's predictions are from what real ranks measured,
// where the crossovers a tuning table predicts really lie, and how
// nexar-live compares with another library on the same machine. It is the
// library behind nexar-live's compare, verify and peer commands, and
// behind the compare.csv and compare.png that run and step write at their
// end.
//
// Its input is results.csv rows (results.Row: nexar-live's, read back or
// handed over at the end of a run), not package live's types: verify sits
// beneath the real run, and live, which runs and measures, knows nothing
// of the simulator, of fitting or of figures. The command joins the two:
// it sets a run's live.Output.Compare to CompareRun.
//
// # Predictions
//
// Predict simulates each measured point (PointFor rebuilds it from its
// results.csv row) on a scenario's network model: with the transport
// thresholds the point's run recorded, not the file's, where the model
// is realnet's (model = "realnet"), and, for a run on GPUs, with the
// staging copies through host memory at the model's host_bandwidth
// (StagingNote says how). WriteCompareCSV writes compare.csv, prediction
// beside measurement; Summarize is the error over the points, and
// ComparePlot draws both against message size (through package plots).
// CompareRun is all of that at the end of a run. PredictSteps does the same for training
// steps (nexar-live step), on the scenario's network or a calibrated one.
//
// # Crossovers
//
// Targets lists the crossovers of a tuning table (algos.Tuning, as
// nexar-sim derives it) that apply to a world size, with sizes around
// each predicted crossover, denser near it; WriteScenario writes the
// scenario that measures both variants at those sizes. Crossovers reads
// the measured crossover from the results, and with a model the simulated
// one at the same sizes, both by derive.MeasuredCrossover: the boundary
// the fewest sizes disagree with, interpolated by the rule of derive's
// predicted crossovers (log-time in log-size), so that the table's,
// the simulated and the measured crossover are read alike. verify.csv
// (WriteCrossoverCSV), a table (WriteCrossoverTable) and a figure
// (CrossoverPlot) report them.
//
// # Peers
//
// ComparePeer sets nexar-live's results beside another library's at the
// same collective, world size and size (Open MPI's through
// scripts/ompi-allreduce, nccl-tests' or OSU's logs, read by package
// calibrate), and WritePeerTable prints the bus bandwidths side by side.
//
// Fitting a model's parameters to measurements is package calibrate's.
package verify
