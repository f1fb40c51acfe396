package ladder

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
	"github.com/nexar-go/nexar-go/internal/cli"
	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/live/launch"
	"github.com/nexar-go/nexar-go/realnet"
)

// Kinds of rungs.
const (
	kindTCP        = "tcp"         // raw TCP: an 8 B echo, or a transfer and its acknowledgement
	kindUnix       = "unix"        // the same on a Unix socket
	kindTCPGCM     = "tcp-gcm"     // raw TCP in records sealed with AES-128-GCM as the bulk path's (gcm.go)
	kindQUICStream = "quic-stream" // the same on one bidirectional quic-go stream
	kindQUICMsg    = "quic-msg"    // an 8 B echo, a unidirectional quic-go stream per message
	kindQUICXchg   = "quic-xchg"   // 8 B both ways at once from an agreed start, a quic-go stream per message (xchg.go)
	kindLink       = "link"        // realnet Send/Recv between two ranks
	kindHarness    = "harness"     // nexar-live's RunRank on a 2-rank realnet link
	kindOMPI       = "ompi"        // Open MPI, run by the ladder alone
	kindGloo       = "gloo"        // PyTorch's Gloo, run by the ladder alone
)

// command is what the ladder asks the peer to do for one rung.
type command struct {
	Kind string
	// Bytes is the transfer of a bandwidth rung (0: an 8 B latency rung),
	// or the message of a harness rung.
	Bytes int
	// Rounds are timed, Warmup untimed before them.
	Rounds, Warmup int
	// Addr and Bulk are the ladder's realnet endpoint (link and harness
	// rungs), Session the session both connect with.
	Addr, Bulk string
	Session    realnet.Session
	Net        netSpec
	// Algorithm is the harness rung's allreduce algorithm, Timing its
	// timing.
	Algorithm string
	Timing    live.Timing
	// Key is a tcp-gcm rung's AES-128 key: a measurement's, no secret.
	Key []byte
}

// netSpec is the part of realnet.Config a rung sets.
type netSpec struct {
	Thresholds algos.Thresholds
	Trusted    bool
	// TCP connects the two ranks' bulk and eager connections over TCP
	// as between hosts (realnet.Config.NoLocalSockets), not over the
	// local socket that ranks on one host use by default.
	TCP bool
}

// config is the rung's realnet.Config: its two processes spin for eager
// frames as the launcher's ranks would (launch.SpinRead).
func (n netSpec) config(c *realnet.Credentials) realnet.Config {
	return realnet.Config{Credentials: c, Thresholds: n.Thresholds, TrustedNetwork: n.Trusted, NoLocalSockets: n.TCP, SpinRead: launch.SpinRead(2)}
}

// reply is what the peer answers: first its address (Addr, Bulk), then,
// when its side of the rung is over, Done.
type reply struct {
	Addr, Bulk string
	// Raw is the peer's raw QUIC listener of the quic-xchg rung.
	Raw  string
	Done bool
	Err  string
}

// latencyBytes is the message of every latency rung.
const latencyBytes = 8

// peerConn is the ladder's end of the conversation with the peer.
type peerConn struct {
	enc   *json.Encoder
	dec   *json.Decoder
	creds *realnet.Credentials
}

func (p *peerConn) read() (reply, error) {
	var r reply
	if err := p.dec.Decode(&r); err != nil {
		if errors.Is(err, io.EOF) {
			return r, errPeerGone
		}
		return r, err
	}
	if r.Err != "" {
		return r, fmt.Errorf("peer: %s", r.Err)
	}
	return r, nil
}

