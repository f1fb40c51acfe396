package calibrate

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/sim"
)

// DefaultWindow is the window of osu_bw and osu_bibw: the messages each
// sends back to back before it waits.
const DefaultWindow = 64

// checkPointToPoint refuses point-to-point samples the model cannot
// simulate, and fills in the default window.
func checkPointToPoint(s *Sample) error {
	switch s.Algorithm {
	case PingPong, Stream, BiStream:
		if s.World != 2 {
			return fmt.Errorf("%s runs on 2 ranks, not %d", s.Algorithm, s.World)
		}
	case Shift:
		if s.World < 2 {
			return fmt.Errorf("%s needs 2 ranks or more, not %d", s.Algorithm, s.World)
		}
	default:
		return fmt.Errorf("unknown point-to-point benchmark %q (want %s, %s, %s or %s)", s.Algorithm, PingPong, Stream, BiStream, Shift)
	}
	if s.Algorithm == Stream || s.Algorithm == BiStream {
		w := s.Params["window"]
		if w == 0 {
			s.Params = map[string]int{"window": DefaultWindow}
		} else if w < 0 || w > 1<<16 {
			return fmt.Errorf("window %d", w)
		}
	}
	return nil
}

// pointToPointSim simulates one point-to-point sample's benchmark;
// oneTransfer simulates a window as one transfer of its bytes (see
// ModelSpec.Overlaps).
type pointToPointSim struct {
	s           Sample
	oneTransfer bool
}

const (
	tagPointToPoint algos.Tag = 1
	tagAck          algos.Tag = 2
	ackBytes                  = 4 // osu_bw's acknowledgement
)

func (x pointToPointSim) time(m sim.Model) (float64, error) {
	n, window := x.s.Bytes, 1
	if w := x.s.Params["window"]; w > 0 {
		window = w
	}
	body := func(ctx context.Context, l algos.Link) error {
		me, peer := l.Rank(), 1-l.Rank()
		switch x.s.Algorithm {
		case PingPong:
			buf := l.Alloc(n)
			if me == 0 {
				if err := algos.Send(ctx, l, peer, tagPointToPoint, buf); err != nil {
					return err
				}
				return algos.Recv(ctx, l, peer, tagPointToPoint, buf)
			}
			if err := algos.Recv(ctx, l, peer, tagPointToPoint, buf); err != nil {
				return err
			}
			return algos.Send(ctx, l, peer, tagPointToPoint, buf)
		case Stream:
			buf, ack := l.Alloc(n), l.Alloc(ackBytes)
			count := window
			if x.oneTransfer {
				buf, count = l.Alloc(n*window), 1
			}
			reqs := make([]algos.Request, count)
			for i := range reqs {
				if me == 0 {
					reqs[i] = l.Isend(peer, tagPointToPoint, buf)
				} else {
					reqs[i] = l.Irecv(peer, tagPointToPoint, buf)
				}
			}
			if err := l.Wait(ctx, reqs...); err != nil {
				return err
			}
			if me == 0 {
				return algos.Recv(ctx, l, peer, tagAck, ack)
			}
			return algos.Send(ctx, l, peer, tagAck, ack)
		case BiStream:
			count := window
			if x.oneTransfer {
				count = 1
			}
			sbuf, rbuf := l.Alloc(n*window/count), l.Alloc(n*window/count)
			reqs := make([]algos.Request, 0, 2*count)
			for range count {
				reqs = append(reqs, l.Irecv(peer, tagPointToPoint, rbuf))
			}
			for range count {
				reqs = append(reqs, l.Isend(peer, tagPointToPoint, sbuf))
			}
			return l.Wait(ctx, reqs...)
		default: // Shift
			p := l.Size()
			return algos.SendRecv(ctx, l, (me+1)%p, l.Alloc(n), (me+p-1)%p, l.Alloc(n), tagPointToPoint)
		}
	}
	// As a collective's, the body depends on neither time nor data.
	res, err := sim.Run(sim.Config{World: x.s.World, Model: m, Replay: true}, body)
	if err != nil {
		return 0, fmt.Errorf("simulating %s: %w", x.s, err)
	}
	t := res.End.Seconds()
	switch x.s.Algorithm {
	case PingPong:
		t /= 2 // osu_latency reports half the round trip
	case Stream, BiStream:
		t /= float64(window)
	}
	return t, nil
}
