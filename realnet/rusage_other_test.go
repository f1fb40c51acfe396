//go:build !unix

package realnet

// minorFaults: not counted where getrusage is missing.
func minorFaults() (int64, bool) { return 0, false }

// cpuTime: not counted where getrusage is missing.
func cpuTime() (float64, bool) { return 0, false }
