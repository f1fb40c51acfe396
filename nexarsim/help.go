package nexarsim

import (
	"github.com/nexar-go/nexar-go/internal/calibratecmd"
	"github.com/nexar-go/nexar-go/internal/cli"
)

// exampleScenario is the scenario the help teaches the schema with.
const exampleScenario = `name = "example"
description = "ring allreduce on a 100 Gbit/s-class network"
seed = 1                        # seeds every random draw; repeat k runs with seed + k
# tuning = "tuning.toml"        # the table "auto" selects by (default: nexar's)
# policy = "nccl"               # "auto" runs what NCCL would on the GPU network first

[network]
model = "alpha-beta"            # or "flow" (with a topology), "loggp", "realnet"; see 'nexar-sim list'
latency = "5us"                 # alpha: ps, ns, us, ms, s
bandwidth = "12.5GB/s"          # 1/beta: B/s, KB/s, MB/s, GB/s, TB/s (10^3 steps),
                                # KiB/s, MiB/s, GiB/s, TiB/s (2^10), Mbit/s, Gbit/s, Tbit/s
reduce_bandwidth = "25GB/s"     # 1/gamma; optional, "inf" (free) by default
# eager_limit = "64KiB"         # message protocol, any model: eager below, rendezvous
# envelope = "16B"              # from it; bytes added per message (see 'nexar-sim list')
# preset = "dgx-h100"          # a GPU machine (flow model, topology "gpu_cluster") whose
# nodes = 16                    # keys the table starts from; each key here overrides it
# gpu = "hopper"                # the machine, for NCCL's algorithms: gpu, cpu,
# ranks_per_node = 8            # ranks_per_node (models without a topology),
# [network.nccl]                # and NCCL's figures (see 'nexar-sim list')
# ll128_channel_bandwidth = "30GB/s"

# [network.transport]           # optional: realnet's QUIC and bulk TCP paths, from
# quic_latency = "30us"         # which run derives tuning.toml's [transport]
# quic_bandwidth = "1.65Gbit/s" # bulk_threshold (see 'nexar-sim list'); sweeps
# bulk_latency = "16.5us"       # run on them with model = "realnet"
# bulk_bandwidth = "1.09GB/s"

# [[fault]]                     # noise and faults, any number; see 'nexar-sim list'
# kind = "jitter"
# dist = "lognormal"
# mean = "2us"
# stddev = "1us"

[[sweep]]                       # one table per sweep; a file may have several
collective = "allreduce"        # see 'nexar-sim list'
algorithms = ["ring", "pipelined_ring", "auto"]   # run each of them at every world and size
world = [2, 3, 8, "16..64 x2"]  # ranks; "A..B xF" multiplies by F, "A..B +S" adds S
bytes = [0, 1024, "8MiB", "1KiB..1GiB x4"]   # per rank, as nccl-tests counts
dtype = "f32"                   # default f32, or a list: f16 bf16 f32 f64 i8..i64 u8..u64
op = "sum"                      # default sum: sum prod min max
data = "phantom"                # default; "host" moves real bytes and checks them
symmetry = "auto"               # default: simulate one rank for all where proved exact; "off"
params = { segment = ["512KiB", "2MiB"] }   # algorithm parameters, one value or a list:
                                # pipelined_ring runs as pipelined_ring(segment=512KiB)
                                # and pipelined_ring(segment=2MiB)
# repeat = 5                    # runs per point (noisy networks): median and spread
# root = 0                      # root rank of rooted collectives
`

