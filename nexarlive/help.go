package nexarlive

import (
	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/internal/calibratecmd"
	"github.com/nexar-go/nexar-go/internal/cli"
)

const mainHelp = `nexar-live runs nexar-go's collective algorithms on real ranks over QUIC,
checks every result, and holds the measurements against the simulator.

Usage:
  nexar-live run --np N SCENARIO.toml --out DIR [flags]
  nexar-live run --np N -b 8 -e 128M -f 2 [-n 20 -w 5] --out DIR   (nccl-tests' flags)
  nexar-live worker SCENARIO.toml --out DIR [flags]     (one rank, under srun, torchrun, mpirun)
  nexar-live compare SCENARIO.toml RESULTS.csv [--out DIR]
  nexar-live calibrate [--model M[,M...]] [--algorithm A,B] [--out FILE.toml] MEASUREMENTS...
  nexar-live verify TUNING.toml --np N[,M...] --out DIR [--emulate SPEC] [--scenario S]
  nexar-live peer RESULTS.csv PEER.log
  nexar-live ca DIR
  nexar-live ladder [--only RUNGS] [--csv FILE]
  nexar-live step --np N SCENARIO.toml --out DIR [--iters K --warmup W] [--model MODEL.toml]
  nexar-live tune --np N[,M...] SCENARIO.toml --out DIR   (measure, calibrate, simulate, verify)
  nexar-live help [COMMAND]
  nexar-live --version

Commands:
  run        start N ranks on this machine (or in one process over an emulated
             network), measure the scenario's points of world size N, write
             DIR/results.csv, DIR/compare.csv and DIR/compare.png
  worker     one rank of a run started by a cluster's launcher
  compare    predict measured points with a scenario's model: error, worst points
  calibrate  fit a model's parameters to measurements (results.csv, nccl-tests
             or OSU logs) and write a scenario file with it that nexar-sim reads
  verify     measure the algorithms of a tuning table's crossovers around the
             predicted sizes and report predicted against measured crossovers
  peer       busbw of nexar-live against another library's log, size by size
  ca         make a cluster CA and a certificate for the ranks of cluster runs
  ladder     what a message costs at each layer (raw TCP, raw quic-go, realnet's
             paths, nexar-live's timing, Open MPI) between two processes
  step       run the training steps of a scenario's [workload] on N ranks
             (compute emulated), write DIR/step.csv as nexar-sim step does,
             and DIR/compare.csv: the simulator's prediction against them
  tune       the whole loop in one command: run, calibrate, simulate the
             calibrated model, verify its crossovers; DIR/tune.md says how
             far off the model was before and after
  help       show help for a command

Exit status: 0 on success; 1 when the run finished but some results were
wrong (see the wrong column); 2 for bad input or usage, nothing run; 3 when
a rank crashed, hung or failed, 130 when interrupted (Ctrl-C, SIGTERM): what
was measured is then in DIR/results.partial.csv, which 'run --resume'
continues.

Scenario files are those of nexar-sim (see 'nexar-sim help'); a run of N
ranks measures the sweeps' points of world = N and leaves the other world
sizes out. Real runs always move and check real data, whatever a sweep's
data key says.

` + cli.VersionHelp + `
Examples:
  nexar-live run --np 4 live/examples/loopback-allreduce.toml --out live-out/
  nexar-live run --np 2 -b 8 -e 64K -f 8 -n 5 -w 2 --out live-out/
`

