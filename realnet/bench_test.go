package realnet

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/device"
)

// The benchmarks of the issue, in one run:
//
//	go test ./realnet -run '^$' -bench . -benchtime 3x
//
// Raw quic-go and raw TCP on loopback are the limits the transport is held
// against, measured beside it in the same run.

const p2pBytes = 64 << 20

// rawQUICPair returns a client and a server QUIC connection on loopback,
// with the same credentials and configuration as the links use.
func rawQUICPair(b testing.TB) (client, server *quic.Conn, closeAll func()) {
	b.Helper()
	c := creds(b)
	cfg, _ := Config{Credentials: c}.withDefaults()
	ep := &Endpoint{cfg: cfg}
	pcS, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	pcC, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	trS, trC := &quic.Transport{Conn: pcS}, &quic.Transport{Conn: pcC}
	ln, err := trS.Listen(c.serverTLS(alpnMesh), ep.quicConfig())
	if err != nil {
		b.Fatal(err)
	}
	accepted := make(chan *quic.Conn, 1)
	go func() {
		conn, err := ln.Accept(context.Background())
		if err == nil {
			accepted <- conn
		}
		close(accepted)
	}()
	client, err = trC.Dial(context.Background(), pcS.LocalAddr(), c.clientTLS(alpnMesh), ep.quicConfig())
	if err != nil {
		b.Fatal(err)
	}
	server = <-accepted
	return client, server, func() {
		client.CloseWithError(0, "")
		server.CloseWithError(0, "")
		ln.Close()
		trS.Close()
		trC.Close()
		pcS.Close()
		pcC.Close()
	}
}

// BenchmarkRawQUIC: one quic-go stream on loopback, 64 MiB per operation.
func BenchmarkRawQUIC(b *testing.B) {
	client, server, closeAll := rawQUICPair(b)
	defer closeAll()
	buf := make([]byte, p2pBytes)
	dst := make([]byte, p2pBytes)
	b.SetBytes(p2pBytes)
	b.ResetTimer()
	for b.Loop() {
		done := make(chan error, 1)
		go func() {
			s, err := server.AcceptUniStream(context.Background())
			if err == nil {
				_, err = io.ReadFull(s, dst)
			}
			done <- err
		}()
		s, err := client.OpenUniStream()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Write(buf); err != nil {
			b.Fatal(err)
		}
		s.Close()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}

// tcpPair returns both ends of a loopback TCP connection, with TLS 1.3
// over it when withTLS.
func tcpPair(b testing.TB, withTLS bool) (a, c net.Conn) {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		conn, _ := ln.Accept()
		acc <- conn
	}()
	a, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	c = <-acc
	if withTLS {
		cr := creds(b)
		ta, tc := tls.Client(a, cr.clientTLS(alpnBulk)), tls.Server(c, cr.serverTLS(alpnBulk))
		errc := make(chan error, 1)
		go func() { errc <- tc.Handshake() }()
		if err := ta.Handshake(); err != nil {
			b.Fatal(err)
		}
		if err := <-errc; err != nil {
			b.Fatal(err)
		}
		a, c = ta, tc
	}
	return a, c
}

