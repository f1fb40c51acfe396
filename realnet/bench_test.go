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
	pcS, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	pcC, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	trS, trC := &quic.Transport{Conn: pcS}, &quic.Transport{Conn: pcC}
	_, qc, err := RawQUIC(c, true) // without stream credit to release
	if err != nil {
		b.Fatal(err)
	}
	ln, err := trS.Listen(c.serverTLS(alpnMesh), qc)
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
	client, err = trC.Dial(context.Background(), pcS.LocalAddr(), c.clientTLS(alpnMesh), qc)
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
		{"quic", Config{Thresholds: algos.Thresholds{Bulk: -1}}},
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

// BenchmarkAllreduce: allreduce of f32 at p = 4 in one process: the ring
// (the figure) and the pipelined ring (segments, reduction
// overlapping transfer, as Open MPI's large-message allreduce does), with
// the default configuration (bulk path from 64 KiB) with TLS, and on a
// trusted network (plaintext bulk TCP, as Open MPI's TCP transport is).
// busbw is nccl-tests' bus bandwidth, bytes/t x 2(p-1)/p; minflt/op the
// minor page faults of the process (all four ranks) per allreduce after
// a warm-up one, what memory taken afresh per call costs the kernel;
// cpu-ms/op the CPU of the process (all ranks, user and system) per
// allreduce, which a machine shared with other work disturbs less than
// the time.
func BenchmarkAllreduce(b *testing.B) {
	const p = 4
	coll, err := algos.Lookup("allreduce")
	if err != nil {
		b.Fatal(err)
	}
	for _, algo := range []string{"ring", "pipelined_ring", "rs_ag", "halving_doubling"} {
		a, err := coll.Algorithm(algo)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range []int{1 << 20, 64 << 20} {
			for _, trusted := range []bool{false, true} {
				sec := "tls"
				if trusted {
					sec = "plain"
				}
				b.Run(fmt.Sprintf("%s/p=%d/%dMiB/%s", algo, p, n>>20, sec), func(b *testing.B) {
					links := newWorld(b, p, Config{TrustedNetwork: trusted})
					defer closeWorld(b, links)
					bufs := make([]device.Host, p)
					for i := range bufs {
						// Written once, so that the faults of their
						// first touch are not counted.
						bufs[i] = make(device.Host, n)
						for j := range bufs[i] {
							bufs[i][j] = 1
						}
					}
					var seq uint64
					allreduce := func() {
						seq++
						errs := run(links, func(ctx context.Context, l *Link) error {
							call := algos.Call{Buf: bufs[l.Rank()], DType: device.F32, Op: device.Sum}
							return a.Run(ctx, algos.Scoped(l, 0, seq), call)
						})
						if err := firstErr(errs); err != nil {
							b.Fatal(err)
						}
					}
					allreduce() // warm-up: the first call's scratch is new
					b.ResetTimer()
					start := time.Now()
					flt0, faults := minorFaults()
					cpu0, cpu := cpuTime()
					for b.Loop() {
						allreduce()
					}
					per := time.Since(start).Seconds() / float64(b.N)
					b.ReportMetric(float64(n)/per*2*(p-1)/p/1e9, "busbw-GB/s")
					if flt1, _ := minorFaults(); faults {
						b.ReportMetric(float64(flt1-flt0)/float64(b.N), "minflt/op")
					}
					if cpu1, _ := cpuTime(); cpu {
						b.ReportMetric((cpu1-cpu0).Seconds()/float64(b.N)*1e3, "cpu-ms/op")
					}
					b.SetBytes(int64(n))
				})
			}
		}
	}
}

