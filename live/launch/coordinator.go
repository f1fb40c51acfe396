package launch

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nexar-go/nexar-go/realnet"
)

// coordinator is the membership coordinator a Launcher hosts for
// --recovery shrink, and what the launcher knows of the ranks it lost.
type coordinator struct {
	addr  string
	np    int
	minNP int
	out   io.Writer
	stop  func()

	mu       sync.Mutex
	lost     map[int]bool      // ranks whose process ended and that the survivors go on without
	killedAt map[int]time.Time // ranks nexar-live killed (--kill), when
	endedAt  map[int]time.Time // ranks whose process ended unfinished, when
	aborted  bool              // too few survivors: the coordinator gave up
}

// startCoordinator serves the membership protocol on a TCP port of
// 127.0.0.1 until stop is called.
func (l *Launcher) startCoordinator(ctx context.Context, creds *realnet.Credentials, stderr io.Writer) (*coordinator, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("live: membership coordinator: %w", err)
	}
	c := &coordinator{addr: ln.Addr().String(), np: l.NP, minNP: max(l.MinNP, 1), out: stderr,
		lost: map[int]bool{}, killedAt: map[int]time.Time{}, endedAt: map[int]time.Time{}}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		realnet.ServeMembership(cctx, ln, realnet.CoordinatorConfig{
			Credentials: creds, Heartbeat: l.Heartbeat, World: l.NP, MinWorld: c.minNP, MaxWorld: l.MaxNP, Events: c.event,
		}) // its failures show as the workers' errors
	}()
	c.stop = func() {
		cancel()
		<-done
	}
	return c, nil
}

// killed notes that nexar-live killed rank r (--kill), to report how long
// the coordinator took to notice.
func (c *coordinator) killed(r int) {
	c.mu.Lock()
	c.killedAt[r] = time.Now()
	c.mu.Unlock()
}

// lose notes that rank r's process ended before it finished, and reports
// whether the run goes on without it.
func (c *coordinator) lose(r int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endedAt[r] = time.Now()
	if c.aborted || c.np-len(c.lost)-1 < c.minNP {
		return false
	}
	c.lost[r] = true
	return true
}

// event reports what the membership coordinator noticed or decided.
func (c *coordinator) event(e realnet.MembershipEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch e.Kind {
	case "dead":
		since := ""
		if t, ok := c.killedAt[e.Member]; ok {
			since = fmt.Sprintf(", %.1f ms after nexar-live killed it", ms(e.At.Sub(t)))
		} else if t, ok := c.endedAt[e.Member]; ok {
			since = fmt.Sprintf(", %.1f ms after its process ended", ms(e.At.Sub(t)))
		}
		fmt.Fprintf(c.out, "nexar-live: rank %d lost: %s%s\n", e.Member, e.Cause, since)
	case "rebuild":
		what := fmt.Sprintf("that %s failed", joinInts(e.Failed))
		switch {
		case len(e.Failed) == 0 && len(e.Joined) == 0:
			what = "to rebuild (a link broke, no rank lost)"
		case len(e.Failed) == 0:
			what = fmt.Sprintf("to take in %s", joinInts(e.Joined))
		case len(e.Joined) > 0:
			what += fmt.Sprintf(" and to take in %s", joinInts(e.Joined))
		}
		who := "survivors"
		if len(e.Joined) > 0 {
			who = "members"
		}
		fmt.Fprintf(c.out, "nexar-live: the %s (first-world ranks %s) agreed %s in %.1f ms; rebuilding a world of %d ranks, resuming at point %d\n",
			who, joinInts(e.Members), what, ms(e.Agreed), len(e.Members), e.Point)
	case "rebuilt":
		fmt.Fprintf(c.out, "nexar-live: world %d of %d ranks connected, %.1f ms after the coordinator noticed the failure (or the member waiting to join)\n", e.Epoch, len(e.Members), ms(e.Rebuild))
	case "abort":
		c.aborted = true
		fmt.Fprintf(c.out, "nexar-live: no rebuild: %s\n", e.Cause)
	}
}

// recovered reports whether the run lost ranks and every survivor
// finished: then it succeeded; otherwise the launcher's own verdict
// stands.
func (c *coordinator) recovered(ranks []*rankState, hung bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.lost) == 0 || c.aborted || hung {
		return false
	}
	for r, s := range ranks {
		if !c.lost[r] && (!s.done || s.killed != "") {
			return false
		}
	}
	return true
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
