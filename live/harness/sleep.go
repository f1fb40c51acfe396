package harness

import "time"

// sleepGo sleeps with Go's timers until the clock reaches t.
func sleepGo(t int64) {
	if d := t - Now(); d > 0 {
		time.Sleep(time.Duration(d))
	}
}