// BenchmarkStreamChoice measures the two ways of carrying messages on
// QUIC that doc.go weighs, on raw quic-go: ping-pong latency of 8-byte
// messages on a stream opened per message against one long-lived stream
// per direction, and the latency of an 8-byte message sent while 32 MiB
// are in flight to the same peer, on its own stream or queued behind them
// on the long-lived stream.
func BenchmarkStreamChoice(b *testing.B) {
	const pingPongs = 1000 // per operation, so that -benchtime 3x still averages
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
		start := time.Now()
		for b.Loop() {
			for range pingPongs {
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
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N*pingPongs), "us/roundtrip")
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
		start := time.Now()
		for b.Loop() {
			for range pingPongs {
				cs.Write([]byte("12345678"))
				if _, err := io.ReadFull(cs, m[:]); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N*pingPongs), "us/roundtrip")
	})
	// Behind a large transfer: the small message's one-way latency.
	const bulk = 32 << 20
	for _, pri := range []struct {
		name   string
		urgent bool
	}{{"", false}, {"-urgent", true}} {
		b.Run("behind-32MiB/own-stream"+pri.name, func(b *testing.B) {
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
				if pri.urgent {
					s2.SetPriority(urgencySmall, false)
				}
				s2.Write(binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixNano())))
				s2.Close()
				sent := <-got
				total += time.Duration(time.Now().UnixNano()) - sent
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N), "us/small-msg")
		})
	}
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

