//go:build !linux

package live

// sleepUntil sleeps until the clock reaches t; elsewhere than Linux with
// Go's timers, which may wake late.
func sleepUntil(t int64) bool {
	sleepGo(t)
	return true
}
