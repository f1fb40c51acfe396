//go:build !linux

package live

import "time"

// sleepFor sleeps for d; elsewhere than Linux with Go's timers, which may
// wake late.
func sleepFor(d time.Duration) { time.Sleep(d) }
