// Package trace records a simulated run and writes it as a Chrome trace
// event file (JSON), which Perfetto (ui.perfetto.dev) and chrome://tracing
// open: a timeline of what every rank did.
//
// A Recorder is a sim.Observer: pass it in sim.Config.Observer, run, then
// WriteJSON. In the file each rank is a process ("rank 3"), whose tracks
// (threads) are:
//
//   - "send": one span per message the rank sent, from when it started to
//     move until it was delivered, named "send → 5";
//   - "recv": one span per message it received, over the same interval,
//     named "recv ← 2";
//   - "compute": the time it spent blocked in Wait ("wait"), reducing
//     ("reduce") and in per-message CPU overheads ("overhead").
//
// Spans on one track never overlap (the trace format nests spans of one
// thread): where a rank has several messages in flight at once, as on
// networks with several send slots, the extra ones go on further tracks,
// "send 2", "send 3" and so on. A flow arrow joins each send span to its
// receive span. Messages from a rank to itself never touch the network and
// are left out. Times are in microseconds, as the format wants, with the
// simulator's picosecond resolution kept in the decimals.
//
// The output is deterministic: the same run gives the same bytes.
package trace
