package harness

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// SleepUntil sleeps until the clock (Now(), CLOCK_MONOTONIC) reaches t,
// on a timerfd read through Go's network poller: the kernel wakes the
// poller at t to the nanosecond (a timerfd has no timer slack), and the
// sleeping goroutine holds no processor meanwhile, so that what it left to
// do (quic-go sending the packet it just queued) runs at once. Go's own
// timers wake an idle process through the poller's millisecond timeout, so
// time.Sleep(100µs) can take 1 ms; a nanosleep system call is precise but
// keeps its processor until the runtime's monitor takes it back, which in
// an idle process takes up to milliseconds, during which the goroutines
// queued on it wait. It reports false if no timerfd could be had, having
// slept with time.Sleep then.
func SleepUntil(t int64) bool {
	tf, err := getTimer()
	if err != nil {
		sleepGo(t)
		return false
	}
	defer putTimer(tf)
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(t)}
	if err := unix.TimerfdSettime(tf.fd, unix.TFD_TIMER_ABSTIME, &spec, nil); err != nil {
		sleepGo(t)
		return false
	}
	var b [8]byte
	for {
		if _, err := tf.f.Read(b[:]); err == nil || Now() >= t {
			return true
		}
	}
}

// timer is a timerfd and the pollable file over it.
type timer struct {
	fd int
	f  *os.File
}

var timers struct {
	sync.Mutex
	free []*timer
}

// getTimer returns an idle timer: ranks in one process (an emulated run)
// sleep at once, each on its own.
func getTimer() (*timer, error) {
	timers.Lock()
	if n := len(timers.free); n > 0 {
		tf := timers.free[n-1]
		timers.free = timers.free[:n-1]
		timers.Unlock()
		return tf, nil
	}
	timers.Unlock()
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &timer{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}, nil
}

func putTimer(tf *timer) {
	timers.Lock()
	timers.free = append(timers.free, tf)
	timers.Unlock()
}