// measure runs one rung with the peer and returns its timed rounds in
// seconds, or why it was skipped.
func (p *peerConn) measure(ctx context.Context, c command, opt Options) ([]float64, string, error) {
	if c.Kind == kindOMPI {
		return measureOMPI(ctx, opt.OMPIScript, c)
	}
	if c.Kind == kindGloo {
		return measureGloo(ctx, opt.GlooScript, opt.python(), c)
	}
	ctx, cancel := context.WithTimeout(ctx, rungTimeout)
	defer cancel()
	if c.Kind == kindTCPGCM {
		c.Key = make([]byte, 16)
		rand.Read(c.Key)
	}
	var ep *realnet.Endpoint
	if c.Kind == kindLink || c.Kind == kindHarness || c.Kind == kindQUICXchg {
		var err error
		if ep, err = realnet.ListenAddr("127.0.0.1:0", c.Net.config(p.creds)); err != nil {
			return nil, "", err
		}
		defer ep.Close()
		c.Addr = ep.Addr().String()
		if b := ep.BulkAddr(); b != nil {
			c.Bulk = b.String()
		}
		c.Session = newSession()
	}
	if err := p.enc.Encode(c); err != nil {
		return nil, "", errPeerGone
	}
	r, err := p.read()
	if err != nil {
		return nil, "", err
	}
	var secs []float64
	switch c.Kind {
	case kindTCP, kindUnix, kindTCPGCM:
		secs, err = dialStream(ctx, r.Addr, c)
	case kindQUICStream, kindQUICMsg:
		secs, err = dialQUIC(ctx, r.Addr, p.creds, c)
	case kindQUICXchg:
		secs, err = dialXchg(ctx, ep, p.creds, c, r)
	case kindLink, kindHarness:
		secs, err = runLinked(ctx, ep, 0, realnet.PeerAddr{Addr: mustUDP(c.Addr), Bulk: c.Bulk}, realnet.PeerAddr{Addr: mustUDP(r.Addr), Bulk: r.Bulk}, c)
	default:
		err = fmt.Errorf("unknown rung kind %q", c.Kind)
	}
	done, rerr := p.read()
	switch {
	case err != nil:
		return nil, "", err
	case rerr != nil:
		return nil, "", rerr
	case !done.Done:
		return nil, "", errors.New("peer: no end of rung")
	}
	return secs, "", nil
}

func mustUDP(s string) net.Addr {
	a, err := net.ResolveUDPAddr("udp", s)
	if err != nil {
		return &net.UDPAddr{}
	}
	return a
}

// ServePeer is the peer process of a ladder: it reads the ladder's
// commands from in and answers on out until in ends. args are what
// Options.Peer was given: the cluster CA, certificate and key files, and
// optionally the file of a CPU profile.
func ServePeer(in io.Reader, out io.Writer, args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("ladder peer: want CA, certificate and key files, got %d arguments", len(args))
	}
	creds, err := realnet.LoadCredentials(args[0], args[1], args[2])
	if err != nil {
		return err
	}
	if len(args) > 3 {
		stop, err := cli.StartCPUProfile(args[3])
		if err != nil {
			return err
		}
		defer func() { _ = stop() }()
	}
	// The ladder's end of the pipe closing ends the rung under way too.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmds := make(chan command)
	var readErr error
	go func() {
		defer close(cmds)
		defer cancel()
		dec := json.NewDecoder(in)
		for {
			var c command
			if err := dec.Decode(&c); err != nil {
				if !errors.Is(err, io.EOF) {
					readErr = err
				}
				return
			}
			cmds <- c
		}
	}()
	enc := json.NewEncoder(out)
	for c := range cmds {
		err := serve(ctx, c, creds, func(r reply) error { return enc.Encode(r) })
		r := reply{Done: true}
		if err != nil {
			r.Err = err.Error()
		}
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return readErr
}

// serve runs the peer's side of one rung; announce sends its address.
func serve(ctx context.Context, c command, creds *realnet.Credentials, announce func(reply) error) error {
	ctx, cancel := context.WithTimeout(ctx, rungTimeout)
	defer cancel()
	switch c.Kind {
	case kindTCP, kindUnix, kindTCPGCM:
		return serveStream(ctx, c, announce)
	case kindQUICStream, kindQUICMsg:
		return serveQUIC(ctx, c, creds, announce)
	case kindQUICXchg:
		return serveXchg(ctx, c, creds, announce)
	case kindLink, kindHarness:
		ep, err := realnet.ListenAddr("127.0.0.1:0", c.Net.config(creds))
		if err != nil {
			return err
		}
		defer ep.Close()
		r := reply{Addr: ep.Addr().String()}
		if b := ep.BulkAddr(); b != nil {
			r.Bulk = b.String()
		}
		if err := announce(r); err != nil {
			return err
		}
		_, err = runLinked(ctx, ep, 1, realnet.PeerAddr{Addr: mustUDP(c.Addr), Bulk: c.Bulk}, realnet.PeerAddr{Addr: mustUDP(r.Addr), Bulk: r.Bulk}, c)
		return err
	}
	return fmt.Errorf("unknown rung kind %q", c.Kind)
}

// Raw TCP, sealed or not, or a raw Unix socket.

