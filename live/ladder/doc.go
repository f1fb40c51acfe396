// Package ladder measures what a message costs at each layer of nexar's
// live runtime, between two processes on one machine, in one run: the
// command behind nexar-live ladder.
//
// A collective step on real ranks passes through several layers: the
// kernel's sockets, quic-go, realnet's matching and its paths (QUIC, the
// bulk TCP path with its rendezvous, the eager TCP path), the measuring
// harness of nexar-live. Each rung of the ladder measures one of them with
// the same message between the same two processes, and is printed with its
// ratio to the rung below it, so that an overhead is located where it
// appears and stays located as the code changes:
//
//	raw TCP ping-pong                   the kernel's floor
//	raw Unix socket ping-pong           the floor of ranks on one host
//	raw TCP sealed with AES-128-GCM     the cipher's floor (bandwidth only)
//	raw quic-go, one stream             what quic-go costs
//	raw quic-go, a stream per message   realnet's way of using it
//	raw quic-go, an agreed-start exchange   the allreduce's timing, without realnet
//	realnet Send/Recv, each path        what realnet adds
//	nexar-live's 8 B allreduce          what the harness adds
//	Open MPI's 8 B allreduce over TCP   the peer (when mpicc is installed)
//
// and the same for bandwidth (a large message one way, then a one-byte
// acknowledgement). Latencies are half the median round trip of many
// ping-pongs; the harness rungs are nexar-live's own timings (RunRank),
// and the empty collective's time is what the timing itself costs.
//
// The process that runs the ladder starts the other (Options.Peer, in
// nexar-live "ladder-peer") and drives it over its standard input and
// output, one JSON line per rung each way; credentials come from an
// ephemeral CA, as in nexar-live run.
package ladder
