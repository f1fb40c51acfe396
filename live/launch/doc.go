// Package launch starts the ranks of a nexar-live run as processes on
// this machine and supervises them: the launcher behind nexar-live run
// and step.
//
// A Launcher makes an ephemeral cluster CA, hosts the rendezvous (and,
// with Shrink, the membership coordinator of recovery), starts one worker
// process per rank with the launch variables realnet.LaunchFromEnv reads,
// and watches them: a rank that dies, fails or hangs is reported by rank
// and point in a *RunError, the others are stopped, and no process
// outlives Run (each worker has a process group of its own and, on Linux,
// the kernel's parent-death signal).
//
// The package is in three parts:
//
//   - protocol.go is the protocol between the launcher and its workers,
//     both ends in one file: the environment variables the launcher sets
//     beyond realnet's (StatusFDEnv, MembershipEnv, LateEnv), the status
//     lines a worker writes on its status pipe (StatusWriter,
//     OpenStatusPipe), and the launcher's reading of them.
//   - supervise.go is the supervision policy, a state machine: events in
//     (a rank started, wrote a status line, exited; a tick of the clock;
//     Ctrl-C; what the membership coordinator noticed), actions out
//     (kill or interrupt a rank, start a late member, print a line,
//     finish with the verdict). It starts nothing, reads no clock and
//     runs no goroutine, so the runs in testdata/*.txt play through it
//     line by line.
//   - launcher.go is the rest, the real world: Launcher.Run turns
//     processes, pipes, the clock and the coordinator into events and
//     carries out the actions.
//
// The worker itself is package live's (live.Worker, and step.Worker for
// training steps): it writes its status through this package's
// StatusWriter and reads its environment through its variables. So live
// imports launch, and launch imports nothing of live: the protocol, which
// both ends need, lives on the side that needs nothing else of the other
// (the launcher runs any command; it knows workers only by the lines they
// write), and the launcher's tests, which run live's worker, are an
// external test package.
package launch
