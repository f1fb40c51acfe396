//go:build unix

package realnet

import "syscall"

// minorFaults is this process's minor page faults so far (getrusage),
// and whether the system counts them.
func minorFaults() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return int64(ru.Minflt), true
}