// BenchmarkRawTCP: one loopback TCP connection, 64 MiB per operation,
// plaintext and with TLS 1.3.
func BenchmarkRawTCP(b *testing.B) {
	for _, withTLS := range []bool{false, true} {
		name := "plain"
		if withTLS {
			name = "tls"
		}
		b.Run(name, func(b *testing.B) {
			a, c := tcpPair(b, withTLS)
			defer a.Close()
			defer c.Close()
			buf := make([]byte, p2pBytes)
			dst := make([]byte, p2pBytes)
			b.SetBytes(p2pBytes)
			b.ResetTimer()
			for b.Loop() {
				done := make(chan error, 1)
				go func() {
					_, err := io.ReadFull(c, dst)
					done <- err
				}()
				if _, err := a.Write(buf); err != nil {
					b.Fatal(err)
				}
				if err := <-done; err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSend: our point-to-point send of 64 MiB from rank 0 to rank 1,
// on the QUIC path (bulk disabled) and on the bulk path with TLS and on a
// trusted network.
func BenchmarkSend(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"quic", Config{BulkThreshold: -1}},
		{"bulk-tls", Config{}},
		{"bulk-plain", Config{TrustedNetwork: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			links := newWorld(b, 2, c.cfg)
			defer closeWorld(b, links)
			src := make(device.Host, p2pBytes)
			dst := make(device.Host, p2pBytes)
			b.SetBytes(p2pBytes)
			b.ResetTimer()
			var tag algos.Tag
			for b.Loop() {
				tag++
				errs := run(links, func(ctx context.Context, l *Link) error {
					if l.Rank() == 0 {
						return algos.Send(ctx, l, 1, tag, src)
					}
					return algos.Recv(ctx, l, 0, tag, dst)
				})
				if err := firstErr(errs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAllreduce: ring allreduce of f32 at p = 4 in one process, with
// the default configuration (bulk path from 64 KiB, TLS). busbw is
// nccl-tests' bus bandwidth, bytes/t x 2(p-1)/p.
func BenchmarkAllreduce(b *testing.B) {
	const p = 4
	for _, n := range []int{1 << 20, 64 << 20} {
		b.Run(fmt.Sprintf("p=%d/%dMiB", p, n>>20), func(b *testing.B) {
			links := newWorld(b, p, Config{})
			defer closeWorld(b, links)
			bufs := make([]device.Host, p)
			for i := range bufs {
				bufs[i] = make(device.Host, n)
			}
			var seq uint64
			b.ResetTimer()
			start := time.Now()
			for b.Loop() {
				seq++
				errs := run(links, func(ctx context.Context, l *Link) error {
					return algos.RingAllreduce(ctx, algos.Scoped(l, 0, seq), bufs[l.Rank()], device.F32, device.Sum)
				})
				if err := firstErr(errs); err != nil {
					b.Fatal(err)
				}
			}
			per := time.Since(start).Seconds() / float64(b.N)
			b.ReportMetric(float64(n)/per*2*(p-1)/p/1e9, "busbw-GB/s")
			b.SetBytes(int64(n))
		})
	}
}

// BenchmarkStreamChoice measures the two ways of carrying messages on
// QUIC that doc.go weighs, on raw quic-go: ping-pong latency of 8-byte
// messages on a stream opened per message against one long-lived stream
// per direction, and the latency of an 8-byte message sent while 32 MiB
// are in flight to the same peer, on its own stream or queued behind them
// on the long-lived stream.
func BenchmarkStreamChoice(b *testing.B) {
	b.Run("pingpong/stream-per-message", func(b *testing.B) {
		client, server, closeAll := rawQUICPair(b)
		defer closeAll()
		echo := func(from, to *quic.Conn) error {
			s, err := from.AcceptUniStream(context.Background())
			if err != nil {
				return err
			}
			var m [8]byte
			if _, err := io.ReadFull(s, m[:]); err != nil {
				return err
			}
			o, err := to.OpenUniStream()
			if err != nil {
				return err
			}
			o.Write(m[:])
			return o.Close()
		}
		go func() {
			for echo(server, server) == nil {
			}
		}()
		b.ResetTimer()
		for b.Loop() {
			s, err := client.OpenUniStreamSync(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			s.Write([]byte("12345678"))
			s.Close()
			r, err := client.AcceptUniStream(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			var m [8]byte
			if _, err := io.ReadFull(r, m[:]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pingpong/long-lived", func(b *testing.B) {
		client, server, closeAll := rawQUICPair(b)
		defer closeAll()
		cs, err := client.OpenStreamSync(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		cs.Write([]byte("open"))
		ss, err := server.AcceptStream(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		io.ReadFull(ss, make([]byte, 4))
		go func() {
			var m [8]byte
			for {
				if _, err := io.ReadFull(ss, m[:]); err != nil {
					return
				}
				ss.Write(m[:])
			}
		}()
		b.ResetTimer()
		var m [8]byte
		for b.Loop() {
			cs.Write([]byte("12345678"))
			if _, err := io.ReadFull(cs, m[:]); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Behind a large transfer: the small message's one-way latency.
	const bulk = 32 << 20
	b.Run("behind-32MiB/own-stream", func(b *testing.B) {
		client, server, closeAll := rawQUICPair(b)
		defer closeAll()
		big := make([]byte, bulk)
		var total time.Duration
		for b.Loop() {
			got := make(chan time.Duration, 1)
			go func() {
				defer close(got)
				// Streams arrive in order: the big one first.
				s1, err := server.AcceptUniStream(context.Background())
				if err != nil {
					return
				}
				s2, err := server.AcceptUniStream(context.Background())
				if err != nil {
					return
				}
				var m [8]byte
				io.ReadFull(s2, m[:])
				got <- time.Duration(binary.BigEndian.Uint64(m[:]))
				io.Copy(io.Discard, s1)
			}()
			s1, _ := client.OpenUniStream()
			go func() { s1.Write(big); s1.Close() }()
			time.Sleep(time.Millisecond) // the big transfer is under way
			s2, _ := client.OpenUniStream()
			s2.Write(binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixNano())))
			s2.Close()
			sent := <-got
			total += time.Duration(time.Now().UnixNano()) - sent
		}
		b.ReportMetric(float64(total.Microseconds())/float64(b.N), "us/small-msg")
	})
	b.Run("behind-32MiB/same-stream", func(b *testing.B) {
		client, server, closeAll := rawQUICPair(b)
		defer closeAll()
		big := make([]byte, bulk)
		var total time.Duration
		for b.Loop() {
			got := make(chan time.Duration, 1)
			go func() {
				defer close(got)
				s, err := server.AcceptUniStream(context.Background())
				if err != nil {
					return
				}
				io.CopyN(io.Discard, s, bulk)
				var m [8]byte
				io.ReadFull(s, m[:])
				got <- time.Duration(time.Now().UnixNano() - int64(binary.BigEndian.Uint64(m[:])))
			}()
			s, _ := client.OpenUniStream()
			done := make(chan struct{})
			go func() { s.Write(big); close(done) }()
			time.Sleep(time.Millisecond)
			// The small message is queued behind the big one: it is
			// stamped now, written when the stream gets to it.
			stamp := binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixNano()))
			<-done
			s.Write(stamp)
			s.Close()
			total += <-got
		}
		b.ReportMetric(float64(total.Microseconds())/float64(b.N), "us/small-msg")
	})
}
