//go:build unix

package realnet

import (
	"syscall"
	"time"
)

// minorFaults is this process's minor page faults so far (getrusage),
// and whether the system counts them.
func minorFaults() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return int64(ru.Minflt), true
}

// cpuTime is the user and system CPU time this process has used so far
// (getrusage), and whether the system counts it.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
