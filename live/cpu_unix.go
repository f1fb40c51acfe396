//go:build unix

package live

import "syscall"

// processCPU is what getrusage counts for this process so far: user and
// system CPU in seconds, minor page faults, voluntary and involuntary
// context switches; ok is false where it fails.
func processCPU() (u cpuUsage, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpuUsage{}, false
	}
	sec := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return cpuUsage{user: sec(ru.Utime), sys: sec(ru.Stime), minflt: int64(ru.Minflt), nvcsw: int64(ru.Nvcsw), nivcsw: int64(ru.Nivcsw)}, true
}
