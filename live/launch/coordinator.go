package launch

import (
	"context"
	"fmt"
	"net"

	"github.com/nexar-go/nexar-go/realnet"
)

// serveMembership serves the membership coordinator of a Shrink run, on
// a TCP port of 127.0.0.1, until stop is called; what it notices or
// decides goes to events, for the supervisor to report and to weigh
// (supervise.go).
func (l *Launcher) serveMembership(ctx context.Context, creds *realnet.Credentials, events chan<- event) (addr string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("live: membership coordinator: %w", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		realnet.ServeMembership(cctx, ln, realnet.CoordinatorConfig{
			Credentials: creds, Heartbeat: l.Heartbeat, World: l.NP, MinWorld: max(l.MinNP, 1), MaxWorld: l.MaxNP,
			Events: func(e realnet.MembershipEvent) {
				select {
				case events <- membership{e}:
				case <-cctx.Done():
				}
			},
		}) // its failures show as the workers' errors
	}()
	return ln.Addr().String(), func() {
		cancel()
		<-done
	}, nil
}