// measureFlagsHelp is the help of measureFlags, the bulk threshold's
// default from algos.DefaultBulkThreshold.
var measureFlagsHelp = `  --warmup W           untimed iterations before the timed ones (default 5)
  --iters N            timed iterations per point (default 20); the time of
                       a point is the median over them of the slowest rank's
  --min-time D         then more iterations while they took less than D in
                       all (say 300ms: hundreds of the fast sizes, whose
                       times a busy machine disturbs most)
  --max-iters N        at most N timed iterations with --min-time (1000)
  --timing T           how an iteration is timed, named in the table's header:
                       "start" (default): every iteration starts at an instant
                       all ranks agreed on, its time runs to the slowest rank's
                       end, the point's time is the median over iterations
                       (what nexar-sim predicts); "loop": nccl-tests' and OSU's
                       way, a barrier, then the iterations back to back, the
                       point's time the slowest rank's mean per iteration (one
                       more iteration, untimed, is checked)
  --minmax             OSU's -f: add min, avg and max (µs) to each line of the
                       table, the fastest, mean and slowest timed iteration of
                       the point, and time_avg_s to results.csv and
                       results.json (time_min_s and time_max_s are always
                       there); with --timing loop the iterations are not timed
                       one by one, and all three are the loop's mean
  --timeout D          how long a collective may wait for its peers before
                       it fails naming them (default 2m); a bare number is
                       seconds, as nccl-tests' --timeout (whose 0, no limit,
                       keeps the default)
  --bulk-threshold S   messages of S bytes or more take the TCP bulk path
                       beside QUIC (default ` + algos.FormatBulkThreshold(algos.DefaultBulkThreshold) + `; "off": QUIC only)
  --eager-threshold S  send every message over TCP: below S bytes eagerly
                       (header and payload at once, on a TCP connection of
                       their own), from S by rendezvous on the bulk connection;
                       the kernel's TCP costs a few microseconds a message
                       where QUIC costs tens. TLS as the bulk path (plaintext
                       with --trusted-network); at most 256KiB (default off:
                       small messages on QUIC)
  --tuning FILE        take the bulk threshold, and the eager threshold if it
                       has one, from the [transport] table of this tuning
                       table (as nexar-sim derives them for a site;
                       bulk_threshold "never": QUIC only); explicit
                       --bulk-threshold and --eager-threshold win; verify
                       defaults to its table
  --trusted-network    bulk payloads over plaintext TCP (QUIC stays TLS)
  --no-local-sockets   ranks on one host connect over TCP as ranks on
                       different hosts do (sealed unless --trusted-network).
                       By default they use Unix sockets, in plaintext: the
                       bytes stay in the kernel, so sealing them protects
                       nothing, and a Unix socket moves 1.5-2x loopback
                       TCP's rate
  --no-compare         do not predict the points with the scenario's model
`

const outputHelp = `Output: a table on stdout laid out as nccl-tests prints its own,

  #       size         count      type   redop    root     time   algbw   busbw  #wrong
  #        (B)    (elements)                               (us)  (GB/s)  (GB/s)
         65536         16384     float     sum      -1   812.40    0.08    0.12       0

one block per collective and algorithm, and in DIR:

  results.csv   nexar-sim's columns (collective, algorithm, world, bytes, dtype,
                time_s, algbw_GB_per_s, busbw_GB_per_s, params, op, repeats,
                time_min_s, time_max_s, spread_s, messages), then wrong: the
                elements, over all ranks, that differed from the reference.
                repeats is the number of timed iterations, time_min_s and
                time_max_s their extremes, spread_s half the difference,
                messages the messages all ranks sent in one iteration.
                Times are seconds to the clock's nanosecond (9 decimals),
                algbw and busbw GB/s (10^9 bytes per second).
                A run with --device cuda adds device (cuda). Last,
                bulk_threshold and eager_threshold: the transport thresholds
                the ranks used, in bytes (-1: never; 0: off), which
                calibrate holds its models' thresholds at.
  compare.csv   collective, algorithm, world, bytes, dtype, params, op,
                predicted_s (the simulator, on the scenario's [network]),
                measured_s, ratio = predicted_s / measured_s
  compare.png   predicted and measured time against size, per algorithm
  results.json  the same rows, the crossovers measured among them and the
                model's error, in the schema nexar-sim's results.json has
                too (docs/results-json.md)
  report.html   one self-contained page of the run: what was run, on which
                network, the tables, the figures, the model's error
`

