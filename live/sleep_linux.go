package live

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// sleepFor sleeps for d in a nanosleep system call with the thread's
// timer slack at 1 ns, which wakes within some microseconds: Go's own
// timers wake an idle process through its network poller, whose timeout
// has a millisecond's granularity, so time.Sleep(100µs) can take 1 ms.
// The thread is locked for the call, and its slack set each time (it is
// per thread, and cheap).
func sleepFor(d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}
