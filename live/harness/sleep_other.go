//go:build !linux

package harness

// SleepUntil sleeps until the clock reaches t; elsewhere than Linux with
// Go's timers, which may wake late.
func SleepUntil(t int64) bool {
	sleepGo(t)
	return true
}
