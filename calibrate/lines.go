package calibrate

import (
	"cmp"
	"regexp"
	"strconv"
	"strings"
)

var (
	// launcherPrefix is what launchers put before each line of a rank's
	// output: Open MPI's --tag-output ("[1,0]<stdout>:"), Slurm's srun
	// --label (" 0: "), MPICH's -prepend-rank ("[0] "), torchrun's tee
	// ("[default0]:"), and kubectl logs --prefix ("[pod/name/c] ").
	launcherPrefix = regexp.MustCompile(`^(?:\[\d+,\d+\]<std(?:out|err)>:|\d+:(?:\s|$)|\[\d+\]\s|\[default\d+\]:|\[pod/[^\]]*\]\s?)`)
	// quoteMarkers are Markdown's and e-mail's quote markers.
	quoteMarkers = regexp.MustCompile(`^(?:>[ \t]?)+`)
	// terminalEscapes are the colour codes of a terminal session kept in
	// a file.
	terminalEscapes = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")
)

// cleanLine returns a benchmark's own text of a line of a log as people
// keep them: without the launcher's prefix, a document's indentation and
// quote markers (in any order), terminal colour codes and trailing
// blanks. Lines a benchmark printed are returned unchanged but for
// leading blanks.
func cleanLine(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = terminalEscapes.ReplaceAllString(s, "")
	}
	for range 8 {
		t := strings.TrimLeft(s, " \t")
		t = quoteMarkers.ReplaceAllString(t, "")
		if loc := launcherPrefix.FindStringIndex(t); loc != nil {
			t = t[loc[1]:]
		}
		if t == s {
			break
		}
		s = t
	}
	return s
}

// hints are what the lines before a run say about it that the
// benchmark's own output may not: the benchmark's binary, and the number
// of processes the launcher started (its command line, a batch script's
// directives, Slurm's environment).
type hints struct {
	// benchmark is the binary a line names ("all_reduce_perf",
	// "osu_bw"), and benchmarkLine that line.
	benchmark     string
	benchmarkLine int
	// procs is the number of processes the last launcher's command line
	// starts (-np and its kin, or nodes x processes per node; 0 if it
	// gives no count), procsFrom that line; envProcs is what Slurm's
	// environment, as a job prints it, says (SLURM_NTASKS), envFrom that
	// line.
	procs, envProcs    int
	procsFrom, envFrom string
	// dtype is an OSU -T/--type value, window an OSU -W value.
	dtype  string
	window int
	// nodes are the nodes the last launch spans (srun -N, or its
	// processes over those a node), 0 where it does not say;
	// launchedByMPI is whether an MPI launcher (not srun) made it.
	nodes         int
	launchedByMPI bool
	// threads and gpus are an nccl-tests binary's own -t and -g (0 where
	// its command line does not give them), gpusLine that line: the
	// ranks of a process where its output has no "# nThread" line.
	threads, gpus, gpusLine int
	// env are the NCCL_ALGO and NCCL_PROTO a command line sets for its
	// run ("-x NCCL_ALGO=Tree", "NCCL_ALGO=Tree ./all_reduce_perf").
	env ncclEnv
	// batch are a batch script's directives (#SBATCH) and its exports,
	// which hold for every run after them.
	batch batchHints
}

type batchHints struct {
	procs, nodes, perNode int
	from                  string
	env                   ncclEnv // "export NCCL_ALGO=Tree"
}

// ncclEnv are the values of NCCL_ALGO and NCCL_PROTO lines set, and the
// line that set each ("" and 0 where none did).
type ncclEnv struct {
	algo, proto         string
	algoLine, protoLine int
}

// set takes the assignments of NCCL_ALGO and NCCL_PROTO in line n into e,
// and reports whether there were any.
func (e *ncclEnv) set(line string, n int) bool {
	found := false
	line = strings.ReplaceAll(line, ",NCCL_", " NCCL_") // srun --export's list
	for _, m := range ncclAssign.FindAllStringSubmatch(line, -1) {
		name, v := cmp.Or(m[1], m[6]), m[2]+m[3]+m[4]+m[5]+m[7]
		if loc := nextAssign.FindStringIndex(m[4]); loc != nil {
			v = m[4][:loc[0]] // "--export=ALL,NCCL_ALGO=Ring,Tree,NCCL_PROTO=Simple"
		}
		v = strings.TrimRight(v, ",.;")
		if v == "" || strings.ContainsAny(v, "$`") {
			continue // "echo NCCL_ALGO=$NCCL_ALGO", "grep NCCL_ALGO=": no value
		}
		if name == "ALGO" {
			e.algo, e.algoLine = v, n
		} else {
			e.proto, e.protoLine = v, n
		}
		found = true
	}
	return found
}

