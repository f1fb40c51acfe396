// Package live measures the algorithms of algos on real ranks, over
// realnet's QUIC links: it is the real run behind the nexar-live command.
// It imports neither the simulator nor anything that fits models or draws
// figures; holding its measurements against the simulator is package
// verify's.
//
// # Measuring
//
// A Job is the points of a scenario file (package scenario, the format
// nexar-sim reads) for one world size: a run of N ranks measures the
// sweeps' points of world = N and leaves the other world sizes out
// (Job.Skipped), so one scenario file serves runs of several sizes. Every
// rank runs RunRank with the same job: for each point it restores its
// input, starts the collective at an instant all ranks agreed on (ranks on
// one host share one clock; see package harness, live/harness: the job
// check, the warm-up, the clocks and the agreed start, beneath this
// package), times it from there, then
// checks its output element by element against algotest's references.
// Warm-up iterations come first and are not timed. Rank 0 gathers every
// rank's times; a point's time is, per iteration, the slowest rank's, and
// then the median over the timed iterations (the spread is min to max).
// TimingLoop times nccl-tests' way instead: a barrier, the iterations back
// to back, the slowest rank's mean. The table says which timing was used.
// Results are results.csv rows (package results: nexar-sim's columns,
// then nexar-live's wrong column, elements that differed from the
// reference, and the transport thresholds the ranks used), and a table on
// standard output laid out as nccl-tests prints its own.
//
// Ranks come to be in three ways:
//
//   - Worker is one rank under any launcher: it reads rank, world size and
//     rendezvous from the environment as realnet.LaunchFromEnv defines it
//     (torchrun, Slurm, MPI launchers or nexar's own variables).
//   - Package launch (live/launch) is nexar-live run's own launcher: it
//     starts N workers as processes on this machine, joined over
//     127.0.0.1 with an ephemeral cluster CA and a rendezvous on a free
//     port, and supervises them: a rank that dies or hangs is reported
//     by rank, the others are stopped, and no process outlives the run.
//     A worker tells it its progress through launch's status protocol
//     (launch.StatusWriter), which is why this package imports launch
//     and not the other way round.
//   - RunEmulated runs the ranks as goroutines of one process over an
//     emulated network (realnet/simnetbw) in real time, to check on one
//     machine what the simulator predicts for a slower network.
//
// # Against the model
//
// This package holds nothing against the model; what did, and where it
// went: the comparison with the model (Predict, compare.csv, compare.png,
// the staged predictions of runs on GPUs), the verification of a tuning
// table's crossovers, the peers (Open MPI, nccl-tests and OSU logs) and
// the step comparison are package verify's, which reads results.csv rows
// and imports nothing of this package; their figures are package plots';
// the rule that reads a crossover from measured times is package derive's
// (MeasuredCrossover), the one its predicted crossovers are read by. A
// run hands its rows over through Output.Compare, which nexar-live sets
// to verify.CompareRun: rank 0 calls it once results.csv is written. The
// training steps moved to package step (live/step), the agreed start and
// the clocks to package harness (live/harness).
//
// # Training steps
//
// Training steps (package workload's [workload] points, nexar-live step)
// are measured by package step (live/step), on the same harness and
// launcher as a sweep's points.
//
// # Running on a cluster
//
// Every rank needs the scenario file and credentials from one cluster CA:
//
//	nexar-live ca --job cluster --ranks 4 /shared/nexar-ca   # prints the NEXAR_CA, NEXAR_CERT, NEXAR_KEY to export
//
// Under Slurm, one task per rank; rank 0 (on the first node) hosts the
// rendezvous at NEXAR_SEED and writes the results:
//
//	#!/bin/bash
//	#SBATCH --job-name=nexar-live
//	#SBATCH --nodes=4
//	#SBATCH --ntasks-per-node=1
//	#SBATCH --time=00:30:00
//	export NEXAR_CA=/shared/nexar-ca/ca.pem
//	export NEXAR_CERT=/shared/nexar-ca/cluster-rank{rank}.pem   # {rank}: the task's rank
//	export NEXAR_KEY=/shared/nexar-ca/cluster-rank{rank}-key.pem
//	head=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
//	export NEXAR_SEED=$head:29500
//	srun nexar-live worker scenarios/cluster.toml --out results/$SLURM_JOB_ID
//
// With torchrun's conventions (RANK, WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT), on each of two nodes:
//
//	torchrun --nnodes=2 --nproc-per-node=8 --node-rank=$NODE_RANK \
//	    --master-addr=$HEAD --master-port=29500 --no-python \
//	    nexar-live worker scenario.toml --out results/
//
// Under mpirun (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE), with
// certificates for 16 ranks (nexar-live ca --ranks 16):
//
//	mpirun -np 16 -x NEXAR_SEED=$HEAD:29500 -x NEXAR_CA -x NEXAR_CERT -x NEXAR_KEY \
//	    nexar-live worker scenario.toml --out results/
//
// The rendezvous port (29500 here) must be free on rank 0's node, and UDP
// and TCP must pass between the nodes (QUIC, and the bulk and eager TCP
// connections).
//
// Package ladder (nexar-live ladder) measures what a message costs at each
// layer, from raw sockets up to this package's timing, between two
// processes.
package live