const mainHelp = `nexar-sim simulates collective-communication algorithms on a modelled
network, writes what they would take as nccl-tests reports it, draws the
figures and derives the tuning table that the "auto" dispatcher reads.

Usage:
  nexar-sim run SCENARIO.toml --out DIR [--jobs N] [--shard I/N] [--trace POINT]
                                        [--trace-ranks R] [--trace-window T:T]
                                        [--links POINT] [--resume] [--no-plots] [--quiet]
  nexar-sim run -b 8 -e 128M -f 2 --world 8 --out DIR   (nccl-tests' flags, no file)
  nexar-sim step SCENARIO.toml... --out DIR [--jobs N] [--trace POINT] [--no-plots]
  nexar-sim validate SCENARIO.toml...
  nexar-sim list
  nexar-sim plot RESULTS.csv --out DIR [--ceiling BANDWIDTH] [--budget PCT]
  nexar-sim merge --out DIR SHARD_DIR...
  nexar-sim calibrate [--model M[,M...]] [--algorithm A,B] [--out FILE.toml] LOGS...
  nexar-sim help [COMMAND]
  nexar-sim --version

Commands:
  run       simulate every point of a scenario; write results, figures, tuning table
  step      simulate the training step of a scenario's [workload]: step time,
            exposed communication, pipeline bubble; figures, best bucket
  validate  check scenario files and list every problem in them
  list      show the collectives, algorithms, network models, topologies and faults
  plot      draw the figures of a results.csv again
  merge     join the outputs of the shards of one run
  calibrate fit a network model to nccl-tests or OSU logs (or measured
            results) and write a scenario with it
  help      show help for a command

Exit status: 0 on success; 1 when a simulation fails (deadlock, wrong data)
or the outputs cannot be written, the rows computed kept for run --resume;
2 for bad input or usage, in which case nothing is written; 130 when
interrupted (run --resume continues).

` + cli.VersionHelp + `
A scenario file (TOML) names a network and sweeps to run on it:

` + exampleScenario + `
Example:
  nexar-sim validate scenarios/*.toml
  nexar-sim run scenarios/scenarios.toml --out out/
`