var commandHelp = map[string]string{
	"run": `Usage: nexar-live run --np N SCENARIO.toml --out DIR [flags]
       nexar-live run --np N -b MIN -e MAX [-f FACTOR | -i STEP] --out DIR [flags]

Starts N rank processes on 127.0.0.1 (this executable, as 'nexar-live
worker'), joined over QUIC with mutual TLS from an ephemeral cluster CA,
through a rendezvous on a free port. They measure the scenario's points of
world size N, in the scenario's order; rank 0 prints the table and writes
the results.

A rank that crashes, is killed or hangs is reported by rank, with the point
it was in; the others are stopped (they notice a lost peer within a quarter
of --timeout, at most 10s) and no process is left behind; the exit status
is 3; with --recovery shrink the survivors go on without it instead (the
launcher hosts their membership coordinator; see --recovery). Ctrl-C (or
SIGTERM) interrupts every rank; rank 0 writes what was
measured to DIR/results.partial.csv, ranks still running 5s later are
killed, and the exit status is 130. Each rank runs with GOMAXPROCS set to
its share of the CPUs (at least 1), as MPI launchers bind ranks to cores,
unless GOMAXPROCS is set in the environment. Where the ranks are no more
than the CPUs, each polls its eager connection for 50us before it sleeps,
as MPI libraries poll (half the eager path's latency); NEXAR_SPIN_READ
(a duration, 0 for none) overrides it, and ranks started by another
launcher read it too.

No measured row is lost on any error: rank 0 writes its rows into a
temporary file beside DIR/results.csv as they come, which becomes
results.csv only when the run succeeded and every row was written. After
a failure (a rank lost, Ctrl-C, a full disk) the rows are in
DIR/results.partial.csv, and an earlier results.csv is left as it was;
rows a rank 0 that was killed had written (or, after the launcher itself
was killed, the next run into DIR finds) are saved there too, and the
message names the file. An earlier run's results.partial.csv is never
overwritten: it becomes results.partial.1.csv (.2, ...) first.

More ranks than the machine's cores are measured with a warning: ranks
that share cores wait to be scheduled inside every collective, and share
its bandwidth. More than 4 ranks per core, or more than the machine's
available memory holds (about 32 MiB a rank process, 4 MiB an emulated
rank, and twice its largest buffers), are refused unless --oversubscribe
is given (mpirun's flag). Bad input is refused before anything is written.
As the points are measured, stderr says what the run will take (each
point's iterations predicted on the scenario's model) and, every 10 s,
how far it is with its ETA. After a run whose model is more than 25% off
the measurements (median |predicted/measured - 1|), stderr names the
calibrate and compare commands that fit one to them.

Flags:
  --np N               number of ranks (required)
  --out DIR            output directory (required)
  --oversubscribe      run more ranks than the cores and memory allow
  --profile DIR        write a CPU profile of each rank process over the
                       whole run to DIR/rank-N.pprof (go tool pprof), and
                       with --timing loop its CPU, page faults and context
                       switches per timed iteration of each point to
                       DIR/rank-N.cpu; not with --emulate
  --resume             continue the run whose rows DIR/results.partial.csv
                       holds (the same scenario, --np, options and transport
                       thresholds; another's is refused, naming what
                       differs): its points are not measured again, and
                       results.csv has them first; not with --recovery shrink
  --emulate SPEC       run the N ranks as goroutines of this process over an
                       emulated switched network instead of loopback, in real
                       time: SPEC is latency=D,bandwidth=B[,mtu=M][,queue=D],
                       e.g. latency=5ms,bandwidth=10MB/s. Go's timers are late
                       by up to about a millisecond on an idle Linux machine,
                       more on a loaded one: use latencies of milliseconds.
` + measureFlagsHelp + deviceFlagHelp + meshFlagHelp + recoveryFlagsHelp + killFlagHelp + `
Without a scenario file, nccl-tests' flags describe the sweep, measured
with real data on N ranks as all_reduce_perf under mpirun -np N:
  -b, --minbytes S     smallest size (default 32M); K, M, G are powers of
                       1024 as in nccl-tests, and 8MiB, 1KB work too
  -e, --maxbytes S     largest size (default 32M)
  -f, --stepfactor F   multiply the size by F from one to the next
  -i, --stepbytes S    or add S (default 1M, nccl-tests' default)
  -n, --iters N        --iters; -w, --warmup_iters W: --warmup
  -d, --datatype T     float (default), half, bfloat16, double, int8,
                       uint8, int32, uint32, int64, uint64, a list or all
  -o, --op OP          sum (default), prod, max, min, or all
  -r, --root R         root rank of rooted collectives (default 0)
  -c, --check N        taken as nccl-tests users pass it: real runs always
                       check every element
  -G, -z, -a, -m, -p, -N, -y, -T, -C, -S, -J, -R, -x, -D, -V, -M, and
  -t 1, -g 1           nccl-tests' other flags: taken, changing nothing
                       (each rank is a process of its own: --np gives the
                       ranks, and -t or -g above 1 is refused); values
                       may be glued on, as getopt takes them (-f2, -e128M)
  --collective C       all_reduce (default), all_gather, reduce_scatter,
                       broadcast, reduce, alltoall, gather, scatter, sendrecv
  --algorithms A,B     the algorithms to measure (default: all of the
                       catalogue's own that run on N ranks; NCCL's, nccl_*,
                       where named; 'nexar-sim list')
  --latency D, --bandwidth B, --reduce-bandwidth B
                       the alpha-beta model compare.csv predicts with
                       (default 399us and 413MB/s, calibrated on loopback
                       on a 2-core machine; 'nexar-live calibrate' fits yours)
The scenario they describe is written to DIR/scenario.toml, which the
ranks read, and which 'nexar-live run --np N DIR/scenario.toml' runs again.

` + outputHelp + `
Examples:
  nexar-live run --np 4 live/examples/loopback-allreduce.toml --out live-out/
  nexar-live run --np 2 -b 8 -e 64K -f 8 -n 5 -w 2 --out live-out/
  nexar-live run --np 6 --emulate latency=5ms,bandwidth=10MB/s slow.toml --out slow-out/
  nexar-live run --np 4 --recovery shrink --kill 2@3 --heartbeat 100ms \
      --dead-after 500ms live/examples/loopback-ci.toml --out shrink-out/
`,
	"worker": `Usage: nexar-live worker SCENARIO.toml --out DIR [flags]

Runs one rank. Its rank, the world size and the rendezvous come from the
environment, in this order of precedence:

  nexar      NEXAR_WORLD, NEXAR_SEED, NEXAR_RANK
  torchrun   RANK and WORLD_SIZE (both), MASTER_ADDR, MASTER_PORT
  mpirun     OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE (Open MPI), and NEXAR_SEED
  mpiexec    PMI_RANK, PMI_SIZE (MPICH, Intel MPI, Cray PMI, srun --mpi=pmi2),
             and NEXAR_SEED
  mpirun_rsh MV2_COMM_WORLD_RANK, MV2_COMM_WORLD_SIZE (MVAPICH2), and NEXAR_SEED
  Slurm      SLURM_PROCID, SLURM_STEP_NUM_TASKS (else SLURM_NTASKS), and
             NEXAR_SEED

NEXAR_WORLD and NEXAR_RANK set by hand win over what a batch script or an
salloc shell leaves; an MPI launcher's variables win over Slurm's, which
mpirun inside an allocation leaves from the srun that started its daemons;
Slurm counts only in a task srun started (SLURM_PROCID set). mpiexec
-pmi-port (PMI_ID, PMI_PORT) gives no world size: set NEXAR_WORLD and
NEXAR_RANK there. The local rank (--device cuda) comes from the same
launcher: LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
PMI_LOCAL_RANK, MV2_COMM_WORLD_LOCAL_RANK, then SLURM_LOCALID.

NEXAR_SEED (host:port) overrides MASTER_ADDR:MASTER_PORT; rank 0 hosts the
rendezvous there. NEXAR_CA, NEXAR_CERT and NEXAR_KEY name the cluster CA
and the ranks' certificate and key (make them with 'nexar-live ca').
Every rank reads the scenario file (they check they all read the same);
rank 0 prints the table and writes DIR.

Slurm batch script (one task per rank):

  #!/bin/bash
  #SBATCH --nodes=4
  #SBATCH --ntasks-per-node=1
  export NEXAR_CA=/shared/nexar-ca/ca.pem NEXAR_CERT=/shared/nexar-ca/cluster-rank{rank}.pem
  export NEXAR_KEY=/shared/nexar-ca/cluster-rank{rank}-key.pem
  export NEXAR_SEED=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1):29501
  srun nexar-live worker scenario.toml --out results/$SLURM_JOB_ID

torchrun, on each node (NEXAR_SEED keeps clear of torchrun's own port):

  NEXAR_SEED=$HEAD:29501 torchrun --nnodes=2 --nproc-per-node=8 \
      --node-rank=$NODE_RANK --master-addr=$HEAD --master-port=29500 \
      --no-python nexar-live worker scenario.toml --out results/

Flags:
  --out DIR            output directory, written by rank 0 (required)
  --resume-from N      continue a run after its first N points, which rank
                       0's DIR/results.partial.csv holds (give every rank
                       the same N: the rows of that file; 'run --resume'
                       does it for its workers)
  --profile FILE       write this process's CPU profile to FILE (go tool
                       pprof; 'run --profile' gives each rank its own), and
                       its CPU per timed iteration to FILE without .pprof,
                       with .cpu
` + measureFlagsHelp + deviceFlagHelp + meshFlagHelp + recoveryFlagsHelp + `
` + outputHelp,
	"compare": `Usage: nexar-live compare SCENARIO.toml RESULTS.csv [--out DIR]

Simulates every point of RESULTS.csv (nexar-live's, or nexar-sim's) on the
[network] of SCENARIO.toml and prints how far the predictions are from the
measurements: the median and mean of |predicted/measured - 1|, and the
worst points. With --out, writes DIR/compare.csv and DIR/compare.png as
'run' does. A calibrated scenario ('nexar-live calibrate --out') is meant
for this.

Points measured on GPUs (a results file of 'run --device cuda', with its
device column) are predicted with every message staged through host
memory: the copy of its first 1 MiB chunk before it leaves and of its last
after it arrives, at the host_bandwidth of the scenario's hierarchical
topology, and no faster than that bandwidth. A scenario without one
leaves the copies out and says so.

Example:
  nexar-live calibrate live-out/results.csv --out calibrated.toml
  nexar-live compare calibrated.toml live-out/results.csv --out live-out/calibrated/
`,
	"calibrate": calibratecmd.Help("nexar-live"),
	"tune":      tuneHelp,
	"verify": `Usage: nexar-live verify TUNING.toml --np N[,M...] --out DIR [flags]

Checks the crossovers of a tuning table (algos.Tuning's format, as
nexar-sim derives it) on real ranks. For each world size N, the table's
first crossover entry for N gives, between consecutive steps, a predicted
crossover: step k-1's algorithm below step k's from_bytes, step k's from
there. Both algorithms run at sizes around it (--span octaves each side,
one size per octave, and --per-octave sizes per octave within --dense
octaves of it), then the measured crossover is read from their times: the
boundary that the fewest sizes contradict (the fastest algorithm changes
once, noise aside), interpolated where the log of the two times' ratio
crosses zero on a log size axis: the rule nexar-sim's derived crossovers
are read by, so that the table's, the simulated and the measured
crossover compare alike.

Writes DIR/pN/ (the generated scenario, results.csv), DIR/verify.csv
(collective, world, below, above, table_bytes, simulated_bytes,
measured_bytes, measured_lo, measured_hi, measured_side,
disagreeing_sizes, sizes, ratio = measured / table) and DIR/verify.png
(the time ratio of the two algorithms against size, with the crossovers),
and prints the table. simulated_bytes is the crossover of the model's
predictions at the measured sizes: the --scenario's [network], or with
--emulate the emulated network's alpha-beta model.

A measured_side of "below" means the first algorithm won at every size
(the crossover is above them), "above" that the second did.

Flags:
  --np N[,M...]        world sizes, one run each (required)
  --out DIR            output directory (required)
  --oversubscribe      run more ranks than the cores and memory allow (see
                       'nexar-live help run')
  --emulate SPEC       run over an emulated network (see 'nexar-live help run')
  --scenario FILE      scenario whose [network] predicts the points
  --span S             octaves measured on each side (default 4)
  --dense D            octaves on each side measured densely (default 1)
  --per-octave K       sizes per octave in the dense part (default 4)
  --dtype T            element type (default f32)
  --reuse              measure nothing: read DIR/pN/results.csv of an earlier
                       run (to predict it with another --scenario, such as a
                       calibrated one)
` + measureFlagsHelp + `
Example (a table derived for a 5 ms, 10 MB/s network, checked on 6 ranks):
  nexar-live verify tuning.toml --np 6 --emulate latency=5ms,bandwidth=10MB/s --out verify-out/
`,
	"peer": `Usage: nexar-live peer RESULTS.csv PEER.log [flags]

Sets nexar-live's results beside another library's benchmark log of the
same collective, world size and sizes (an nccl-tests log, such as
scripts/ompi-allreduce's Open MPI program and scripts/gloo-allreduce's
Gloo program print, or an OSU log): per size
the peer's time and bus bandwidth, nexar-live's fastest algorithm there
with its time and busbw, auto's busbw, and the ratio of nexar-live's
fastest busbw to the peer's.

Flags:
  --name NAME          what to call the peer in the table (default "peer")
  --format F           nccl-tests or osu (default: guessed)
  --collective C       collective of a log that does not name it
  --world N            ranks of a log that does not say (OSU)

Example:
  scripts/ompi-allreduce/run.sh --install --np 4
  nexar-live peer ompi-peer-out/pair1/nexar/results.csv ompi-peer-out/pair1/peer.log --name ompi
  scripts/gloo-allreduce/run.sh --install --np 4 --pairs 5   (PyTorch's Gloo)
`,
	"ca": `Usage: nexar-live ca DIR [--job JOB] [--ranks N] [--overwrite]

Generates a cluster CA and certificates issued by it into DIR, and prints
the variables to export for 'nexar-live worker'. Each certificate names
its job and, with --ranks, its rank: a peer whose certificate names
another job is refused, and a rank's certificate joins as that rank only.

  --job JOB     the job the certificates are for (default "nexar")
  --ranks N     one certificate per rank, JOB-rank0.pem to JOB-rank<N-1>.pem
                with their keys; NEXAR_CERT and NEXAR_KEY then name {rank},
                which each worker replaces by its launcher's rank
                (default 0: one certificate JOB.pem good for any rank of
                the job, which lets its holder take any rank)
  --overwrite   replace files already in DIR (default: refuse)

Files are created anew, never through a symbolic link, keys readable by
their owner only (0600). The CA's own key is not kept: issue every
certificate a job needs at once. Keep DIR private.

Example:
  nexar-live ca --job cluster --ranks 4 /shared/nexar-ca
`,
	"ladder": `Usage: nexar-live ladder [flags]

Measures, in one run between two processes on 127.0.0.1, what a message
costs at each layer of the live runtime, and prints each rung with its
ratio to the rung below it, so that an overhead shows where it appears:

  latency (8 B one way: half the median round trip)
    tcp                raw TCP ping-pong (the kernel's floor)
    unix               raw Unix socket ping-pong (the floor of ranks on one
                       host, which connect so by default)
    quic-stream        raw quic-go, one long-lived stream
    quic-msg           raw quic-go, a new stream per message (realnet's way)
    quic-xchg          raw quic-go timed as the allreduce rung: both send
                       8 B at once from an agreed start, the slower side's time
    realnet-quic       realnet Send/Recv on the QUIC path
    realnet-eager      realnet Send/Recv on the eager TCP path (64KiB threshold)
    realnet-bulk       realnet Send/Recv on the bulk TCP path (rendezvous)
    realnet-local      realnet Send/Recv on the eager path over the local
                       socket (plaintext), against unix
    allreduce          nexar-live's 8 B allreduce, recursive_doubling, 2 ranks
                       (RunRank's own time, as 'nexar-live run' reports it)
    allreduce-loop     the same, --timing loop
    empty              nexar-live's empty collective: what the timing costs
    allreduce-eager, allreduce-eager-loop
                       the allreduce with --eager-threshold 64KiB
    ompi               Open MPI's 8 B MPI_Allreduce, 2 ranks, TCP, through
                       scripts/ompi-allreduce/run.sh (skipped without mpicc;
                       a loop's mean, as --timing loop)
    gloo               PyTorch Gloo's 8 B allreduce, 2 ranks, TCP, through
                       scripts/gloo-allreduce/run.sh (skipped without torch)
  bandwidth (a --bw-bytes message one way, then a 1 B acknowledgement)
    tcp-bw, unix-bw, tcp-gcm-bw (raw TCP sealed and opened with AES-128-GCM
    in the bulk path's records: the floor of any sealed path, so that
    realnet-bulk-bw beside it is what realnet adds), quic-stream-bw,
    realnet-quic-bw, realnet-bulk-bw (TLS), realnet-plain-bw
    (--trusted-network), realnet-eager-bw (eager mode: rendezvous on TCP,
    TLS), realnet-local-bw (the bulk path over the local socket, against
    unix-bw)

The TCP paths and the harness rungs connect over TCP, as ranks on
different hosts do (--no-local-sockets), so that they compare with raw TCP
and Open MPI over TCP; the local rungs measure the Unix socket that ranks
on one host use by default.

Raw quic-go runs with realnet's TLS and QUIC settings. Run it from the root
of a checkout for the Open MPI rung (or give --ompi).

Flags:
  --rounds N       timed round trips per latency rung (default 2000)
  --warmup W       untimed round trips first (default 200)
  --bw-bytes S     message of the bandwidth rungs (default 16MiB)
  --bw-rounds N    timed transfers per bandwidth rung (default 8)
  --iters N        timed iterations of the nexar-live rungs (default 1000);
                   Open MPI runs 10 times as many, back to back
  --repeat K       K passes over the whole ladder, each rung's rounds pooled
                   (a shared machine's drifting load then falls on all alike)
  --only LIST      comma-separated rungs to run (default all)
  --ompi FILE      the Open MPI script (default scripts/ompi-allreduce/run.sh;
                   "" skips the rung)
  --gloo FILE      the Gloo script (default scripts/gloo-allreduce/run.sh)
  --python FILE    the Python with torch for it (default /usr/bin/python3)
  --csv FILE       also write the rungs as CSV (latency in s, bandwidth in B/s)
  --profile DIR    write CPU profiles of both processes to DIR (go tool pprof)

Example:
  go run ./cmd/nexar-live ladder
  go run ./cmd/nexar-live ladder --only quic-msg,realnet-quic --rounds 5000
`,
	"step": `Usage: nexar-live step --np N SCENARIO.toml --out DIR [--iters K] [--warmup W]
                       [--model MODEL.toml] [--timeout D] [transport flags]

Measures the training steps of the scenario's [workload] on N rank
processes of this machine, started, joined and watched as 'run' starts its
own (this executable, as 'nexar-live step-worker'; certificates from an
ephemeral CA; a crashed or hung rank is named and the others stopped;
Ctrl-C stops them all, exit status 130). Every point of the [workload]
whose layout has N ranks is measured (nexar-sim step's points: each
combination of the layouts, buckets, schedules, ZeRO stages and
algorithms it lists; the layouts of other sizes are left out).

Each rank runs package workload's program, the one nexar-sim step
simulates: a compute stream and a stream per kind of communication (each a
goroutine), the collectives on realnet. Compute is emulated at the stated
times by sleeping (a timerfd, precise to the kernel's wake-up), not by
spinning: a GPU's kernels leave the host's cores to the communication, and
a spinning rank would take the cores the ranks' transfers need (4 ranks on
2 cores). A piece of compute ends its stated time after the device would
have started it (when the compute before it was due to end, or when a wait
that held the stream up ended), so that late wakes do not add up.

Each point runs W untimed steps, then K timed ones, each started at an
instant all ranks agreed on (rank 0 hears every rank is ready, then sends
each the instant: the barrier between steps, without its skew). A step's
time is the slowest rank's, from that instant to the end of its streams.
The accounts of each step come from the ranks' stream records, timed from
the instant and sent to rank 0 after the step, through workload.Stats, as
nexar-sim's do: compute, exposed communication (the compute stream's waits
for each group's streams), bubble, idle, busy. A point's row is the median
over its K steps of each column.

Output in DIR:
  step.csv        nexar-sim step's columns (see 'nexar-sim help step'),
                  network = the scenario's name; messages = those all ranks
                  sent to each other in one step
  step_times.csv  every timed step: point,iteration,step_s,compute_s,exposed_s
  compare.csv     network,point,layout,bucket_bytes,algorithms,predicted_s,
                  measured_s,ratio (predicted/measured),predicted_compute_s,
                  measured_compute_s,predicted_exposed_s,measured_exposed_s:
                  the simulator's step on the scenario's [network], or
                  MODEL's with --model
  step.partial.csv  the points measured, when the run did not finish
and on stdout a line as each point is measured ("# measured point ..."),
then a table of the points, predicted against measured, with the median
|predicted/measured - 1| over them.

Flags:
  --np N          ranks (required)
  --out DIR       output directory (required)
  --iters K       timed steps per point (default 5)
  --warmup W      untimed steps before them (default 2)
  --model FILE    predict on this scenario's [network]: a model calibrated
                  on this machine, as 'nexar-live calibrate --out' writes
  --reuse         measure nothing: predict DIR/step.csv of an earlier run
                  again (with another --model)
  --timeout D, --bulk-threshold S, --eager-threshold S, --tuning FILE,
  --trusted-network, --oversubscribe   as for run

Example: calibrate loopback on the allreduce the buckets run, then predict
the step with it (live/examples/loopback-step.toml has both):
  nexar-live run --np 4 live/examples/loopback-step.toml --out cal/
  nexar-live calibrate --model shared-host,realnet cal/results.csv --out cal/model.toml
  nexar-live step --np 4 live/examples/loopback-step.toml --out step/ --model cal/model.toml
`,
	"help": `Usage: nexar-live help [COMMAND]

Shows help for COMMAND, or an overview.
`,
}