// network is the stream rung's network.
func (c command) network() string {
	if c.Kind == kindUnix {
		return "unix"
	}
	return "tcp"
}

// stream is what a stream rung reads and writes: conn, or for tcp-gcm
// its records.
func (c command) stream(conn net.Conn) (io.ReadWriter, error) {
	if c.Kind == kindTCPGCM {
		return newGCMStream(conn, c.Key)
	}
	return conn, nil
}

func serveStream(ctx context.Context, c command, announce func(reply) error) error {
	addr := "127.0.0.1:0"
	if c.Kind == kindUnix {
		dir, err := os.MkdirTemp("", "nexar-ladder-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		addr = filepath.Join(dir, "socket")
	}
	ln, err := net.Listen(c.network(), addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	if err := announce(reply{Addr: ln.Addr().String()}); err != nil {
		return err
	}
	conn, err := ln.Accept()
	if err != nil {
		return err
	}
	defer conn.Close()
	context.AfterFunc(ctx, func() { conn.Close() })
	rw, err := c.stream(conn)
	if err != nil {
		return err
	}
	return answer(rw, c)
}

func dialStream(ctx context.Context, addr string, c command) ([]float64, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, c.network(), addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	context.AfterFunc(ctx, func() { conn.Close() })
	rw, err := c.stream(conn)
	if err != nil {
		return nil, err
	}
	return ask(rw, c)
}

// ask is the ladder's side of a stream rung: ping-pongs of 8 B, or
// transfers of c.Bytes each acknowledged by one byte.
func ask(rw io.ReadWriter, c command) ([]float64, error) {
	out, in := make([]byte, latencyBytes), make([]byte, latencyBytes)
	if c.Bytes > 0 {
		out, in = make([]byte, c.Bytes), make([]byte, 1)
	}
	secs := make([]float64, 0, c.Rounds)
	for i := range c.Warmup + c.Rounds {
		t0 := time.Now()
		if _, err := rw.Write(out); err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(rw, in); err != nil {
			return nil, err
		}
		if i >= c.Warmup {
			secs = append(secs, oneWay(time.Since(t0), c))
		}
	}
	return secs, nil
}

// answer is the peer's side of ask.
func answer(rw io.ReadWriter, c command) error {
	in, out := make([]byte, latencyBytes), make([]byte, latencyBytes)
	if c.Bytes > 0 {
		in, out = make([]byte, c.Bytes), make([]byte, 1)
	}
	for range c.Warmup + c.Rounds {
		if _, err := io.ReadFull(rw, in); err != nil {
			return err
		}
		if _, err := rw.Write(out); err != nil {
			return err
		}
	}
	return nil
}

// oneWay is a latency round's one-way time, half its round trip; a
// transfer's time is all of it (its acknowledgement is one byte).
func oneWay(d time.Duration, c command) float64 {
	if c.Bytes > 0 {
		return d.Seconds()
	}
	return d.Seconds() / 2
}

// Raw quic-go, with realnet's TLS and QUIC settings.

// listenRawQUIC listens for raw quic-go on a loopback UDP port with
// realnet's TLS and QUIC settings; closing it closes the listener, its
// transport and its socket.
func listenRawQUIC(creds *realnet.Credentials) (ln *quic.Listener, addr net.Addr, closeAll func(), err error) {
	tc, qc, err := realnet.RawQUIC(creds, true)
	if err != nil {
		return nil, nil, nil, err
	}
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, nil, nil, err
	}
	tr := &quic.Transport{Conn: pc}
	ln, err = tr.Listen(tc, qc)
	if err != nil {
		tr.Close()
		pc.Close()
		return nil, nil, nil, err
	}
	return ln, pc.LocalAddr(), func() { ln.Close(); tr.Close(); pc.Close() }, nil
}

func serveQUIC(ctx context.Context, c command, creds *realnet.Credentials, announce func(reply) error) error {
	ln, addr, closeAll, err := listenRawQUIC(creds)
	if err != nil {
		return err
	}
	defer closeAll()
	if err := announce(reply{Addr: addr.String()}); err != nil {
		return err
	}
	conn, err := ln.Accept(ctx)
	if err != nil {
		return err
	}
	defer conn.CloseWithError(0, "")
	if c.Kind == kindQUICStream {
		s, err := conn.AcceptStream(ctx)
		if err != nil {
			return err
		}
		context.AfterFunc(ctx, func() { s.CancelRead(0) })
		if err := answer(s, c); err != nil {
			return err
		}
		<-conn.Context().Done()
		return nil
	}
	var m [latencyBytes]byte
	for range c.Warmup + c.Rounds {
		s, err := conn.AcceptUniStream(ctx)
		if err != nil {
			return err
		}
		if _, err := io.ReadFull(s, m[:]); err != nil {
			return err
		}
		o, err := conn.OpenUniStreamSync(ctx)
		if err != nil {
			return err
		}
		if _, err := o.Write(m[:]); err != nil {
			return err
		}
		o.Close()
	}
	// Wait for the ladder to close: closing first could lose the last
	// stream's frames in flight.
	<-conn.Context().Done()
	return nil
}

func dialQUIC(ctx context.Context, addr string, creds *realnet.Credentials, c command) ([]float64, error) {
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
	conn, err := tr.Dial(ctx, mustUDP(addr), tc, qc)
	if err != nil {
		return nil, err
	}
	defer conn.CloseWithError(0, "")
	if c.Kind == kindQUICStream {
		s, err := conn.OpenStreamSync(ctx)
		if err != nil {
			return nil, err
		}
		context.AfterFunc(ctx, func() { s.CancelRead(0) })
		return ask(s, c)
	}
	return quicPerMessage(ctx, conn, c)
}

// quicPerMessage ping-pongs 8 B messages, each on a unidirectional stream
// of its own, as realnet sends them.
func quicPerMessage(ctx context.Context, conn *quic.Conn, c command) ([]float64, error) {
	var m [latencyBytes]byte
	secs := make([]float64, 0, c.Rounds)
	for i := range c.Warmup + c.Rounds {
		t0 := time.Now()
		if err := uniExchange(ctx, conn, m[:]); err != nil {
			return nil, err
		}
		if i >= c.Warmup {
			secs = append(secs, oneWay(time.Since(t0), c))
		}
	}
	return secs, nil
}

// realnet links.

// runLinked connects a world of two ranks, this process being rank, and
// runs the rung's link or harness side on it.
func runLinked(ctx context.Context, ep *realnet.Endpoint, rank int, a0, a1 realnet.PeerAddr, c command) ([]float64, error) {
	l, err := ep.Connect(ctx, rank, []realnet.PeerAddr{a0, a1}, c.Session)
	if err != nil {
		return nil, err
	}
	var secs []float64
	if c.Kind == kindHarness {
		secs, err = harness(ctx, l, c)
	} else {
		secs, err = linkPingPong(ctx, l, c)
	}
	if err != nil {
		l.Abort()
		return nil, err
	}
	return secs, l.Close()
}

// linkPingPong is a latency or bandwidth rung over a realnet link: rank 0
// sends, rank 1 answers.
func linkPingPong(ctx context.Context, l *realnet.Link, c command) ([]float64, error) {
	out, in := make(device.Host, latencyBytes), make(device.Host, latencyBytes)
	if c.Bytes > 0 {
		out, in = make(device.Host, c.Bytes), make(device.Host, 1)
		if l.Rank() == 1 {
			out, in = in, out
		}
	}
	other := 1 - l.Rank()
	secs := make([]float64, 0, c.Rounds)
	for i := range c.Warmup + c.Rounds {
		tag := algos.Tag(i)
		if l.Rank() == 1 {
			if err := algos.Recv(ctx, l, other, tag, in); err != nil {
				return nil, err
			}
			if err := algos.Send(ctx, l, other, tag, out); err != nil {
				return nil, err
			}
			continue
		}
		t0 := time.Now()
		if err := algos.Send(ctx, l, other, tag, out); err != nil {
			return nil, err
		}
		if err := algos.Recv(ctx, l, other, tag, in); err != nil {
			return nil, err
		}
		if i >= c.Warmup {
			secs = append(secs, oneWay(time.Since(t0), c))
		}
	}
	return secs, nil
}

// uniExchange sends m on a unidirectional stream of its own and reads the
// peer's message of the same size, on the stream it opens, back into m.
func uniExchange(ctx context.Context, conn *quic.Conn, m []byte) error {
	s, err := conn.OpenUniStreamSync(ctx)
	if err != nil {
		return err
	}
	if _, err := s.Write(m); err != nil {
		return err
	}
	s.Close()
	r, err := conn.AcceptUniStream(ctx)
	if err != nil {
		return err
	}
	_, err = io.ReadFull(r, m)
	return err
}
