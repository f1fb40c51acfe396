package realnet

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"time"
)

// acceptor accepts the TCP connections of a listener that anyone who
// reaches its port may open before proving anything: the bulk listener,
// the membership coordinator. Each connection is set up (its TLS
// handshake, its first message) on a goroutine of its own, holding one of
// a fixed number of slots; when every slot is taken, the oldest
// connection still being set up is closed to make room. So connections
// that never finish their setup (idle ones, slow ones) cost a goroutine
// and a descriptor each only while they hold a slot, and can keep a
// rank's own connection out only by opening more than the slots within
// the few milliseconds its setup takes, where a listener that waited for
// a slot to free would leave it in the kernel's queue behind them all.
type acceptor struct {
	ln    net.Listener
	slots int

	mu      sync.Mutex
	setting []net.Conn // being set up, oldest first
	evicted int        // closed to make room, for the tests
}

func newAcceptor(ln net.Listener, slots int) *acceptor {
	return &acceptor{ln: ln, slots: slots}
}

// run accepts until ctx ends or the listener is closed. A failure to
// accept that may pass (no descriptor left, a connection reset before it
// was accepted) is retried after a pause that doubles up to a second, as
// net/http's server does. setup runs on a goroutine of wg for each
// connection; it calls settled once the connection is set up, which
// frees its slot and reports false if the connection was closed to make
// room meanwhile.
func (a *acceptor) run(ctx context.Context, wg *sync.WaitGroup, setup func(c net.Conn, settled func() bool)) {
	var pause time.Duration
	for {
		c, err := a.ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			select {
			case <-time.After(pause):
				continue
			case <-ctx.Done():
				return
			}
		}
		pause = 0
		a.mu.Lock()
		var oldest net.Conn
		if len(a.setting) >= a.slots {
			oldest = a.setting[0]
			a.setting = slices.Delete(a.setting, 0, 1)
			a.evicted++
		}
		a.setting = append(a.setting, c)
		a.mu.Unlock()
		if oldest != nil {
			oldest.Close() // its setup fails, and its goroutine ends
		}
		wg.Go(func() {
			setup(c, func() bool { return a.settled(c) })
		})
	}
}

// settled frees c's slot; false if c was closed to make room.
func (a *acceptor) settled(c net.Conn) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := slices.Index(a.setting, c)
	if i < 0 {
		return false
	}
	a.setting = slices.Delete(a.setting, i, i+1)
	return true
}

// pending returns how many connections are being set up, and how many
// were closed to make room so far.
func (a *acceptor) pending() (int, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.setting), a.evicted
}
