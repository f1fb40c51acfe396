package harness

import _ "unsafe" // for go:linkname

// nanotime is the runtime's monotonic clock in nanoseconds, the one
// time.Now's monotonic reading comes from: on Linux CLOCK_MONOTONIC, which
// counts from boot and is the same in every process of the machine, so
// that ranks on one host need no offset estimate (see bootID). The runtime
// keeps it reachable by go:linkname on purpose.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Now reads the local clock in nanoseconds: the monotonic clock, which on
// Linux every process of one boot shares. Every time of a real run is
// read on it (a step's stream records too), and SleepUntil and the
// Starter's instants are on it.
func Now() int64 { return nanotime() }