var commandHelp = map[string]string{
	"step":      stepHelp,
	"calibrate": calibratecmd.Help("nexar-sim"),
	"run": `Usage: nexar-sim run SCENARIO.toml --out DIR [flags]
       nexar-sim run -b MIN -e MAX [-f FACTOR | -i STEP] --world N --out DIR [flags]

Validates the scenario, then simulates each point (collective, algorithm
variant, world size, message size, dtype) on all cores. Bad input writes
nothing and exits 2; a failed simulation (deadlock, wrong data) exits 1 and
writes nothing either. Nothing is written into DIR until every output is
complete: each file is made in a private directory inside DIR and renamed
into place, results last to first, the manifest last of all.

On stdout, once the outputs are written: the rows as nccl-tests prints
its table (size, count, type, redop, root, time, algbw, busbw, #wrong),
one block per sweep, collective, algorithm and world size, and nothing
else; progress and notes go to stderr.

Outputs in DIR:
  results.csv      one row per point, in the order of the scenario, the
                   same whatever --jobs is:
                   collective,algorithm,world,bytes,dtype,time_s,algbw_GB_per_s,busbw_GB_per_s
                   then the extras params,op,repeats,time_min_s,time_max_s,
                   spread_s,messages
  results.json     the same rows, with the scenario, the crossovers and the
                   best parameter settings (docs/results-json.md: the schema
                   nexar-live's results.json has too)
  report.html      one self-contained page of the run (readable on a phone):
                   what was run, on which network, the crossovers and the
                   tuning table, every figure, the results as tables
  crossovers.csv   per collective and world size, each size at which the
                   faster of two algorithm variants changes, interpolated
                   on the log scale between swept sizes; with
                   [network.transport], a row "transport" (world 2, below
                   quic, above bulk): where realnet's bulk path overtakes
                   QUIC, its request-to-send round trip on QUIC included
  tuning.toml      the derived tuning table, in the format "auto" reads (set
                   tuning = "tuning.toml" in a scenario to use it); written
                   when some collective ran competing algorithms or the
                   scenario has a [network.transport], whose derived bulk
                   threshold it holds as [transport] bulk_threshold
  nccl_tuner.conf  the same crossovers among NCCL's algorithms (nccl_*), in
                   the CSV NCCL's example tuner plugin reads, for NCCL on
                   the real cluster (docs/nccl-tuner.md); written when some
                   collective ran two of NCCL's algorithms
  latency_*.png/svg, busbw_*, crossover_*, auto_*   the figures, each
                   subtitled with the scenario and its network
  trace_*.pftrace  with --trace: a timeline of one point (Perfetto's format;
                   trace_*.json with --trace-format json)
  links.csv        with --links: bytes carried and busy time of every link
                   of the network, per point asked (see below)
  manifest.json    the scenario's name and hash, the shard, the files

In results.csv, algorithm is the variant's name, with the parameters the
sweep sets in parentheses (pipelined_ring(segment=2MiB)), and params the
same as name=bytes pairs; bytes is the size run, after the collective's
rounding (as nccl-tests); time_s the simulated time until the last rank
finished, the median over repeats; spread_s half of time_max_s -
time_min_s; times are in seconds to the simulator's picosecond (12
decimals); algbw = bytes / time_s / 1e9 in GB/s (10^9 bytes per second,
as nccl-tests) and busbw = algbw times the collective's bus factor (0
when bytes or time is 0). Every reader of results.csv finds its columns
by name, in any order, and reads the files of earlier versions, which
named the bandwidths algbw_gbps and busbw_gbps; plot reads nexar-live's
too.

Flags:
  --out DIR        output directory (required; created if missing)
  --jobs N         points run at once (default: the number of CPUs)
  --shard I/N      run only points I-1, I-1+N, I-1+2N, ... (from 0), for one
                   machine of N; the shard writes results.csv and
                   manifest.json, and 'nexar-sim merge' joins the shards.
                   In a Slurm job array (sbatch --array=0-7) the default is
                   the task's shard: SLURM_ARRAY_TASK_ID's place among
                   SLURM_ARRAY_TASK_COUNT tasks (from SLURM_ARRAY_TASK_MIN,
                   by SLURM_ARRAY_TASK_STEP)
  --trace POINT    also write the timeline of POINT (open it in
                   ui.perfetto.dev): POINT is a row number of results.csv
                   (from 0) or COLLECTIVE:ALGORITHM:WORLD:BYTES[:DTYPE], such
                   as allreduce:ring:8:8MiB; may be given several times. Each
                   rank is a track with its sends, receives, waits and
                   reductions, an arrow joins each send to its receive
  --trace-ranks R  keep only these ranks' tracks, such as 0-7,512,1023
                   (messages to and from them are kept on their side)
  --trace-window T:T  keep only what overlaps this window of simulated
                   time, such as 10us:2ms (either end may be left out)
  --trace-format F perfetto (default: Perfetto's protobuf format, compact)
                   or json (the Chrome trace format, about 3.5 times larger)
  --trace-limit S  the largest trace file to write (default 512MiB; none for
                   no limit). A trace estimated over the limit is refused
                   before anything runs (exit 2) unless a window is given;
                   one that passes the limit while it runs is not written,
                   with a warning, and the rest of the run is
  --links POINT    also write links.csv, the per-link account of POINT (same
                   syntax as --trace), to find the bottleneck; may be given
                   several times, one file for all. Only the flow model
                   (model = "flow", any topology) has links: another model
                   is refused, exit 2, before anything is simulated
  --resume         continue an interrupted or failed run of the same scenario
                   and shard in DIR from its checkpoint (rows are kept as
                   they come; a run that ends without its outputs, whatever
                   the reason, leaves DIR/` + checkpointFile + `); refuses a DIR
                   without one whose results.csv is nexar-live's, which a
                   simulation does not continue and would replace (exit 2)
  --no-plots       write no figures
  --quiet, -q      no progress on stderr, and no table on stdout

Without a scenario file, nccl-tests' flags describe one sweep (as
all_reduce_perf would run it under mpirun -np N), on an alpha-beta network
(the default scenario's unless given):
  -b, --minbytes S     smallest size (default 32M); K, M, G are powers of
                       1024 as in nccl-tests, and 8MiB, 1KB work too
  -e, --maxbytes S     largest size (default 32M)
  -f, --stepfactor F   multiply the size by F from one to the next
  -i, --stepbytes S    or add S (default 1M, nccl-tests' default)
  -d, --datatype T     float (default), half, bfloat16, double, int8,
                       uint8, int32, uint32, int64, uint64, a list (a,b)
                       or all; nexar's names (f32, bf16) work too
  -o, --op OP          sum (default), prod, max, min, or all (one sweep each)
  -r, --root R         root rank of rooted collectives (default 0)
  -c, --check 1        run with real data and check it (default 0: sizes
                       only, data = "phantom")
  -n, --iters N / -w, --warmup_iters N   taken, and changing nothing: the
                       network draws no random numbers and keeps no state
                       from one iteration to the next
  --world N            ranks: 8, a list 2,4,8, or a range 2..64 x2 (required
                       unless -t or -g give them): what mpirun -np gives
                       nccl-tests, so with -t or -g the processes, each of
                       T x G ranks
  -t, --nthreads T / -g, --ngpus G   ranks a process holds (default 1 x 1),
                       as nccl-tests counts them: --world 2 -g 8 is 16
                       ranks, -g 8 alone 8
  -G, -z, -a, -m, -p, -N, -y, -T, -C, -S, -J, -R, -x, -D, -V, -M
                       nccl-tests' other flags: taken, changing nothing
                       (they say how it runs on GPUs); values may be glued
                       on, as getopt takes them (-f2, -e128M)
  --collective C       all_reduce (default), all_gather, reduce_scatter,
                       broadcast, reduce, alltoall, gather, scatter,
                       sendrecv (nccl-tests' or nexar's names)
  --algorithms A,B     the collective's algorithms to run (default: all of
                       the catalogue's own that run at every --world; NCCL's,
                       nccl_*, run where named; see 'nexar-sim list')
  --latency D, --bandwidth B, --reduce-bandwidth B
                       the network (default 5us, 12.5GB/s, 25GB/s)
  --preset P, --nodes N, --policy nccl
                       or a GPU machine ('nexar-sim list': dgx-h100, ...)
                       on N nodes (default 1; --world defaults to all
                       their GPUs), predicting nccl-tests as NCCL would run
                       it there: without --algorithms, "auto" chooses as
                       NCCL 2.30.7 does at each size (its algorithm,
                       protocol and channels; --policy table for nexar's
                       own table) for all_reduce, all_gather,
                       reduce_scatter, broadcast and reduce, and alltoall
                       runs "linear" (NCCL's sends and receives, all posted
                       at once); docs/nccl-predictions.md. For example:
                       nexar-sim run --preset dgx-h100 --nodes 2
                         --collective all_gather -b 8 -e 8G -f 2 --out out/
The run writes the scenario the flags describe into DIR/` + flagsScenarioFile + `:
'nexar-sim run DIR/` + flagsScenarioFile + `' runs it again, and it is where to start
a richer study (topologies, faults, several sweeps).

links.csv has one row per point asked (in results.csv's order, each once)
and directed link of the topology ("dev0->switch"; idle links too, so
that rows line up across points):
  point,collective,algorithm,world,bytes,dtype,seed,time_s,
  link,from,to,bandwidth_bytes_per_s,latency_s,bytes_carried,
  messages_carried,busy_s,busy_fraction,utilisation,peak_flows,failed
point is the row of results.csv, time_s the run's simulated time (of the
first seed when the point repeats), bytes the collective's size as in
results.csv, bytes_carried and messages_carried what crossed the link (a
message counts on every link of its route), busy_s the time at least one
message was on it, busy_fraction = busy_s / time_s, utilisation =
bytes_carried / (bandwidth_bytes_per_s * time_s): the bottleneck is the
link whose busy_fraction is nearest 1.

Before it runs, run estimates every point (as validate does): each sweep's
line says what it will cost, and a warning names the points that may not
fit in the machine's available memory or simulate a billion messages or
more. Progress goes to stderr: a bar on a terminal, a plain line every ten
seconds otherwise. The bar weighs points by their estimated cost, so that
its percentage and ETA follow the work, and names the largest point under
way with its simulated time and messages so far ("recorded N of M ranks"
while the simulator records a large world's programs).

Ctrl-C (SIGINT) or SIGTERM stops the run within a second, even inside a
long point: it exits 130, writes no outputs and leaves no staging
directory, and keeps DIR/` + checkpointFile + ` with the points that were
complete, from which --resume continues (a second signal kills at once). A
run killed outright (SIGKILL) leaves its staging directory
(DIR/.nexar-sim-stage-*), which the next run into DIR removes. A run that
fails (a full disk, a point that fails) keeps the checkpoint too, and says
so; it is never deleted before the outputs are written, and --resume writes
it anew beside the old one and renames it into place, so that a resume that
cannot write leaves the old one whole.

Example scenario:

` + exampleScenario + `
Examples:
  nexar-sim run scenarios/scenarios.toml --out out/
  nexar-sim run -b 1K -e 1M -f 4 --world 8,64 --out out/
  nexar-sim run -b 8 -e 128M -f 2 --world 16 --algorithms ring,halving_doubling --out out/
  nexar-sim run study.toml --out out/ --trace allreduce:ring:8:8MiB
  nexar-sim run fattree.toml --out out/ --links alltoall:pairwise:64:1MiB
  nexar-sim run big.toml --out shard3/ --shard 3/8
  sbatch --array=0-7 --wrap 'nexar-sim run big.toml --out shard$SLURM_ARRAY_TASK_ID/'   # shards 1/8..8/8
`,
	"validate": `Usage: nexar-sim validate SCENARIO.toml...

Checks scenario files without simulating anything, and lists every problem
as FILE:LINE: KEY: MESSAGE: TOML syntax, unknown or missing keys, unknown
models, topologies, collectives, algorithms, dtypes and ops, bad units and
sizes, sizes that are not a whole number of elements, world sizes below 1
or too large for the network, tuning tables that cannot be read or select
an algorithm that cannot run. Exits 2 if any file has a problem.

For a good file it says what each sweep will cost: its messages, events
and time (roughly: one core's CPU time on this machine, at prices scaled
by its speed, which a few milliseconds of probing measure), and the memory
of its largest
point, and warns on stderr of points that may not fit in the machine's
available memory or simulate a billion messages or more. The estimates
come from recording the algorithm's operations on a sample of the ranks
(all of them up to 64): the messages are exact up to 64 ranks and within
a few per cent above; events within a factor of 1.5, memory within about
25% of the peak the run holds, time within a factor of 1.5 or so on a
quiet machine (runs on coroutines vary more). Time is priced, not timed:
only the machine's speed is measured, once, so the same file gives nearly
the same estimate on every call, and the same within one call; host
data's points (whose cost is their arithmetic) are timed on a sample of
64 ranks.

For example, a file whose sweep, from line 9, reads

  [[sweep]]
  collective = "allreduce"
  algorithms = ["rign"]
  world = [0, 8]
  bytes = ["1KiB..1MiB x2", 6]
  dtype = "f32"

gives

  s.toml:11: sweep[0].algorithms: unknown allreduce algorithm "rign" (want one of ring, ...)
  s.toml:12: sweep[0].world: element 1: world size 0 is out of range (want 1 to 16777216 ranks)
  s.toml:13: sweep[0].bytes: 6: not a multiple of the f32 element size (4 bytes)

Example:
  nexar-sim validate scenarios/*.toml
`,
	"list": `Usage: nexar-sim list

Lists the collectives of the algorithm catalogue with their algorithms and
the algorithms' parameters (set them in a sweep with params = { name = value }
or a list of values), the network models a scenario's [network] table may
name with their keys, the topologies of the flow model with theirs, the
GPU machines a [network] table may start from (preset = NAME) with their
headline figures, the keys that describe the machine to algorithms (gpu,
cpu, ranks_per_node) and NCCL's figures of [network.nccl], the keys of
[network.transport] (realnet's two paths, for the bulk threshold), and the
kinds of [[fault]] table.

Example:
  nexar-sim list
`,
	"plot": `Usage: nexar-sim plot RESULTS.csv --out DIR [--ceiling BANDWIDTH] [--budget PCT] [--subtitle TEXT]

Draws the figures of a results file again (after editing it, or from an
older run or another tool's file with the same columns): latency and busbw
against message size per world size, the crossover map and auto's slowdown,
as PNG and SVG, written atomically into DIR. Files of earlier versions,
whose bandwidth column was named busbw_gbps, read too.

Flags:
  --out DIR            output directory (required)
  --ceiling BANDWIDTH  link bandwidth drawn on the busbw figures, such as
                       "12.5GB/s"; by default the one in the manifest.json
                       beside RESULTS.csv, if any
  --budget PCT         slowdown of auto drawn as acceptable (default 5)
  --subtitle TEXT      line under every figure's title; by default the
                       scenario and network in the manifest.json beside
                       RESULTS.csv, if any
  --quiet, -q          say nothing on success

Example:
  nexar-sim plot out/results.csv --out figures/ --ceiling 100Gbit/s
`,
	"merge": `Usage: nexar-sim merge --out DIR SHARD_DIR...

Joins the outputs of the shards of one run (nexar-sim run --shard I/N) into
the outputs of the whole run: results.csv in the order of the scenario, the
same bytes an unsharded run writes, then results.json, crossovers.csv,
tuning.toml and the figures. Refuses shards of different scenarios (by the
hash in their manifest.json), of different shard counts, repeated or
missing shards, and a directory of nexar-live's (its results.csv holds
measurements, not a shard) or a results.csv with columns nexar-sim does
not write, which the merged one would not keep, saying so.

Flags:
  --out DIR      output directory (required)
  --no-plots     write no figures
  --quiet, -q    say nothing on success

Example:
  for i in 1 2 3 4; do nexar-sim run big.toml --shard $i/4 --out shard$i/ & done; wait
  nexar-sim merge --out out/ shard1 shard2 shard3 shard4
`,
	"help": `Usage: nexar-sim help [COMMAND]

Shows help for COMMAND (run, step, validate, list, plot, merge), or an overview
with an example scenario file.

Example:
  nexar-sim help run
`,
}
