// Package trace records a simulated run and writes its timeline in the
// formats Perfetto (ui.perfetto.dev) opens: Perfetto's own protobuf trace
// format (WritePerfetto), compact enough for millions of messages, and
// the Chrome trace event format (WriteJSON), which chrome://tracing also
// opens.
//
// A Recorder is a sim.Observer: pass it in sim.Config.Observer, run, then
// write. In the file each rank is a process ("rank 3"), whose tracks are:
//
//   - "send": one span per message the rank sent, from when it started to
//     move until it was delivered, named "send → 5";
//
//   - "recv": one span per message it received, over the same interval,
//     named "recv ← 2";
//
//   - "compute": the time it spent blocked in Wait ("wait"), reducing
//     ("reduce") and in per-message CPU overheads ("overhead").
//
//   - "stream NAME": with StreamSpan, the work of the rank's streams
//     (algos.Streams, as package workload records a training step): its
//     compute, collectives, messages and waits for other streams' events,
//     one track per stream.
//
// Spans on one track never overlap (the formats nest spans of one track):
// where a rank has several messages in flight at once, as on networks with
// several send slots, the extra ones go on further tracks, "send 2", "send
// 3" and so on. A flow arrow joins each send span to its receive span.
// Messages from a rank to itself never touch the network and are left out.
// JSON times are in microseconds, as the format wants, with the
// simulator's picosecond resolution kept in the decimals; Perfetto's are
// whole nanoseconds.
//
// A large run's trace is made small enough to open with a Filter
// (NewFilteredRecorder): the ranks to keep, a window of simulated time,
// and a limit on the file's size (EstimateSize says how large a file will
// be, before a run from estimated counts or after it from what was kept).
//
// The output is deterministic: the same run gives the same bytes.
package trace
