package main

// exampleScenario is the scenario the help teaches the schema with.
const exampleScenario = `name = "example"
description = "ring allreduce on a 100 Gbit/s-class network"
seed = 1                        # seeds the inputs of data = "host" runs

[network]
model = "alpha-beta"
latency = "5us"                 # alpha: ps, ns, us, ms, s
bandwidth = "12.5GB/s"          # 1/beta: B/s, KB/s, MB/s, GB/s, TB/s (10^3 steps),
                                # KiB/s, MiB/s, GiB/s, TiB/s (2^10), Mbit/s, Gbit/s, Tbit/s
reduce_bandwidth = "25GB/s"     # 1/gamma; optional, "inf" (free) by default

[[sweep]]                       # one table per sweep; a file may have several
collective = "allreduce"        # see 'nexar-sim list'
algorithms = ["ring"]           # run each of them at every world and size
world = [2, 3, 8, "16..64 x2"]  # ranks; "A..B xF" multiplies by F, "A..B +S" adds S
bytes = [0, 1024, "8MiB", "1KiB..1GiB x4"]   # per rank, as nccl-tests counts
dtype = "f32"                   # default f32: f16 bf16 f32 f64 i8..i64 u8..u64
op = "sum"                      # default sum: sum prod min max
data = "phantom"                # default; "host" moves real bytes and checks them
                                # (collectives that have a check: see 'nexar-sim list')
# root = 0                      # root rank of rooted collectives
# params = { segment = "64KiB" }  # algorithm parameters, see 'nexar-sim list'
`

const mainHelp = `nexar-sim simulates collective-communication algorithms on a modelled
network and writes what they would take, as nccl-tests reports it.

Usage:
  nexar-sim run SCENARIO.toml --out DIR [--quiet]
  nexar-sim validate SCENARIO.toml...
  nexar-sim list
  nexar-sim help [COMMAND]

Commands:
  run       simulate every point of a scenario and write DIR/results.csv
  validate  check scenario files and list every problem in them
  list      show the collectives, algorithms and network models available
  help      show help for a command

Exit status: 0 on success; 1 when a simulation fails (deadlock, wrong data);
2 for bad input or usage, in which case nothing is written.

A scenario file (TOML) names a network and sweeps to run on it:

` + exampleScenario + `
Example:
  nexar-sim validate scenarios/scenarios.toml
  nexar-sim run scenarios/scenarios.toml --out results/
`

var commandHelp = map[string]string{
	"run": `Usage: nexar-sim run SCENARIO.toml --out DIR [--quiet]

Validates the scenario, then simulates each point (collective, algorithm,
world size, message size) in order: sweep by sweep, then algorithm, world
and size as listed. Writes DIR/results.csv (creating DIR if needed) only
when every point has run; bad input writes nothing and exits 2, a failed
simulation (deadlock, wrong data) exits 1.

The CSV has one row per point:

  collective,algorithm,world,bytes,dtype,time_s,algbw_gbps,busbw_gbps
  allreduce,ring,8,8388608,f32,0.0015380064,5.45...,9.54...

bytes is the size run, after the collective's rounding (as nccl-tests);
time_s the simulated time until the last rank finished; algbw = bytes /
time_s / 1e9 and busbw = algbw times the collective's bus factor (0 when
bytes or time is 0).

Flags:
  --out DIR   directory for results.csv (required)
  --quiet     no progress lines on stderr (also -q)

Example scenario:

` + exampleScenario + `
Example:
  nexar-sim run scenarios/scenarios.toml --out results/
`,
	"validate": `Usage: nexar-sim validate SCENARIO.toml...

Checks scenario files without simulating anything, and lists every problem
as FILE:LINE: KEY: MESSAGE: TOML syntax, unknown or missing keys, unknown
models, collectives, algorithms, dtypes and ops, bad units and sizes, sizes
that are not a whole number of elements, world sizes below 1. Exits 2 if
any file has a problem.

For example, a file whose sweep, from line 9, reads

  [[sweep]]
  collective = "allreduce"
  algorithms = ["rign"]
  world = [0, 8]
  bytes = ["1KiB..1MiB x2", 6]
  dtype = "f32"

gives

  s.toml:11: sweep[0].algorithms: unknown allreduce algorithm "rign" (want one of ring, ...)
  s.toml:12: sweep[0].world: element 1: world size 0 is out of range (want 1 to 1048576 ranks)
  s.toml:13: sweep[0].bytes: 6: not a multiple of the f32 element size (4 bytes)

Example:
  nexar-sim validate scenarios/*.toml
`,
	"list": `Usage: nexar-sim list

Lists the collectives of the algorithm catalogue with their algorithms and
the algorithms' parameters (set them in a sweep with params = { name = value }),
and the network models a scenario's [network] table may name, with their keys.

Example:
  nexar-sim list
`,
	"help": `Usage: nexar-sim help [COMMAND]

Shows help for COMMAND (run, validate, list), or an overview with an example
scenario file.

Example:
  nexar-sim help run
`,
}