// over returns e with what o sets on top.
func (e ncclEnv) over(o ncclEnv) ncclEnv {
	if o.algoLine > 0 {
		e.algo, e.algoLine = o.algo, o.algoLine
	}
	if o.protoLine > 0 {
		e.proto, e.protoLine = o.proto, o.protoLine
	}
	return e
}

// next returns the hints that outlive a run: a batch script's.
func (h hints) next() hints { return hints{batch: h.batch} }

// nodeCount is the number of nodes the hints give: the launch's, else
// the batch directives' for a launch by srun (an MPI launcher fills a
// node's slots before the next); 0 if they do not say.
func (h hints) nodeCount() int {
	if h.nodes > 0 || h.launchedByMPI {
		return h.nodes
	}
	return h.batch.nodes
}

// processes is the number of processes the hints give, 0 if they do
// not, and where it comes from.
func (h hints) processes() (int, string) {
	b := h.batch
	switch {
	case h.procs > 0:
		return h.procs, h.procsFrom
	case h.envProcs > 0:
		return h.envProcs, h.envFrom
	case b.procs > 0:
		return b.procs, b.from
	case b.nodes > 0 && b.perNode > 0:
		return b.nodes * b.perNode, b.from
	}
	return 0, ""
}

var (
	// binaryName finds the benchmark binaries of nccl-tests (and its
	// forks) and OSU in a line: "./build/all_reduce_perf",
	// "osu_allreduce".
	binaryName = regexp.MustCompile(`(?:^|[\s/'"=])((?:[a-z0-9]+_)*[a-z0-9]+_perf(?:_mpi)?|osu_[a-z0-9_]+)\b`)
	// launcherWord finds a launcher in a command line, with the suffix of
	// a distribution's name for it ("mpirun.mpich", "mpiexec.hydra",
	// "mpirun.openmpi").
	launcherWord = regexp.MustCompile(`(?:^|[\s/'"])(mpirun|mpiexec|orterun|prterun|srun|aprun|flux\s+(?:run|submit))((?:\.[A-Za-z0-9_]+)?)(?:\s|$)`)
	// slurmTasks is Slurm's environment, as job scripts print it.
	slurmTasks = regexp.MustCompile(`\bSLURM_(?:NTASKS|NPROCS)=(\d+)\b`)
	// batchDirective is a batch script's directive.
	batchDirective = regexp.MustCompile(`^#(?:SBATCH|PBS|FLUX:)\s+(.*)$`)
	// ncclAssign finds NCCL_ALGO or NCCL_PROTO set on a command line or
	// an export: "-x NCCL_ALGO=Tree" (Open MPI), "NCCL_ALGO=Tree
	// ./all_reduce_perf", "export NCCL_PROTO='^LL128'",
	// "--export=ALL,NCCL_ALGO=Ring" (srun), "-genv NCCL_ALGO Tree" (Hydra).
	ncclAssign = regexp.MustCompile(`(?:^|[\s,'"=])NCCL_(ALGO|PROTO)=(?:"([^"]*)"|'([^']*)'|([^\s'"]+)|())|-genv\s+NCCL_(ALGO|PROTO)\s+(\S+)`)
	// nextAssign is where srun's --export list goes on past a bare
	// value: ",NAME=".
	nextAssign = regexp.MustCompile(`,[A-Z_][A-Z0-9_]*=`)
	// utilityProgram finds, in a launcher's command line that names no
	// benchmark, a program that only looks around ("mpirun -N 1 bash -c
	// 'echo $(hostname)'", "srun nvidia-smi") before the benchmark's own
	// launch: its counts are not the benchmark's. A shell's -c counts as
	// one only when its command is such a program: a wrapper of the
	// benchmark ("bash -c \", its command on the next line) is a launch.
	utilityProgram = regexp.MustCompile(`(?:^|[\s/'"])(?:(?:ba|z|c|tc)?sh\s+-c\s+['"]\s*)?(?:hostname|nvidia-smi|rocm-smi|echo|printenv|uname|date|sleep|true|cat|ls|ibstat|ibv_devinfo|ulimit|nproc|lscpu|free|df|modprobe|mkdir|rm|cp|scp|rsync)(?:\s|$|['";])`)
)

