package live

import _ "unsafe" // for go:linkname

// nanotime is the runtime's monotonic clock in nanoseconds, the one
// time.Now's monotonic reading comes from: on Linux CLOCK_MONOTONIC, which
// counts from boot and is the same in every process of the machine, so
// that ranks on one host need no offset estimate (see bootID). The runtime
// keeps it reachable by go:linkname on purpose.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64
