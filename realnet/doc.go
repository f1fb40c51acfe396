// Package realnet runs the algorithms of algos between processes on real
// machines: a Link over QUIC (quic-go), with TLS 1.3 mutual authentication,
// failure detection, and a TCP bulk path for large payloads. The code
// studied in the simulator is the code that runs on the cluster.
//
// # Layers
//
// An Endpoint is one process on the network: a quic.Transport over a
// net.PacketConn (a UDP socket, or an emulated network in tests), listening
// for peers, plus a TCP listener for bulk connections. Join assembles a
// world through a seed (a rendezvous address every rank dials; the seed
// assigns ranks or honours the ones the launcher gave, and tells everyone
// where everyone is), then Connect builds the mesh and returns a Link.
// LaunchFromEnv and Start read the conventions of torchrun, Slurm and the
// MPI launchers (Open MPI, MPICH, Intel MPI, MVAPICH2), so that clusters are
// launched by the scheduler they already have.
//
// # The mesh
//
// Every pair of ranks the mesh joins shares one QUIC connection (the
// higher rank dials the lower): every pair by default, a rank's neighbours
// only with a sparse mesh (Config.Mesh: a hypercube or a k-regular graph),
// whose other pairs exchange their messages through relays (relay.go). Its
// first bidirectional stream is the control stream: a hello each way
// (rank, world, session, and the token the bulk connections must prove
// they know), then clear-to-send and bye frames. Peers
// are kept in a slice indexed by rank and reached through one method per
// message (peer.enqueueSendLocked); Isend sends a message for a rank that
// is not a neighbour to the next hop of the mesh's route instead
// (Link.relaySend), and the relays' loops hand it on, so the matching is
// the same for relayed messages. A relayed message of up to 16 KiB goes
// whole; a larger one waits, as a rendezvous, until the destination has
// somewhere to put it, then goes in segments of 256 KiB; whatever a relay
// or the destination holds is charged against its MaxUnexpected budget,
// and a relay out of budget holds its neighbour back.
//
// # One stream per message
//
// Each message travels on a unidirectional QUIC stream of its own: a
// fixed header (kind, tag, length) and the payload. The alternative, a few
// long-lived streams per peer with messages framed on them, was measured
// on raw quic-go over loopback (BenchmarkStreamChoice; the 2-core
// development machine, shared with other jobs, so ranges over runs):
//
//	                                          stream per message   long-lived stream
//	8-byte ping-pong, round trip                   47-85 us             43-62 us
//	8-byte message sent behind 32 MiB in flight    0.8-5.9 ms           71-216 ms
//
// A long-lived stream is a little cheaper per message, but everything
// queued on it waits for what is ahead: a barrier or a clear-to-send
// behind a large transfer waits for all of it (here 30 to 90 times
// longer), and a message whose receive is not posted blocks every message
// behind it, which deadlocks an algorithm that posts its receives in
// another order than its peer sends. Separate streams are scheduled by
// QUIC independently, so a stalled transfer never blocks a small message,
// and flow control holds back exactly the message nobody is ready for.
// The cost is a stream id and a 26-byte header per message. Only the
// control stream is long-lived, carries nothing that can wait, and has the
// highest priority; small messages come next, large ones share the rest.
//
// A small message (up to 16 KiB) is handed to quic-go by the goroutine
// that calls Isend (TryWriteAll copies it, quic-go's own goroutines send
// it), so that the send costs no goroutine of its own and is complete when
// Isend returns; only a write that flow control would hold up waits on a
// goroutine. The receiver completes a receive as soon as its payload is in
// and checks the end of the stream afterwards, so that a receive never
// waits for a FIN that came in a later packet.
//
// Matching is by (source, tag), first in first out, without sequence
// numbers: the sender opens its streams in Isend order (a per-peer opener
// keeps that order when the stream limit makes it wait), QUIC hands them to
// the receiver in that order, and the receiver reads each header before
// the next. A message whose receive is posted is read straight into the
// receive's buffer; an unexpected one is read into link memory if the
// MaxUnexpected budget allows (each is charged its payload and 2 KiB, what
// its record, queue entry and stream cost, so that empty messages are not
// free), and otherwise left unread, its bytes held back by flow control,
// until its receive is posted: a parked message keeps its stream's credit
// (quic-go's RequireStreamCreditRelease) and is charged what its stream's
// initial window lets in, which is set from the budget. Every length on the
// wire is bounded before anything is allocated for it, and a message
// longer than its posted receive buffer fails the receive (TooLongError)
// and is discarded. The connection flow-control window is large enough for
// every stream the peer may open (256) to hold its initial window unread
// at once and still leave room, so a backlog of unexpected messages cannot
// starve the messages being received.
//
// # The bulk path
//
// quic-go is CPU-bound well below what the kernel's TCP moves on the same
// machine (on loopback about 2 Gbit/s against 12-28). So a payload of
// Config.Thresholds.Bulk bytes or more goes on a TCP connection beside the
// QUIC connection of its pair, by rendezvous: the sender sends a request
// to send, the receiver answers with a clear-to-send frame once it has a
// buffer for the payload, and only then does the payload go on TCP. Both
// travel on the eager connection (below), TCP as well, so that the
// rendezvous costs two TCP latencies per bulk message and no QUIC one,
// and the single TCP byte stream of a pair never carries a payload nobody
// is ready for; the message streams' headers and the requests to send
// say how they interleave, so that a peer's messages still match first in
// first out (tcprts.go). Without an eager connection the request to send
// goes on a QUIC stream of its own, the clear-to-send on the control
// stream. The one-way time of a
// message on each path (BenchmarkCrossover) crosses between 4 and 16 KiB
// over runs on loopback, but a stream of messages, each acknowledged (the
// ladder's realnet-quic-bw and realnet-bulk-bw rungs), crosses near 32 KiB:
// the bulk path moved 0.78x QUIC's bandwidth at 16 KiB and 1.27x at 64 KiB.
// Hence the default, algos.DefaultBulkThreshold (64 KiB), the one
// nexar-live's ranks and the scenario's realnet model use too; the crossover belongs
// in each site's tuning table ([transport] bulk_threshold, which nexar-sim
// derives from a scenario's [network.transport] and Config.ApplyTuning
// reads).
//
// The bulk connection is authenticated by a TLS 1.3 handshake with the
// cluster certificates, then sealed by realnet itself with AES-128-GCM
// keys exported from that handshake (bulkconn.go): a record is sealed from
// the sender's buffer and opened straight into the receiver's, where
// crypto/tls would copy every byte into and out of its record buffers. On
// the development machine that moves 1.2-1.35 times as much as crypto/tls
// did. Config.TrustedNetwork sends plaintext instead.
//
// # The eager path
//
// Beside the bulk connection every pair opens an eager connection, a
// second TCP connection authenticated and sealed as the bulk one, that
// carries only small frames. A rank configured with Config.Thresholds.Eager
// sends every message to such a peer on TCP, as MPI's eager and rendezvous
// protocols do: a message below the threshold at once, header and payload
// together, on the eager connection; a larger one by rendezvous (request
// and clear-to-send on the eager connection, payload on the bulk one). The
// kernel's TCP costs a few microseconds a message between processes where
// quic-go costs tens. QUIC stays the default for small messages, as in
// nexar. A small message never waits behind a bulk payload (it is not on
// that byte stream), a rank's messages to a peer all travel on one ordered
// channel (so matching stays first in first out), and unexpected eager
// messages are bounded by credit the receiver grants from its
// MaxUnexpected budget (eager.go). The threshold belongs in the tuning
// table ([transport] eager_threshold; nexar-sim derives it where the
// scenario's [network.transport] gives the receiver's copy bandwidth).
//
// # Ranks on one host
//
// Ranks on one host open their bulk and eager connections on a Unix socket
// instead of TCP (localsock.go), in Linux's abstract namespace, named after
// the bulk listener's port, so that nothing new is exchanged: a rank whose
// peer's bulk address is one of this host's dials the name, and falls back
// to TCP if nothing that can prove the token answers. The kernel moves a
// byte through a Unix socket with no segments, checksums or
// acknowledgements, at 1.5-2 times loopback TCP's rate point to point.
// These connections are plaintext whatever Config.TrustedNetwork says:
// only the kernel carries their bytes (see Security). That, more than the
// socket, is what ranks on one host gain: four ranks' 64 MiB allreduce on
// the development machine's two cores took 92 ms against 95 ms over plain
// TCP, and 197 ms over TCP sealed. Config.NoLocalSockets keeps ranks on
// one host on TCP, as ranks on different hosts, to measure the network
// path on one machine or where policy wants every byte sealed.
//
// # Security
//
// What is protected, and from whom, in the manner of TLS's own statement
// of its guarantees.
//
// Who can join. Every connection (join, mesh, bulk, eager and
// membership) is TLS 1.3 with mutual authentication against the cluster
// CA (LoadCredentials; NewCA for one-machine runs): a process without a
// certificate of that CA is refused by the handshake, before it can send
// a byte of the application protocol. Each certificate names its identity
// in a URI subject alternative name (Identity): nexar://JOB/rank/N, member
// N of a job, or nexar://JOB/any, any member of it. A peer whose
// certificate names another job is refused by the handshake. Member N is
// rank N of the first world, and keeps its certificate when the membership
// coordinator rebuilds the world with the ranks renumbered (membership.go):
// the coordinator maps members to the ranks of each new world, and every
// rank checks the others against that map. A member's certificate binds
// it everywhere a rank or a member is claimed: the seed gives it that rank
// or none (asking for any rank gets its own, asking for another is
// rejected with the reason), the acceptor of a mesh connection refuses a
// hello whose rank the certificate does not name, the dialer refuses an
// acceptor whose certificate does not name the rank it dialed before it
// says hello, the bulk and eager connections are checked the same way at
// both ends, and the coordinator refuses a hello for another member.
// nexar-live run issues one certificate per member from a fresh CA, late
// members of an elastic world included, and a job-wide one to the seed and
// the coordinator it hosts only; 'nexar-live ca --ranks N' does the same
// for a cluster. A job-wide certificate can join as any rank and speak
// for any member of its job: it is a key to the whole job, for launchers
// and tests.
//
// Who decides the world. The seed (the first world) and the membership
// coordinator (every rebuilt one) say which member is which rank: whoever
// runs them runs the job. The coordinator hears only the members of the
// first world (CoordinatorConfig.World) and, in an elastic world, members
// that join late; a member that reports a broken link stops the world for
// everyone, as any rank's failure does.
//
// Who can read and change. QUIC is TLS 1.3. The bulk and eager
// connections are authenticated by TLS 1.3, then sealed by realnet with
// AES-128-GCM under a key and IV per direction derived from secrets
// exported from that handshake, the nonce being the IV XORed with the
// record's sequence number, the keys moving on after 2^34 bytes per
// direction, each end counting (bulkconn.go): a record changed, dropped,
// reordered, replayed, reflected or taken from another connection fails
// to open, and the peer is reported for breaking the protocol. A bulk or
// eager connection is bound to its QUIC connection in both directions:
// the dialer proves it knows the token the acceptor issued over QUIC, and
// the acceptor proves it back, each by a MAC over a value exported from
// the TCP connection's own handshake, so that a holder of a certificate of
// the CA sitting on the path can neither take the place of either end nor
// relay one end's proof to the other. Between ranks on one host those
// connections are Unix sockets, plaintext and as safe: their bytes pass
// only through the kernel, so whoever can read them (root, or the ranks'
// own user) can read the ranks' memory too; nobody can inject into an
// established Unix stream; and the proofs both ways (over a challenge the
// acceptor sends, as below) keep out a process that took the socket's name
// or dials it without the token. With Config.TrustedNetwork the TCP
// connections are plaintext: anyone on the path reads and can change
// them, and the proofs (over a challenge the acceptor sends on each
// connection instead of a handshake's value) keep off only those who can
// reach the port without seeing the traffic, and hellos captured on one
// connection and sent on another. A message relayed on a sparse mesh is
// in the clear in each relay's memory: a relay reads it, and can change
// it or give it another origin among the ranks whose route to the
// destination passes through it (a relay off the route is refused).
//
// What a member can do. A process holding a certificate of the job is one
// of its ranks, and a collective fails when one rank does: it can stop
// the job, send wrong data, or withhold messages (those it relays too).
// What it cannot do is exhaust another rank's memory or stall it
// unnoticed. Unexpected messages are bounded as above (a peer holds at
// most maxStreams unread messages, each charged against MaxUnexpected),
// eager messages and requests to send by the credit granted (and credit
// that would take a sender's count past 2^50 bytes is refused), relayed
// messages by the relay's and the destination's budgets, which hold back
// the neighbour that sends them (relay.go), and every length on the wire,
// a relay header's included, is bounded before anything is allocated for
// it. Once a message, a frame or a bulk payload has begun, or a bulk
// payload is owed, the rest must come within Timeout, or the peer breaks
// the protocol and the message's charge goes back; so must the end of a
// request to send's stream. A member must say hello to the coordinator
// within Heartbeat.DeadAfter, in lines of at most 8 KiB, and report its
// broken link within CoordinatorConfig.AgreeTimeout of a stop (or it is
// declared dead), so that none can hold a rebuild up for ever. What is
// not bounded by the budget alone: what parked streams hold, at most
// max(MaxUnexpected, 4 MiB) per peer, which grows with the world (the
// windows are quic-go's, set when the endpoint listens, before the world's
// size is known), and one relayed segment (256 KiB) a relay that holds
// nothing relayed takes whatever its budget. The price of these bounds: a
// rank that leaves more than maxStreams messages (on QUIC) or a credit's
// worth of requests to send (on TCP) unreceived holds back its peer's later
// sends until it posts their receives, and, on a sparse mesh, one that
// leaves more than its budget of relayed messages unreceived holds back
// the relays that bring them, and so what else those relays carry.
//
// What anyone who can reach the ports can do: open connections. The bulk
// listener and the coordinator set up at most 64 connections at once,
// each for at most its handshake timeout (HandshakeTimeout; DeadAfter at
// the coordinator); when all are taken the oldest is closed to make room,
// so that idle connections cannot keep a rank's own out, and cost a
// goroutine only while they hold a slot. A failed Accept is retried after
// a pause. QUIC handshakes are quic-go's to limit. Bulk hellos that claim a
// rank which was issued no token (this rank, a lower one, or one that has
// not said hello over QUIC) are closed at once, mesh hellos are kept one
// per rank, the later replacing the earlier, and the coordinator serves at
// most twice the largest world's members. Nothing hides the sizes and
// timing of messages, and certificates cannot be revoked: the CA
// nexar-live makes lives a week and its key is not kept.
//
// What is not protected from the host. Processes of one user on one host
// are not kept from each other: each can read the others' files and
// memory. nexar-live run writes every member's key, each 0600, into one
// directory of the launching user, so its per-member certificates keep
// apart the workers of different hosts or users, not those it starts on
// one machine; to keep ranks apart, run them as different users or on
// different hosts, with 'nexar-live ca --ranks N'.
//
// Key files are created anew, never through a symbolic link, the key with
// mode 0600 (CA.WriteFiles); an existing file is refused unless the
// caller asks to overwrite it ('nexar-live ca --overwrite').
//
// # Failures
//
// Every Wait ends within Config.Timeout (a TimeoutError naming the peers
// it waited for) or when its context ends, and abandons what is pending:
// buffers are not touched after Wait returns. Connections send keep-alives
// and a peer silent for PeerTimeout is lost; so is one whose connection
// closes without a bye, or that breaks the protocol (its connection is
// closed with a ProtocolError). A lost peer breaks the link: every pending
// and later operation fails with a *PeerError naming it, so all surviving
// ranks learn which rank died, not only its neighbours (errors.As finds
// it as an *algos.PeerLostError too, as it finds the simulator's errors
// for a lost rank). Close is a
// farewell: each rank tells each peer how many messages it sent, and the
// connections stay up until every peer has said bye, since a send
// completes when the transport has its bytes, not the peer. Abort leaves
// at once. After Close or Abort no goroutine of the link is left.
//
// # Buffers
//
// Links move host memory. stage.go is the one place that turns a
// device.Buffer into bytes for the network; a device whose memory sockets
// cannot reach stages through host memory there.
//
// # Tests in virtual time
//
// The tests run every algorithm of the catalogue over real UDP on
// 127.0.0.1, in four processes, and on quic-go's simnet inside
// testing/synctest, where the clock is virtual. Package simnetbw adds link
// bandwidth to simnet, so that the duration of a QUIC ring allreduce can be
// compared with the simulator's alpha-beta prediction for the same latency
// and bandwidth (TestSimnetVsModel; p = 4, 100 us, 1 Gbit/s): QUIC takes
// 1.07-1.10 times the prediction once its connections are warm, from 4 KiB
// to 8 MiB, the excess being per-packet headers, acknowledgements sharing
// the links, and one packet's store-and-forward per message; the first
// allreduce of 1 MiB on fresh connections takes 1.6 times (slow start and
// flow-control windows still growing).
package realnet