// isCommandLine reports whether l runs a launcher: a line after which a
// new run begins.
func isCommandLine(l string) bool { return launcherWord.MatchString(l) }

// scan reads what line n (cleaned) says into h, and reports whether it
// said anything.
func (h *hints) scan(line string, n int) bool {
	found := false
	if t := strings.TrimSpace(line); strings.Contains(t, "NCCL_") {
		// Only where a shell sets it: an export, an assignment that
		// starts the line (a command's prefix, or env's listing), a
		// launch or the benchmark's command line; not prose.
		switch {
		case strings.HasPrefix(t, "export "):
			found = h.batch.env.set(line, n)
		case strings.HasPrefix(t, "NCCL_") || strings.HasPrefix(t, "$ ") || launcherWord.MatchString(t) || binaryName.MatchString(t):
			found = h.env.set(line, n)
		}
	}
	if m := binaryName.FindAllStringSubmatchIndex(line, -1); m != nil {
		last := m[len(m)-1]
		h.benchmark, h.benchmarkLine = line[last[2]:last[3]], n
		if strings.Contains(h.benchmark, "_perf") {
			// Only a line that gives them: the binary's own messages
			// ("all_reduce_perf: libnl-3.so: no version information")
			// name it too.
			if t, g := perfRanks(strings.Fields(line[last[3]:])); t > 0 || g > 0 {
				h.threads, h.gpus, h.gpusLine = t, g, n
			}
		}
		found = true
	}
	if m := slurmTasks.FindStringSubmatch(line); m != nil {
		if v := positive(m[1]); v > 0 {
			h.envProcs, h.envFrom = v, describeLine(n, m[0])
			found = true
		}
	}
	if m := batchDirective.FindStringSubmatch(line); m != nil {
		f := launcherFlags("srun", strings.Fields(m[1]))
		b := &h.batch
		if f.procs > 0 {
			b.procs = f.procs
		}
		if f.nodes > 0 {
			b.nodes = f.nodes
		}
		if f.perNode > 0 {
			b.perNode = f.perNode
		}
		if f.procs > 0 || f.nodes > 0 || f.perNode > 0 {
			b.from = describeLine(n, line)
			found = true
		}
		return found
	}
	loc := launcherWord.FindStringSubmatchIndex(line)
	if loc == nil {
		return found
	}
	rest := line[loc[5]:] // past the launcher's name and suffix
	if !binaryName.MatchString(line) && utilityProgram.MatchString(rest) {
		return found // not the benchmark's launch
	}
	f := launcherFlags(strings.Fields(line[loc[2]:loc[3]])[0], strings.Fields(rest))
	procs := f.procs
	if procs == 0 && (f.nodes > 0 || f.perNode > 0) {
		nodes, perNode := cmp.Or(f.nodes, h.batch.nodes), cmp.Or(f.perNode, h.batch.perNode)
		procs = nodes * perNode
	}
	// The last launch counts: one that gives no count of its own starts
	// what Slurm's environment or the batch directives say. A line that
	// only names a launcher ("mpirun noticed that process rank 3 ...",
	// "mpirun (Open MPI) 4.1.5") launches nothing.
	if procs > 0 || launches(rest) {
		h.procs, h.procsFrom = procs, ""
		if procs > 0 {
			h.procsFrom = describeLine(n, line)
		}
		// Its nodes: srun's -N, or processes over those a node.
		launcher := strings.Fields(line[loc[2]:loc[3]])[0]
		h.nodes, h.launchedByMPI = f.nodes, launcher != "srun" && launcher != "flux"
		if perNode := cmp.Or(f.perNode, h.batch.perNode); h.nodes == 0 && procs > 0 && perNode > 0 && procs%perNode == 0 {
			h.nodes = procs / perNode
		}
	}
	if f.dtype != "" {
		h.dtype = f.dtype
	}
	if f.window > 0 {
		h.window = f.window
	}
	return true
}

