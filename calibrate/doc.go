// Package calibrate turns measured times of collectives into the
// parameters of a network model the simulator runs: the logs of
// nccl-tests, the OSU micro-benchmarks and the Intel MPI Benchmarks that
// a cluster's owner already has, or the results of nexar-live. It is what
// `nexar-sim calibrate` and `nexar-live calibrate` run.
//
// # Reading
//
// Read (ReadFile) takes a measurement file as it was kept and returns a
// Log: its Runs, each a table of one collective (or point-to-point
// benchmark) on one set of ranks, with its Samples; and Notes, which say
// what was read differently from how it stands or not at all, and why.
// ReadNCCLTests, ReadNCCLTestsJSON (nccl-tests' -J report), ReadOSU,
// ReadIMB (the Intel MPI Benchmarks) and ReadResults read one format
// each; LogFormat guesses which. The readers look through what launchers and documents
// add (Open MPI's --tag-output and Slurm's --label prefixes, indentation,
// quote markers, library and shell lines), read each run of a file on its
// own (its collective from its header, command line or binary name; its
// world size from its rank list, elided or not, or from the processes a
// launcher started), and fail only on a line they cannot make sense of,
// naming it and what was expected there. LogOptions supply what a log
// does not say, and override what it does.
//
// # Fitting
//
// Calibrate fits a model's parameters (ModelSpec: alpha-beta's latency,
// bandwidth and reduce bandwidth; LogGP's L, o, g, G and gamma; the
// protocol-aware models, alpha-beta-protocol, alpha-beta with eager and
// rendezvous messages each with its own latency and bandwidth, and
// realnet, realnet's QUIC and TCP paths each with its own; and
// shared-host, alpha-beta-protocol whose ranks also share one backplane,
// as ranks on one machine share its cores and memory) to
// samples by least squares on relative error, predicting each sample by
// simulating its algorithm, or its point-to-point benchmark, on the
// model: every algorithm of the catalogue can be fitted, not only those a
// formula times. A fit says what it could not do rather than write a
// number: a parameter the samples do not determine is held, and reported
// (Estimate.Held, Fit.Notes); a fit that would determine nothing useful,
// latency or bandwidth among the undetermined, fails with a
// *RefusedError that says why and what to measure. Samples the model
// cannot follow (a library that changes protocol with size) weigh less,
// and the fit names them. A protocol's thresholds (ModelSpec.Settings)
// are not fitted, since the times jump at them: they are held at the
// value given, else at the one the samples' run recorded
// (Sample.Transport: nexar-live's results.csv records its transport
// thresholds), else at a stated default, and the fit says which
// (Fit.Settings).
// SelectModel ranks candidate models by their error on points they did
// not fit (K-fold cross-validation): more parameters always fit the
// fitted points better, and only held-out points say whether they follow
// the machine or its noise; DefaultModels are the candidates when none is
// named (simplest first, so that a tie goes to the simpler).
// Fit.Implausible holds a fit against what hardware can do (Bounds: no
// bandwidth above the memory's, no reduction slower than a CPU core adds,
// no latency at zero or above the fastest sample it is part of) and says
// which values not to trust. FitCandidates fits several algorithms assumed
// for logs that do not say which ran, and ranks them. Fit.WriteScenario
// writes the calibrated model as a scenario nexar-sim runs.
//
// # GPU machines
//
// A log of nccl-tests on a GPU cluster is better held against the cluster's
// description than against a network model of two parameters: Machine is a
// GPU preset of package scenario (dgx-h100, ...) with the keys that
// override it, PredictMachine predicts samples on it as NCCL runs them
// there ("auto" under the nccl policy, or what the log's INFO lines, read
// into NCCLInfo, say NCCL chose), and FitMachine fits its NICs' and
// NVLink's bandwidth and latency to a log, keeping NCCL's choice on the
// machine as built (Machine.Fitted). Agree says how predictions follow a
// log: the median |predicted/measured - 1| of busbw from 1 MiB and of time
// below 64 KiB. docs/nccl-predictions.md holds them against the public logs
// of testdata/public.
//
// A new model is fitted by adding a ModelSpec to the list Models
// returns (fitModels, in model.go): its Params, named as the scenario
// keys, each Required or optional with the Default it is held at; its
// Settings; how a vector of their values becomes a sim.Model; and whether
// its messages overlap their latency (Overlaps).
package calibrate
