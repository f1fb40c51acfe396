// Package scenario reads scenario files: TOML descriptions of a simulated
// network and of the sweeps of collectives to run on it, which the
// nexar-sim command (and package sweep) turn into measurements.
//
// A scenario file looks like this:
//
//	name = "example"
//	seed = 1                      # seeds the inputs of data = "host" runs
//
//	[network]
//	model = "alpha-beta"
//	latency = "5us"               # alpha: ps, ns, us, ms, s
//	bandwidth = "12.5GB/s"        # 1/beta: B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s, Gbit/s, ...
//	reduce_bandwidth = "25GB/s"   # 1/gamma; optional, "inf" (free) by default
//
//	[[sweep]]
//	collective = "allreduce"
//	algorithms = ["ring"]
//	world = [2, 3, 8, "16..64 x2"]
//	bytes = [0, 1024, "8MiB", "1KiB..1GiB x4"]
//	dtype = "f32"                 # default f32
//	op = "sum"                    # default sum
//	data = "phantom"              # default; or "host": move and check real data
//
// A file may hold several [[sweep]] tables. Parse and Load validate
// everything that can be checked without running anything: units, names
// against the algos catalogue and the network models, world sizes, sizes
// that are whole numbers of elements, unknown and missing keys. They
// report every problem at once as Errors, each naming its file, line and
// key.
//
// Network models are listed by Models; adding one means adding an entry to
// the models table in model.go.
package scenario
