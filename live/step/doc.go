// Package step measures training steps on real ranks (nexar-live step):
// the [workload] points of a scenario (package workload's training
// steps), as package live measures a sweep's points.
//
// A Job is the [workload] points of a scenario for one world size. Every
// rank runs RunRank: for each point, workload.Run, the program the
// simulator runs, on the rank's realnet link: a compute stream and a
// stream per kind of communication, each a goroutine, the collectives on
// realnet. Compute is emulated: the compute stream sleeps for the stated
// time on the device's timeline (computeEmulator, on harness.SleepUntil),
// as a GPU's kernels leave the host's cores to the communication (NCCL's
// proxy thread) while they run. Spinning would hold one of the cores the
// ranks' communication needs (on a machine with fewer cores than ranks,
// every spinning rank takes a core from the others' transfers) and charge
// compute's CPU to the communication it is meant to hide; and a late wake
// does not make the compute after it late.
//
// Each step starts at an instant the ranks agreed on (harness.Starter, as
// a collective's iterations do: it is the barrier between steps, without
// a barrier's skew); a rank's step runs from that instant to the end of
// its streams, and the step's time is the slowest rank's. The accounts of
// a step (compute, exposed communication by group and collective, bubble,
// busy time) come from the same stream records, and the same
// workload.Stats, as the simulator's: each rank sends its records, timed
// from the agreed instant, to rank 0 after the step, so that measured and
// simulated steps are defined alike. A point's row (workload.Row,
// step.csv) is the median over the timed steps of each column.
//
// Worker is one rank process under any launcher, as live.Worker is for a
// sweep; rank 0 writes step.csv and step_times.csv (File, TimesFile), or
// step.partial.csv when the run fails. verify.PredictSteps simulates each
// measured point on a network (the scenario's, or a calibrated one) for
// compare.csv.
package step
