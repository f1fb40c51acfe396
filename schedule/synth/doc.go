// Package synth synthesizes collective algorithms for a topology, in the
// manner of Blink and ForestColl: spanning trees of the devices packed so
// that their rates sum to the max-flow bound, each tree arc a message
// along the simulator's route between two devices.
//
// Graph reads a sim.Topology's links (every node, switches and NICs
// included, every directed edge with its capacity) and the simulator's
// routes between devices; Without removes a link, as a failed one. The
// bound of a broadcast from a root (BroadcastBound) is the least, over
// the other devices, of the maximum flow from the root to it (gonum's
// graph packages have no maximum flow: maxFlow is Edmonds-Karp). Pack
// grows trees arc by arc as Lovász's proof of Edmonds' theorem does,
// taking an arc only where the capacities left still carry the rest of
// the bound to every device, so that the trees' rates sum to the bound;
// the test holds them to it on a 2:1 oversubscribed fat tree, a 4x4
// torus, a DGX-like network of two nodes of four GPUs (NVSwitch inside,
// one NIC per GPU between) and the torus with a failed link. The routes
// are the simulator's, which the packing cannot choose: on a topology
// whose fixed routes forbid the bound, Pack stops short of it and says
// so in Packing.Rate.
//
// An allgather packs every root's trees on 1/(p-1) of each link
// (AllgatherPacking), one root after another on what the others left; an
// allreduce reduces each rank's block up the reverses of its trees and
// sends it back down (a reduce-scatter and an allgather on the same
// trees, ForestColl's); a reduce goes up the reverses of the root's
// broadcast trees, a reduce-scatter up every rank's allgather trees.
// Synth makes them algorithms over the Link (broadcast, allgather,
// allreduce, reduce, reduce_scatter; Register names them, for example
// "synth_tree"), pipelined in segments, and Algorithm gives any one of
// them for a synthesizer of a topology (WithFailed: less failed links),
// as a scenario's sweep naming "synth_tree" does; AllgatherSchedule writes the
// allgather as an MSCCL schedule that package schedule runs. All are
// checked with real data against algotest's references.
//
// Against the catalogue's fastest exact algorithm (the flow model, every
// rank sending and receiving any number of messages at once; 8 ranks on
// the fat tree and the DGX-like network, 16 on the tori; times in us,
// from TestSynthAgainstCatalogue):
//
//	topology          coll       1 KiB synth/best   1 MiB synth/best      1 GiB synth/best
//	fat tree 2:1      broadcast  8.6 / 2.6 flat     226 / 166 sc_ag       94086 / 150343 sc_ag
//	                  allgather  8.1 / 4.2 rd       95 / 87 ring          76904 / 75176 ring
//	                  allreduce  16.2 / 3.0 direct  190 / 184 ring        153424 / 150828 pipelined_ring
//	                  reduce     8.6 / 5.3 binomial 237 / 288 binomial    105831 / 289915 binomial
//	                  red_scat   8.1 / 4.2 rh        92 / 97 ring          76716 / 84571 ring
//	torus 4x4         broadcast  15.2 / 4.2 flat    50 / 158 sc_ag        13164 / 123517 sc_ag
//	                  allgather  15.0 / 6.1 rd      37 / 72 rd            10519 / 67115 rd
//	                  allreduce  30.0 / 4.6 direct  69 / 127 hd_nearest   21389 / 117453 hd_nearest
//	                  reduce     15.2 / 7.2 binomial 57 / 217 binomial_f   19204 / 214755 binomial_f
//	                  red_scat   15.0 / 6.1 rh       38 / 81 rh            10983 / 77181 rh
//	DGX-like 2x4      broadcast  9.0 / 3.2 flat     66 / 93 sc_ag         11355 / 66242 sc_ag
//	                  allgather  9.0 / 5.0 rd       18 / 29 rd            5631 / 24164 rd
//	                  allreduce  18.0 / 3.2 direct  37 / 40 hd_nearest    15326 / 30880 hd_nearest
//	                  reduce     9.0 / 7.1 binomial 69 / 129 binomial     16416 / 125277 binomial
//	                  red_scat   9.0 / 5.0 rh        21 / 38 rh            9797 / 33559 rh
//	torus, failed     broadcast  15.2 / 4.2 flat    59 / 158 sc_ag        17526 / 123517 sc_ag
//	link r1.0-r2.0    allgather  15.0 / 6.1 rd      31 / 72 rd            13609 / 67115 rd
//	                  allreduce  30.0 / 4.6 direct  61 / 127 hd_nearest   27380 / 117453 hd_nearest
//	                  reduce     15.3 / 7.2 binomial 66 / 219 binomial_f   28876 / 214757 binomial_f
//	                  red_scat   15.0 / 6.1 rh       35 / 81 rh            13602 / 77181 rh
//
// (sc_ag scatter_allgather, rd recursive_doubling, hd_nearest
// halving_doubling_nearest, rh recursive_halving, binomial(_f)
// binomial_tree(_farthest); red_scat reduce_scatter.) The trees win
// wherever bandwidth rules and the bound exceeds one port (the torus's
// four links, the DGX-like network's four NICs): 2x (allreduce, DGX-like)
// to 11x (reduce, torus) at 1 GiB. On the fat tree, whose bound is one
// NIC, the allgather and allreduce come within 2% of the ring, and the
// broadcast, reduce and reduce-scatter beat the catalogue's best. At
// 1 KiB they lose to the flat, direct and binomial algorithms: trees deep
// enough to keep every link busy cost a latency per level. The allgather
// as an MSCCL schedule times within 6% of the native one at 1 GiB (slower
// at 1 KiB: 16 chunks per block); scenarios/synth-trees runs it against
// the catalogue from a scenario.
package synth
