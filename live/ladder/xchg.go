package ladder

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"slices"

	"github.com/quic-go/quic-go"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	lh "github.com/nexar-go/nexar-go/live/harness"
	"github.com/nexar-go/nexar-go/realnet"
)

// The quic-xchg rung: raw quic-go timed as the allreduce rung is. Both
// processes start each iteration at an instant they agreed on (package
// harness's Starter, over a realnet link beside the raw connection and
// untimed), then each sends 8 B on a unidirectional stream of its own and
// reads the other's; a process's time is from the instant to the end of
// its read, an iteration's the slower process's, the rung's the median.
// That is the 2-rank 8 B allreduce's pattern and timing (one exchange,
// both ways at once, from an agreed start, the slowest rank), on raw
// quic-go: against it, the allreduce rung shows what realnet and the
// algorithm add; against quic-msg (half a ping-pong's round trip, one
// process at work at a time, no start to agree) it also counts what the
// timing and the concurrent exchange cost.

// serveXchg is the peer's side of the quic-xchg rung.
func serveXchg(ctx context.Context, c command, creds *realnet.Credentials, announce func(reply) error) error {
	ln, addr, closeAll, err := listenRawQUIC(creds)
	if err != nil {
		return err
	}
	defer closeAll()
	ep, err := realnet.ListenAddr("127.0.0.1:0", c.Net.config(creds))
	if err != nil {
		return err
	}
	defer ep.Close()
	r := reply{Addr: ep.Addr().String(), Raw: addr.String()}
	if b := ep.BulkAddr(); b != nil {
		r.Bulk = b.String()
	}
	if err := announce(r); err != nil {
		return err
	}
	conn, err := ln.Accept(ctx)
	if err != nil {
		return err
	}
	defer conn.CloseWithError(0, "")
	l, err := ep.Connect(ctx, 1, []realnet.PeerAddr{{Addr: mustUDP(c.Addr), Bulk: c.Bulk}, {Addr: mustUDP(r.Addr), Bulk: r.Bulk}}, c.Session)
	if err != nil {
		return err
	}
	if _, err := exchangeLoop(ctx, l, conn, c); err != nil {
		l.Abort()
		return err
	}
	return l.Close()
}

// dialXchg is the ladder's side of the quic-xchg rung; ep is its realnet
// endpoint, r the peer's reply.
func dialXchg(ctx context.Context, ep *realnet.Endpoint, creds *realnet.Credentials, c command, r reply) ([]float64, error) {
	tc, qc, err := realnet.RawQUIC(creds, false)
	if err != nil {
		return nil, err
	}
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	defer pc.Close()
	tr := &quic.Transport{Conn: pc}
	defer tr.Close()
	conn, err := tr.Dial(ctx, mustUDP(r.Raw), tc, qc)
	if err != nil {
		return nil, err
	}
	defer conn.CloseWithError(0, "")
	l, err := ep.Connect(ctx, 0, []realnet.PeerAddr{{Addr: mustUDP(c.Addr), Bulk: c.Bulk}, {Addr: mustUDP(r.Addr), Bulk: r.Bulk}}, c.Session)
	if err != nil {
		return nil, err
	}
	secs, err := exchangeLoop(ctx, l, conn, c)
	if err != nil {
		l.Abort()
		return nil, err
	}
	return secs, l.Close()
}

// exchangeLoop runs the timed exchanges on conn, started by a Starter on
// l, and returns on rank 0 the slower rank's time of each timed one.
func exchangeLoop(ctx context.Context, l *realnet.Link, conn *quic.Conn, c command) ([]float64, error) {
	st := lh.NewStarter(l)
	if err := st.Sync(ctx); err != nil {
		return nil, err
	}
	var m [latencyBytes]byte
	times := make([]float64, 0, c.Rounds)
	for i := 0; ; i++ {
		t0, more, err := st.Start(ctx, i < c.Warmup+c.Rounds)
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
		if err := uniExchange(ctx, conn, m[:]); err != nil {
			return nil, err
		}
		d := lh.Now() - t0
		if i >= c.Warmup {
			times = append(times, float64(d)/1e9)
		}
	}
	// Rank 1 sends its times to rank 0, which keeps the slower of each.
	sl := algos.Scoped(l, lh.CommStats, 0)
	buf := make(device.Host, 8*len(times))
	if l.Rank() == 1 {
		for i, t := range times {
			binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(t))
		}
		return nil, algos.Send(ctx, sl, 0, 0, buf)
	}
	if err := algos.Recv(ctx, sl, 1, 0, buf); err != nil {
		return nil, err
	}
	for i := range times {
		times[i] = max(times[i], math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:])))
	}
	if slices.ContainsFunc(times, func(t float64) bool { return t < 0 }) {
		return nil, fmt.Errorf("quic-xchg: a negative time")
	}
	return times, nil
}
