//go:build !unix

package realnet

import "time"

// minorFaults: not counted where getrusage is missing.
func minorFaults() (int64, bool) { return 0, false }

// cpuTime: not counted where getrusage is missing.
func cpuTime() (time.Duration, bool) { return 0, false }
