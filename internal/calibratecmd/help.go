package calibratecmd

import "strings"

// Help is the calibrate command's help for prog ("nexar-sim",
// "nexar-live").
func Help(prog string) string { return strings.ReplaceAll(help, "PROG", prog) }

// Usage is its line in the program's usage.
func Usage(prog string) string {
	return prog + " calibrate [--model M[,M...] | --preset P] [--algorithm A,B] [--out FILE.toml] MEASUREMENTS..."
}

const help = `Usage: PROG calibrate [flags] MEASUREMENTS...

Fits the parameters of a network model to measured times, the logs of
nccl-tests and OSU a cluster already has, or nexar-live's results, and
with --out writes a scenario file whose [network] is the fitted model and
whose sweeps cover the measured points; nexar-sim reads it.

  alpha-beta           latency (alpha), bandwidth (1/beta), reduce_bandwidth
                       (1/gamma)
  alpha-beta-protocol  alpha-beta with a message protocol: eager below
                       eager_limit (held where the thresholds the run
                       recorded change realnet's protocol, else at 64KiB),
                       rendezvous from it (a request and a clear to send,
                       then the payload with its own
                       rendezvous_latency_factor and
                       rendezvous_bandwidth_factor)
  shared-host          alpha-beta-protocol for ranks on one machine: every
                       message also crosses a backplane_bandwidth that all
                       share (the flow model on a crossbar with a backplane),
                       as a machine's cores and memory move so many bytes a
                       second whichever ranks send them; for nexar-live runs
                       of several ranks on one host
  loggp                latency (L), overhead (o), gap (g), bandwidth (1/G),
                       reduce_bandwidth (1/gamma)
  realnet              realnet's two paths: quic_latency, quic_bandwidth,
                       bulk_latency, bulk_bandwidth, reduce_bandwidth; held:
                       bulk_threshold and eager_threshold, at the values the
                       run recorded in results.csv (files that do not record
                       them: nexar-live's defaults, 64KiB and off; give the
                       ones such a run used with --hold bulk_threshold=16KiB)

MEASUREMENTS are files of these kinds, told apart by their lines (or
--format):

  nccl-tests   the output of all_reduce_perf and its siblings (RCCL's too),
               as it was kept: with mpirun --tag-output or srun --label
               prefixes, indented or quoted in a Markdown page, with NCCL
               INFO lines, prompts and commands around it, its last row cut
               short. Each run in a file is read on its own: its collective
               from "# Collective test starting" or the command line that
               started it, its world size from the "#  Rank" lines (the
               highest rank, where the list is elided) or nThread x nGpus x
               the processes of mpirun -np / srun. Out-of-place times.
  nccl-tests-json
               nccl-tests' own JSON report (all_reduce_perf -J FILE.json,
               nccl-tests 2.17 and later): its binary, processes x nthreads
               x ngpus, hosts, NCCL's release and NCCL_* environment, and
               each result's out-of-place time.
  osu          the output of the OSU micro-benchmarks, one or a suite:
               osu_allreduce and the other collectives (with or without -f),
               osu_latency, osu_bw and osu_bibw as point-to-point samples;
               what nexar-go does not model is skipped and named. OSU does
               not print the number of ranks: it comes from the command line
               before a run (mpirun -np, srun -n), or give --world. Rows
               whose "#" lines were lost read when the benchmark is named
               by a command line, the file's name or --collective.
  imb          the output of the Intel MPI Benchmarks' IMB-MPI1: each
               "# Benchmarking NAME" table on its "# #processes = N" (IMB
               runs each benchmark on 2, 4, ... processes) read on its own,
               the collectives' t_avg, PingPong's t as a latency; the
               vector, non-blocking and multi-pair benchmarks skipped and
               named.
  results      a results.csv of nexar-live (or nexar-sim); nexar-live's
               records the transport thresholds its ranks used

Every point is predicted by simulating its algorithm on the model, and
the fit minimises the squared relative errors. A model of two parameters
cannot follow a library that changes protocol with size (NCCL's LL, LL128,
Simple): the fit follows the samples where each parameter dominates and
names those it does not follow, which weigh less (--least-squares weighs
all alike). A benchmark log does not say which algorithm its library ran:
the model simulates --algorithm (default the ring, where the collective
has one); give several, comma-separated, and each is fitted and the best
reported, or, where the samples cannot tell some apart (one world size),
the first given of those.

What the samples cannot determine is said: a parameter that changes
every prediction as another does, or accounts for less than 5% of every
sample's time. An optional one (gamma, LogGP's o and g) is then held at 0
and the fit says so; latency or bandwidth undetermined (samples of one
size, or sizes all where latency or bandwidth dominates) refuses the fit:
exit status 2 and the reason, nothing written. --hold gives a value the
samples cannot. A parameter no prediction depends on (realnet's QUIC path
when every message takes TCP) is held where it is. Thresholds are never
fitted (the times jump at them): they are held, at the value --hold gives,
else at the one the run recorded (nexar-live's results.csv: bulk_threshold
and eager_threshold), else at their default, and the report says which.
Files whose runs recorded thresholds that give a model different values
are refused for that model: fit them apart, or --hold one value.

A GPU machine (--preset dgx-h100, or another of 'nexar-sim list'; --set
KEY=VALUE overrides a key of it, such as --set nics_per_node=8): instead of
a network model, the machine's own figures are fitted, each sample
simulated as NCCL runs it there ("auto" under the nccl policy: NCCL's
choice of algorithm, protocol and channels at each size; where the log has
NCCL's INFO lines, what they say NCCL chose, on the channels and nodes they
give). The NICs' bandwidth and latency are fitted to samples that span
nodes, NVLink's to samples inside one node: a bandwidth to the sizes of 1
MiB and more at the top of the sweep, by scaling it until the median
predicted time is the measured one (where the NICs do not bound the
model's time, the bandwidth that does), a latency to the smaller sizes;
what the samples do not reach is held and the report says why. The
written scenario is the preset with the fitted keys, policy "nccl" and a
sweep of "auto": change its world to predict the cluster at other node
counts, its collective to predict other collectives. --no-fit predicts the
samples on the machine as given and reports the median |predicted/measured
- 1| of busbw from 1 MiB and of time below 64 KiB (docs/nccl-predictions.md).
Sizes above 256 MiB are extrapolated from the times at 128 and 256 MiB of
the algorithm NCCL runs there (the bandwidth regime, where a pipelined
collective's time is affine in its size).

Which model: by default, every model the samples suit is fitted (for
nexar-live's results.csv all five; for other libraries' logs alpha-beta,
alpha-beta-protocol and loggp, which assume neither realnet nor ranks
sharing one machine), and they are ranked by their error on points they
did not fit: the points are dealt into --folds parts, each part
predicted by the model fitted on the others, and the median
|predicted/measured - 1| over all points decides. A model with more
parameters always fits its own points better; only the held-out error
says whether it follows the machine. The report says which it chose, its
held-out error beside the runners-up', and which models the samples do
not determine, and why; a tie goes to the one of fewer parameters. The
chosen one is written. --model names one model (fitted alone) or the
list to rank; with --algorithm, the model is alpha-beta unless named.
Too few samples to hold any out: the simplest model alone.

Values no machine has are warnings, after the fit: a bandwidth above the
memory's (--memory-bandwidth: a bandwidth, or "measure", this machine's
memcpy, for runs measured here; default 8TB/s, the fastest memory a
collective's bytes pass through today, HBM3e), a reduction bandwidth
below 1 GB/s (one CPU core adds float32 faster: the fit put another cost
on reductions, often more ranks than cores), a latency at zero (a
negative one fitted better) or above the time of the fastest sample it
is part of. A warning does not stop the fit: it says which value not to
trust, and what to hold or measure instead.

Flags:
  --model M,...      alpha-beta, alpha-beta-protocol, shared-host, loggp or
                     realnet; several: the best by held-out error (default:
                     every model the samples suit, as above)
  --memory-bandwidth B  the bound of fitted bandwidths: a bandwidth, or
                     "measure" (this machine's memcpy) (default 8TB/s)
  --folds K          with several models, the parts of the cross-validation
                     (default 5)
  --out FILE         write the calibrated scenario to FILE
  --name NAME        the scenario's name (default "calibrated")
  --format F         results, nccl-tests, nccl-tests-json, osu or imb, for
                     every file
  --collective C     benchmark of runs a log does not name: allreduce (or
                     all_reduce_perf, osu_allreduce), osu_latency, osu_bw, ...
  --algorithm A,B    algorithm(s) the logs' library ran
  --world N          number of ranks of every run
  --nodes N          with --preset: nodes every nccl-tests run spans, for
                     logs that do not say (no NCCL comm line, no full rank
                     list: a hostfile's launch); else its ranks fill the
                     machine's nodes in order
  --dtype T          element type of runs whose log does not say
  --in-place         nccl-tests' in-place times instead of out-of-place
  --min-bytes N      leave out smaller samples
  --hold NAME=VALUE  hold a parameter: latency=5us, bandwidth=12.5GB/s,
                     reduce_bandwidth=inf, rendezvous_latency_factor=1, or a
                     threshold: bulk_threshold=16KiB, eager_threshold=64KiB,
                     bulk_threshold=never (repeatable)
  --preset P         fit GPU machine P's figures (see above)
  --set KEY=VALUE    with --preset: a key of the machine (repeatable)
  --hold-key KEY     with --preset: keep a figure (nic_bandwidth, nic_latency,
                     nvlink_bandwidth, nvlink_latency) at the machine's value
  --no-fit           with --preset: predict the samples, fit nothing
  --jobs N           with --preset: points simulated at once (default: CPUs)
  --least-squares    weigh every sample alike
  -v                 print every sample's residual and weight

Flags override what a log says; a note says where they disagree.

Examples:
  PROG calibrate all_reduce_perf.log --out cluster.toml
  PROG calibrate --memory-bandwidth measure live-out/results.csv --out model.toml
  PROG calibrate --algorithm ring,halving_doubling,recursive_doubling nccl.log
  PROG calibrate osu_latency.log osu_bw.log
  PROG calibrate --model alpha-beta,alpha-beta-protocol,realnet results.csv
  PROG calibrate --world 16 osu_allreduce.log --hold latency=2us
  PROG calibrate --preset dgx-h100 all_reduce_perf-2nodes.log --out cluster.toml
  PROG calibrate --preset dgx-h100 --no-fit -v all_reduce_perf-4nodes.log
`
