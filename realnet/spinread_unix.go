//go:build unix

package realnet

import (
	"io"
	"net"
	"runtime"
	"syscall"
	"time"
)

// spinReader returns a reader of c that, when c has nothing to read,
// asks again for up to spin, yielding to the process's other goroutines
// in between, before it waits in the runtime's poller as c's own Read
// does (see Config.SpinRead); c itself where spin is 0 or c has no file
// descriptor. Deadlines set on c apply to the wait, not to the spin.
func spinReader(c net.Conn, spin time.Duration) io.Reader {
	sc, ok := c.(syscall.Conn)
	if !ok || spin <= 0 {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	return &spinningReader{rc: rc, spin: spin}
}

type spinningReader struct {
	rc   syscall.RawConn
	spin time.Duration
}

func (s *spinningReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	var until time.Time
	err := s.rc.Read(func(fd uintptr) bool {
		for {
			n, rerr = syscall.Read(int(fd), p)
			switch {
			case rerr == syscall.EINTR:
				continue
			case rerr != syscall.EAGAIN:
				return true
			}
			// Nothing yet: spin until the budget of this call is
			// spent, then let the poller wait (it calls again once
			// the socket is readable, with the budget spent).
			now := time.Now()
			if until.IsZero() {
				until = now.Add(s.spin)
			} else if now.After(until) {
				return false
			}
			runtime.Gosched()
		}
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: rerr}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}