// launches reports whether what follows a launcher's name is a launch:
// a flag, a benchmark, or a line continued on the next.
func launches(rest string) bool {
	for _, f := range strings.Fields(rest) {
		if strings.HasPrefix(f, "-") || f == "\\" {
			return true
		}
	}
	return binaryName.MatchString(rest) || strings.HasSuffix(strings.TrimSpace(rest), "\\")
}

// flags are what a launcher's command line says.
type flags struct {
	procs, nodes, perNode int
	dtype                 string
	window                int
}

// launcherFlags reads a launcher's flags, up to the program it starts,
// and the benchmark's flags after it.
func launcherFlags(launcher string, args []string) flags {
	var f flags
	// value returns the value of flag args[i] (in the next argument, or
	// after "=" or glued to a short flag) and how many arguments it took.
	value := func(i int, name string) (string, int, bool) {
		a := args[i]
		switch {
		case a == name:
			if i+1 < len(args) {
				return args[i+1], 2, true
			}
		case strings.HasPrefix(a, name+"="):
			return a[len(name)+1:], 1, true
		case len(name) == 2 && strings.HasPrefix(a, name) && len(a) > 2 && a[2] >= '0' && a[2] <= '9':
			return a[2:], 1, true
		}
		return "", 1, false
	}
	mpi := launcher != "srun" && launcher != "flux"
	perNodeFlags := []string{"--ntasks-per-node", "--tasks-per-node", "-npernode", "--npernode", "-ppn", "--ppn"}
	i := 0
	for i < len(args) {
		a := args[i]
		if !strings.HasPrefix(a, "-") && binaryName.MatchString(" "+a) {
			i++
			break // the program: its own flags follow
		}
		took := 1
		for _, name := range []string{"-np", "--np", "-n", "--n", "--ntasks", "-c", "--nodes", "-N", "--map-by"} {
			v, t, ok := value(i, name)
			if !ok || name == "-c" && !mpi { // srun's -c is CPUs per task
				continue
			}
			took = t
			switch {
			case name == "--nodes" || name == "-N" && !mpi:
				f.nodes = positive(v)
			case name == "-N":
				f.perNode = positive(v) // Open MPI's -N: processes per node
			case name == "--map-by":
				// ppr:N:node places N processes per node.
				if p := strings.Split(v, ":"); len(p) >= 3 && p[0] == "ppr" && p[2] == "node" {
					f.perNode = positive(p[1])
				}
			default:
				f.procs = positive(v)
			}
			break
		}
		for _, name := range perNodeFlags {
			if v, t, ok := value(i, name); ok {
				f.perNode, took = positive(v), t
			}
		}
		i += took
	}
	for ; i < len(args); i++ {
		for _, name := range []string{"-T", "--type"} {
			if v, _, ok := value(i, name); ok && v != "" && !strings.HasPrefix(v, "-") {
				f.dtype = v
			}
		}
		for _, name := range []string{"-W", "--window-size"} {
			if v, _, ok := value(i, name); ok {
				f.window = positive(v)
			}
		}
	}
	return f
}

// perfRanks reads an nccl-tests binary's -t/--nthreads and -g/--ngpus
// from its arguments (as getopt takes them: "-g 8", "-g8", "--ngpus=8"),
// 0 for each it does not give.
func perfRanks(args []string) (threads, gpus int) {
	for i, a := range args {
		for _, f := range []struct {
			short, long string
			v           *int
		}{{"-t", "--nthreads", &threads}, {"-g", "--ngpus", &gpus}} {
			switch {
			case a == f.short || a == f.long:
				if i+1 < len(args) {
					*f.v = positive(args[i+1])
				}
			case strings.HasPrefix(a, f.long+"="):
				*f.v = positive(a[len(f.long)+1:])
			case len(a) > 2 && strings.HasPrefix(a, f.short) && a[2] >= '0' && a[2] <= '9':
				*f.v = positive(a[2:])
			}
		}
	}
	return threads, gpus
}

// positive reads a whole number from 1 to 2^24, 0 otherwise.
func positive(s string) int {
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || v > 1<<24 {
		return 0
	}
	return v
}

// describeLine names line n by its number and, shortened, its text.
func describeLine(n int, text string) string {
	text = strings.TrimSpace(text)
	if len(text) > 60 {
		text = text[:57] + "..."
	}
	return "line " + strconv.Itoa(n) + ": " + text
}