// BenchmarkPingPong: the round trip of an 8-byte message over a link,
// the latency floor of every collective step.
func BenchmarkPingPong(b *testing.B) {
	const rounds = 1000
	links := newWorld(b, 2, Config{})
	defer closeWorld(b, links)
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		errs := run(links, func(ctx context.Context, l *Link) error {
			buf := make(device.Host, 8)
			for i := range rounds {
				tag := algos.Tag(i)
				if l.Rank() == 0 {
					if err := algos.Send(ctx, l, 1, tag, buf); err != nil {
						return err
					}
					if err := algos.Recv(ctx, l, 1, tag, buf); err != nil {
						return err
					}
				} else {
					if err := algos.Recv(ctx, l, 0, tag, buf); err != nil {
						return err
					}
					if err := algos.Send(ctx, l, 0, tag, buf); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err := firstErr(errs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N*rounds), "us/roundtrip")
}

// BenchmarkCrossover times a one-way message (half a ping-pong) of each
// size on the QUIC path and on the bulk path (TLS), to place realnet's
// default bulk threshold (algos.DefaultBulkThreshold): the bulk path pays
// a rendezvous round trip on TCP and wins once the payload's transfer
// time on QUIC exceeds it.
func BenchmarkCrossover(b *testing.B) {
	const rounds = 50
	for _, n := range crossoverSizes {
		for _, path := range []struct {
			name      string
			threshold int
		}{{"quic", -1}, {"bulk", 1}} {
			b.Run(fmt.Sprintf("%dKiB/%s", n>>10, path.name), func(b *testing.B) {
				links := newWorld(b, 2, Config{Thresholds: algos.Thresholds{Bulk: path.threshold}})
				defer closeWorld(b, links)
				b.ResetTimer()
				start := time.Now()
				for b.Loop() {
					errs := run(links, func(ctx context.Context, l *Link) error {
						buf := make(device.Host, n)
						other := 1 - l.Rank()
						for i := range rounds {
							tag := algos.Tag(i)
							if l.Rank() == 0 {
								if err := algos.Send(ctx, l, other, tag, buf); err != nil {
									return err
								}
								if err := algos.Recv(ctx, l, other, tag, buf); err != nil {
									return err
								}
							} else {
								if err := algos.Recv(ctx, l, other, tag, buf); err != nil {
									return err
								}
								if err := algos.Send(ctx, l, other, tag, buf); err != nil {
									return err
								}
							}
						}
						return nil
					})
					if err := firstErr(errs); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(time.Since(start).Microseconds())/float64(2*b.N*rounds), "us/message")
			})
		}
	}
}

var crossoverSizes = []int{4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 256 << 10}

// BenchmarkRecordLayer: 64 MiB one way over one loopback TCP connection,
// through each protection the bulk path could use: none (plain, as
// --trusted-network), Go's crypto/tls (TLS 1.3 records; Write and
// ReadFull of the whole buffer), and realnet's own record layer
// (bulkConn: AES-128-GCM records of bulkChunk, sealed from the sender's
// buffer and opened into the receiver's). It tells whether crypto/tls
// would do on the bulk connection (issue 30).
func BenchmarkRecordLayer(b *testing.B) {
	for _, name := range []string{"plain", "crypto-tls", "bulkconn"} {
		b.Run(name, func(b *testing.B) {
			w, r := recordPair(b, name)
			defer w.Close()
			defer r.Close()
			src := make([]byte, p2pBytes)
			dst := make([]byte, p2pBytes)
			b.SetBytes(p2pBytes)
			b.ResetTimer()
			for b.Loop() {
				done := make(chan error, 1)
				go func() { done <- r.read(dst) }()
				if err := w.write(src); err != nil {
					b.Fatal(err)
				}
				if err := <-done; err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// recordEnd is one end of BenchmarkRecordLayer's connection.
type recordEnd struct {
	conn  net.Conn
	write func([]byte) error
	read  func([]byte) error
}

func (e recordEnd) Close() error { return e.conn.Close() }

func recordPair(b *testing.B, name string) (w, r recordEnd) {
	switch name {
	case "plain", "crypto-tls":
		a, c := tcpPair(b, name == "crypto-tls")
		w = recordEnd{conn: a, write: func(p []byte) error { _, err := a.Write(p); return err }}
		r = recordEnd{conn: c, read: func(p []byte) error { _, err := io.ReadFull(c, p); return err }}
		return w, r
	}
	rawA, rawC := tcpPair(b, false)
	cr := creds(b)
	ta, tc := tls.Client(rawA, cr.clientTLS(alpnBulk)), tls.Server(rawC, cr.serverTLS(alpnBulk))
	errc := make(chan error, 1)
	go func() { errc <- tc.Handshake() }()
	if err := ta.Handshake(); err != nil {
		b.Fatal(err)
	}
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	ba, err := newSealedBulk(rawA, ta, true)
	if err != nil {
		b.Fatal(err)
	}
	bc, err := newSealedBulk(rawC, tc, false)
	if err != nil {
		b.Fatal(err)
	}
	w = recordEnd{conn: rawA, write: func(p []byte) error { return ba.writeMessage(bulkHeader{Len: uint64(len(p))}, p) }}
	r = recordEnd{conn: rawC, read: func(p []byte) error {
		if _, err := bc.readHeader(uint64(len(p))); err != nil {
			return err
		}
		return bc.readPayload(p, int64(len(p)), 0)
	}}
	return w, r
}

// BenchmarkExchange8B: the 2-rank 8 B allreduce's pattern (each rank
// sends to the other and receives from it, a fresh tag per iteration, as
// algos.Scoped gives one), on the eager TCP path and on the QUIC path.
// Both ranks share this process, so its time is not the ladder's; its
// allocations per 1000 exchanges (allocs/op, both ranks) and the CPU both
// ranks spend per exchange (cpu-us/exchange, getrusage: with both ranks in
// one process, a hand-off between them costs less than between two) are
// what it is for.
func BenchmarkExchange8B(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"eager", Config{Thresholds: algos.Thresholds{Eager: 16 << 10}}},
		{"quic", Config{Thresholds: algos.Thresholds{Bulk: algos.BulkNever}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			const rounds = 1000 // per operation
			links := newWorld(b, 2, c.cfg)
			defer closeWorld(b, links)
			b.ReportAllocs()
			var seq uint64
			start := time.Now()
			cpu0, cpuOK := cpuTime()
			for b.Loop() {
				errs := run(links, func(ctx context.Context, l *Link) error {
					out, in := make(device.Host, 8), make(device.Host, 8)
					for i := range rounds {
						sl := algos.Scoped(l, 0, seq+uint64(i))
						if err := algos.SendRecv(ctx, sl, 1-l.Rank(), out, 1-l.Rank(), in, 0); err != nil {
							return err
						}
					}
					return nil
				})
				if err := firstErr(errs); err != nil {
					b.Fatal(err)
				}
				seq += rounds
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*rounds)/1e3, "us/exchange")
			if cpu1, ok := cpuTime(); ok && cpuOK {
				b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N*rounds)/1e3, "cpu-us/exchange")
			}
		})
	}
}
