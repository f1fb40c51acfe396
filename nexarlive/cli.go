package nexarlive

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/internal/cli"
	"github.com/nexar-go/nexar-go/internal/nccltests"
	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/live/launch"
	"github.com/nexar-go/nexar-go/realnet"
	"github.com/nexar-go/nexar-go/results"
	"github.com/nexar-go/nexar-go/scenario"
	"github.com/nexar-go/nexar-go/verify"
)

// Exit statuses.
const (
	exitOK    = cli.ExitOK
	exitWrong = 1             // the run finished, but some results were wrong
	exitUsage = cli.ExitUsage // bad input or usage; nothing was run
	exitRanks = 3             // a rank crashed, hung or failed; partial results at most
	// exitInterrupted is the shells' status of a command ended by SIGINT
	// (128 + 2): the user stopped it; partial results at most.
	exitInterrupted = 130
)

// cmdline is the command line: its name, help, and usage errors.
var cmdline = cli.Program{Name: "nexar-live", Help: mainHelp, CommandHelp: commandHelp}

// run is the whole command: it parses args (without the program name),
// writes to stdout and stderr, and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	return cmdline.Run(args, stdout, stderr, map[string]cli.Command{
		"run":       runCmd,
		"worker":    workerCmd,
		"compare":   compareCmd,
		"calibrate": calibrateCmd,
		"verify":    verifyCmd,
		"peer":      peerCmd,
		"ca":        caCmd,
		"ladder":    ladderCmd,
		"step":      stepCmd,
		"tune":      tuneCmd,
		// The rank processes of a step; not for users.
		"step-worker": stepWorkerCmd,
		// The other process of a ladder; not for users.
		"ladder-peer": ladderPeerCmd,
	})
}

// measureFlags are the flags of the commands that measure.
type measureFlags struct {
	warmup, iters int
	minTime       time.Duration
	maxIters      int
	timing        string
	timeout       time.Duration
	// thresholds are --bulk-threshold and --eager-threshold, nexar-live's
	// defaults where not given; config resolves them with --tuning.
	thresholds algos.Thresholds
	bulkSet    bool // --bulk-threshold was given: it wins over --tuning
	eagerSet   bool // --eager-threshold was given: it wins over --tuning
	tuning     string
	trusted    bool
	noLocal    bool
	minmax     bool // --minmax: min/avg/max columns (jsonout.go)
}

func (m *measureFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&m.warmup, "warmup", live.DefaultWarmup, "untimed iterations before the timed ones (0: none)")
	fs.IntVar(&m.iters, "iters", live.DefaultIters, "timed iterations per point")
	fs.IntVar(&m.iters, "n", live.DefaultIters, "nccl-tests' name of --iters")
	fs.IntVar(&m.warmup, "w", live.DefaultWarmup, "nccl-tests' name of --warmup")
	fs.IntVar(&m.warmup, "warmup_iters", live.DefaultWarmup, "nccl-tests' name of --warmup")
	fs.DurationVar(&m.minTime, "min-time", 0, "add timed iterations while a point's have taken less than this")
	fs.IntVar(&m.maxIters, "max-iters", 1000, "at most this many timed iterations with --min-time")
	fs.StringVar(&m.timing, "timing", string(live.TimingStart), `"start" (an agreed start per iteration, median) or "loop" (back to back after a barrier, mean, as nccl-tests)`)
	fs.BoolVar(&m.minmax, "minmax", false, "add the fastest, mean and slowest timed iteration of each point to the table and results (OSU's -f)")
	m.registerNet(fs)
}

// registerNet registers the flags of the transport and the timeout.
func (m *measureFlags) registerNet(fs *flag.FlagSet) {
	m.timeout = 2 * time.Minute
	fs.Func("timeout", "how long one collective may wait for its peers (a duration; a bare number is seconds, as nccl-tests' --timeout, whose 0 keeps the default)", func(v string) error {
		n, err := strconv.Atoi(v)
		switch {
		case err == nil && n == 0:
			return nil // nccl-tests' "no timeout": the default, a bound on a hang
		case err == nil && n > 0 && n <= 1e7:
			m.timeout = time.Duration(n) * time.Second // nccl-tests' whole seconds
			return nil
		case err == nil:
			return fmt.Errorf("%q: want seconds from 0 to 10000000", v)
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%q: want a duration such as 2m, or seconds", v)
		}
		m.timeout = d
		return nil
	})
	m.thresholds = algos.DefaultThresholds()
	fs.Func("bulk-threshold", `size from which messages take the TCP bulk path; "off" never (default `+algos.FormatBulkThreshold(algos.DefaultBulkThreshold)+`)`, func(v string) error {
		n, err := algos.ParseBulkThreshold(v)
		if err != nil {
			return err
		}
		m.thresholds.Bulk, m.bulkSet = n, true
		return nil
	})
	fs.Func("eager-threshold", `messages below this size go eagerly over TCP, larger ones by rendezvous on TCP; "off": QUIC for small messages (default off)`, func(v string) error {
		n, err := algos.ParseEagerThreshold(v)
		if err != nil || n > realnet.MaxEagerThreshold {
			return fmt.Errorf("want a size from 1 B to %d KiB, or \"off\"", realnet.MaxEagerThreshold>>10)
		}
		m.thresholds.Eager, m.eagerSet = n, true
		return nil
	})
	fs.StringVar(&m.tuning, "tuning", "", "tuning table whose [transport] bulk_threshold (and eager_threshold) the ranks use")
	fs.BoolVar(&m.trusted, "trusted-network", false, "send bulk payloads over plaintext TCP (QUIC stays encrypted)")
	fs.BoolVar(&m.noLocal, "no-local-sockets", false, "connect ranks on one host over TCP, as ranks on different hosts, not over Unix sockets")
}

func (m *measureFlags) options() (live.Options, error) {
	if m.iters < 1 {
		return live.Options{}, fmt.Errorf("--iters %d: want at least 1", m.iters)
	}
	if m.warmup < 0 {
		return live.Options{}, fmt.Errorf("--warmup %d: want 0 or more", m.warmup)
	}
	w := m.warmup
	if w == 0 {
		w = -1 // Options' zero means the default
	}
	if m.minTime < 0 {
		return live.Options{}, fmt.Errorf("--min-time %v: want 0 or more", m.minTime)
	}
	timing, err := live.ParseTiming(m.timing)
	if err != nil {
		return live.Options{}, fmt.Errorf("--timing: %v", err)
	}
	return live.Options{Warmup: w, Iters: m.iters, MinTime: m.minTime, MaxIters: m.maxIters, Timing: timing}, nil
}

func (m *measureFlags) config() (realnet.Config, error) {
	if m.timeout <= 0 {
		return realnet.Config{}, fmt.Errorf("--timeout %v: want a positive duration", m.timeout)
	}
	cfg := realnet.Config{
		Timeout:        m.timeout,
		PeerTimeout:    min(max(m.timeout/4, time.Second), 10*time.Second),
		TrustedNetwork: m.trusted,
		NoLocalSockets: m.noLocal,
		Thresholds:     m.thresholds,
	}
	if cfg.Thresholds.Bulk == 0 {
		cfg.Thresholds.Bulk = 1 // every message with a payload: 0 would mean realnet's default
	}
	if m.tuning != "" {
		t, err := algos.LoadTuning(m.tuning)
		if err != nil {
			return cfg, fmt.Errorf("--tuning: %w", err)
		}
		given := cfg.Thresholds
		cfg.ApplyTuning(t)
		if m.bulkSet {
			cfg.Thresholds.Bulk = given.Bulk
		}
		if m.eagerSet {
			cfg.Thresholds.Eager = given.Eager
		}
	}
	return cfg, nil
}

// workerArgs are the flags a launcher passes on to its workers, whose
// transport uses the thresholds t (config's, resolved).
func (m *measureFlags) workerArgs(t algos.Thresholds) []string {
	args := []string{
		"--warmup", strconv.Itoa(m.warmup), "--iters", strconv.Itoa(m.iters),
		"--min-time", m.minTime.String(), "--max-iters", strconv.Itoa(m.maxIters),
		"--timing", m.timing,
	}
	if m.minmax {
		args = append(args, "--minmax")
	}
	return append(args, m.netArgs(t)...)
}

// netArgs are the transport's flags a launcher passes on to its workers:
// the thresholds t it resolved from its own flags and --tuning, so that
// every rank uses them without reading the table again.
func (m *measureFlags) netArgs(t algos.Thresholds) []string {
	return []string{"--timeout", m.timeout.String(),
		"--bulk-threshold", algos.FormatBulkThreshold(t.Bulk), "--eager-threshold", algos.FormatEagerThreshold(t.Eager)}
}

// signalContext is cancelled by SIGINT and SIGTERM.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// checkEmulate refuses the transport thresholds with --emulate: the
// emulated network is QUIC only, so they would change nothing, and
// results.csv would record what was not used.
func (m *measureFlags) checkEmulate(emulate string) error {
	if (m.bulkSet || m.eagerSet) && emulate != "" {
		return errors.New("--bulk-threshold and --eager-threshold choose realnet's TCP paths, which --emulate's network (QUIC only) does not have: leave them out")
	}
	return nil
}

// runLine is nexar-live run's command line, read and checked.
type runLine struct {
	m         measureFlags
	rf        recoveryFlags
	mf        meshFlag
	nf        nccltests.Flags
	np        int
	out       string
	emulate   string
	device    string
	noCompare bool
	resume    bool
	// oversubscribe lets more ranks run than the guard allows (guard.go).
	oversubscribe bool
	// profile is --profile's directory, "" without it.
	profile string
	// em is --emulate's network, nil without it.
	em *live.Emulation
	// file is the scenario file; fromFlags says nccl-tests' flags
	// describe the sweep instead, and file is written from them (the
	// text flagsText), once every input is checked.
	file      string
	fromFlags bool
	flagsText []byte
	opt       live.Options
	cfg       realnet.Config
}

func runCmd(args []string, stdout, stderr io.Writer) int {
	l, status, ok := parseRun(args, stdout, stderr)
	if !ok {
		return status
	}
	s, job, status, ok := l.job(stderr)
	if !ok {
		return status
	}
	start, whole := time.Now(), job
	var res resumed
	if l.resume {
		var err error
		if res, err = l.resumeRows(job); err != nil {
			return cmdline.UsageError(stderr, "run", "--resume: %v", err)
		}
	}
	// Every input is checked: the run may write now.
	if l.profile != "" {
		if err := os.MkdirAll(l.profile, 0o777); err != nil {
			return cmdline.UsageError(stderr, "run", "--profile: %v", err)
		}
	}
	if l.fromFlags {
		if err := writeFlagsScenario(l.flagsText, l.file); err != nil {
			return cmdline.UsageError(stderr, "run", "%v", err)
		}
	}
	if l.resume {
		var done bool
		if job, status, done = l.resumeJob(s, job, res, start, stdout, stderr); done {
			return status
		}
	}
	ctx, stop := signalContext()
	defer stop()
	err := measure(ctx, measurement{np: l.np, file: l.file, s: s, job: job, out: l.out, m: l.m, cfg: l.cfg, emulate: l.em, noCompare: l.noCompare,
		device: l.device, recovery: &l.rf, mesh: &l.mf, resume: res, progress: newProgress(stderr, "run", s, whole, len(res.rows)), profile: l.profile}, stdout, stderr)
	status = finish(ctx, stderr, "run", l.out, start, err)
	if status == exitOK && !l.noCompare {
		if hint := runHint("run", l.file, l.out); hint != "" {
			fmt.Fprintln(stderr, hint)
		}
	}
	return status
}

// parseRun reads run's command line and checks its flags together; ok
// false returns status.
func parseRun(args []string, stdout, stderr io.Writer) (l *runLine, status int, ok bool) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	l = &runLine{}
	l.m.register(fs)
	l.rf.register(fs, true)
	l.mf.register(fs)
	fs.IntVar(&l.np, "np", 0, "number of ranks (the world size measured)")
	fs.StringVar(&l.out, "out", "", "output directory")
	fs.StringVar(&l.emulate, "emulate", "", "run the ranks in this process over an emulated network: latency=..,bandwidth=..")
	fs.BoolVar(&l.noCompare, "no-compare", false, "do not predict the points with the scenario's model")
	fs.BoolVar(&l.resume, "resume", false, "continue the run whose rows DIR/"+live.PartialResultsFile+" holds")
	fs.BoolVar(&l.oversubscribe, "oversubscribe", false, "run more ranks than the machine's cores and memory allow (mpirun's flag)")
	fs.StringVar(&l.profile, "profile", "", "write a CPU profile of each rank process into this directory (rank-N.pprof)")
	device := deviceFlag(fs)
	l.nf.Register(fs, defaultNetwork, true) // -c is taken: real runs always check
	pos, status, ok := cmdline.ParseCmd("run", fs, args, stdout, stderr)
	if !ok {
		return nil, status, false
	}
	l.device = *device
	l.fromFlags = len(pos) == 0 && len(l.nf.Given()) > 0
	usage := func(format string, a ...any) (*runLine, int, bool) {
		return nil, cmdline.UsageError(stderr, "run", format, a...), false
	}
	switch {
	case len(pos) == 1 && len(l.nf.Given()) > 0:
		return usage("%s: a scenario file describes the sweep; leave out %s", pos[0], strings.Join(l.nf.Given(), ", "))
	case len(pos) != 1 && !l.fromFlags:
		return usage("want one scenario file, or nccl-tests' flags such as -b 8 -e 64K -f 8; got %d arguments", len(pos))
	case l.nf.RanksPerProcess() > 1:
		return usage("-t %d -g %d: nexar-live runs one rank a process; give the ranks with --np and leave out -t and -g", max(l.nf.Threads, 1), max(l.nf.GPUs, 1))
	case !flagGiven(fs, "np"):
		return usage("missing --np N (the number of ranks)")
	case l.np < 1:
		return usage("--np %d: want at least 1 rank", l.np)
	case l.out == "":
		return usage("missing --out DIR")
	case l.emulate != "" && l.device != live.DeviceHost:
		return usage("--device %s runs each rank in a process of its own: leave out --emulate", l.device)
	case l.emulate != "" && l.profile != "":
		return usage("--profile writes a profile per rank process, and --emulate runs the ranks in this one: leave out one of them")
	}
	if len(pos) == 1 {
		l.file = pos[0]
	}
	if ig := l.nf.Ignored(); len(ig) > 0 {
		fmt.Fprintf(stderr, "nexar-live run: note: %s change nothing here: they say how nccl-tests runs on GPUs\n", strings.Join(ig, ", "))
	}
	if status, ok := checkDevice(stderr, "run", l.device); !ok {
		return nil, status, false
	}
	if _, _, err := l.rf.check(l.np); err != nil {
		return usage("%v", err)
	}
	if (l.rf.recovery != string(live.RecoveryAbort) || len(l.rf.kill) > 0) && l.emulate != "" {
		return usage("--recovery shrink and --kill need rank processes: leave out --emulate")
	}
	if l.resume && l.rf.recovery != string(live.RecoveryAbort) {
		return usage("--resume continues a run without --recovery shrink (whose rows change world size)")
	}
	if err := l.m.checkEmulate(l.emulate); err != nil {
		return usage("%v", err)
	}
	var err error
	if l.emulate != "" {
		e, err := live.ParseEmulation(l.emulate)
		if err != nil {
			return usage("--emulate: %v", err)
		}
		l.em = &e
	}
	if l.opt, err = l.m.options(); err != nil {
		return usage("%v", err)
	}
	if l.cfg, err = l.m.config(); err != nil {
		return usage("%v", err)
	}
	if err := l.mf.apply(&l.cfg, l.np); err != nil {
		return usage("--mesh: %v", err)
	}
	return l, exitOK, true
}

// job loads the scenario (from nccl-tests' flags, if they describe the
// sweep: its file is written only once every input is checked), makes the
// job of its points on l.np ranks and checks that the machine can run
// them (guard.go); it saves the rows that a run whose launcher was killed
// left in out.
func (l *runLine) job(stderr io.Writer) (*scenario.Scenario, *live.Job, int, bool) {
	var s *scenario.Scenario
	var err error
	if l.fromFlags {
		l.file = filepath.Join(l.out, flagsScenarioFile)
		if s, l.flagsText, err = flagsScenario(&l.nf, l.np, l.file); err != nil {
			return nil, nil, cmdline.UsageError(stderr, "run", "%v", err), false
		}
	} else if s, err = scenario.Load(l.file); err != nil {
		fmt.Fprintln(stderr, err)
		return nil, nil, exitUsage, false
	}
	job, err := live.NewJob(s, l.np, l.opt)
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live run: %v\n", err)
		return nil, nil, exitUsage, false
	}
	warning, err := guardRanks("run", l.np, rankBytes(job, l.em != nil), thisMachine(), l.oversubscribe)
	if err != nil {
		return nil, nil, cmdline.UsageError(stderr, "run", "%v", err), false
	}
	if warning != "" {
		fmt.Fprintln(stderr, warning)
	}
	if len(job.Skipped) > 0 {
		fmt.Fprintf(stderr, "nexar-live run: measuring world size %d only; leaving out the scenario's world sizes %v\n", l.np, job.Skipped)
	}
	// Rows a run whose launcher was killed left in a temporary file.
	saved, err := live.RecoverLeftovers(l.out)
	for _, p := range saved {
		fmt.Fprintf(stderr, "nexar-live run: an earlier run, whose launcher was killed, left rows in a temporary file: they are in %s now\n", p)
	}
	if err != nil {
		fmt.Fprintf(stderr, "nexar-live run: %v\n", err)
		return nil, nil, exitRanks, false
	}
	return s, job, exitOK, true
}

// resumeRows reads the rows --resume continues after, checking that they
// are the first points of job, measured as this run measures.
func (l *runLine) resumeRows(job *live.Job) (resumed, error) {
	used := l.cfg
	used.NoBulk = l.em != nil // the emulated network is QUIC only
	return resumeRun(job, l.out, used, l.device)
}

// resumeJob continues the run whose partial file in out holds res (read
// and checked by resumeRows): it returns the job of the points after
// them, or done with the status to exit with when the file holds every
// point (the run's outputs are then written from it).
func (l *runLine) resumeJob(s *scenario.Scenario, job *live.Job, res resumed, start time.Time, stdout, stderr io.Writer) (rest *live.Job, status int, done bool) {
	switch {
	case res.file == "":
		fmt.Fprintf(stderr, "nexar-live run: no %s in %s; starting from the first point\n", live.PartialResultsFile, l.out)
	case len(res.rows) == len(job.Points):
		fmt.Fprintf(stderr, "nexar-live run: %s holds all %d points already\n", res.file, len(job.Points))
		o := live.Output{Dir: l.out, Table: stdout, Scenario: s, Compare: runOutputs(comparer(l.noCompare), &l.m), MinMax: l.m.minmax, Device: l.device, Resume: res.rows, ResumeFile: res.file, Transport: res.rows[0].Transport()}
		_, err := live.FinishResumed(o)
		return job, finish(context.Background(), stderr, "run", l.out, start, err), true
	default:
		fmt.Fprintf(stderr, "nexar-live run: resuming after the %d points %s holds, of %d\n", len(res.rows), res.file, len(job.Points))
		var err error
		if job, err = job.From(len(res.rows)); err != nil {
			fmt.Fprintf(stderr, "nexar-live run: %v\n", err)
			return job, exitUsage, true
		}
	}
	return job, exitOK, false
}

// comparer is what a run holds its results against at its end: the
// scenario's model (verify.CompareRun: compare.csv and compare.png), or
// nothing with --no-compare.
func comparer(noCompare bool) func(*scenario.Scenario, string, io.Writer, []results.Row) ([]string, error) {
	if noCompare {
		return nil
	}
	return verify.CompareRun
}

// resumed is what --resume found: the rows of the first points of the
// job, and the partial file that holds them ("" if there was none).
type resumed struct {
	rows []live.Result
	file string
}

// measurement is one run: a scenario's job on np ranks, as processes on
// this machine or in this process over an emulated network.
type measurement struct {
	np        int
	file      string
	s         *scenario.Scenario
	job       *live.Job
	out       string
	m         measureFlags
	cfg       realnet.Config
	emulate   *live.Emulation
	noCompare bool
	device    string // --device
	recovery  *recoveryFlags
	mesh      *meshFlag
	resume    resumed // --resume: the rows of the points done already
	progress  *progress
	profile   string // --profile's directory, or ""
}

// measure runs it; rank 0 writes its outputs into out.
func measure(ctx context.Context, r measurement, stdout, stderr io.Writer) error {
	if r.emulate != nil {
		o := live.Output{Dir: r.out, Table: stdout, Scenario: r.s, Compare: runOutputs(comparer(r.noCompare), &r.m), MinMax: r.m.minmax, Resume: r.resume.rows, ResumeFile: r.resume.file,
			Started: r.progress.started}
		_, err := live.RunEmulated(ctx, *r.emulate, r.job, o, r.cfg)
		return err
	}
	wargs := append([]string{"worker", abs(r.file), "--out", abs(r.out)}, r.m.workerArgs(r.cfg.Thresholds)...)
	if len(r.resume.rows) > 0 {
		wargs = append(wargs, "--resume-from", strconv.Itoa(len(r.resume.rows)))
	}
	if r.noCompare {
		wargs = append(wargs, "--no-compare")
	}
	if r.device != "" && r.device != live.DeviceHost {
		wargs = append(wargs, "--device", r.device)
	}
	if r.recovery != nil {
		wargs = append(wargs, r.recovery.workerArgs()...)
	}
	if r.mesh != nil {
		wargs = append(wargs, r.mesh.workerArgs()...)
	}
	l, err := launcher(r.np, wargs, r.m, stdout, stderr)
	if err != nil {
		return err
	}
	if r.profile != "" {
		l.Command = profileWorkers(l.Command, abs(r.profile))
	}
	if r.recovery != nil {
		rec, hb, _ := r.recovery.check(r.np)
		r.recovery.apply(l, rec, hb)
	}
	if r.progress != nil {
		l.Progress = r.progress.started
	}
	return l.Run(ctx)
}

// launcher returns a launcher of np workers running this executable with
// wargs.
func launcher(np int, wargs []string, m measureFlags, stdout, stderr io.Writer) (*launch.Launcher, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return &launch.Launcher{
		NP:      np,
		Command: func(int) *exec.Cmd { return exec.Command(exe, wargs...) },
		// The workers report a lost or stuck peer after --timeout; the
		// launcher's own watchdog is for ranks stuck outside the network.
		Timeout:        m.timeout + 30*time.Second,
		Grace:          min(max(m.timeout/4, time.Second), 10*time.Second) + 10*time.Second,
		TrustedNetwork: m.trusted,
		NoLocalSockets: m.noLocal,
		Stdout:         stdout,
		Stderr:         stderr,
	}, nil
}

// finish reports the end of a run that started at since and returns its
// exit status: 130 when ctx ended (the user interrupted it), with what was
// measured in results.partial.csv. Rows that a rank 0 which did not
// finish left in a temporary file (it was killed, or lost in a shrinking
// run) are saved as a partial file first, and named.
func finish(ctx context.Context, stderr io.Writer, cmd, out string, since time.Time, err error) int {
	saved, serr := live.RecoverLeftovers(out)
	for _, p := range saved {
		fmt.Fprintf(stderr, "nexar-live %s: the rows measured by a rank 0 that did not finish are in %s\n", cmd, p)
	}
	if serr != nil {
		fmt.Fprintf(stderr, "nexar-live %s: saving the rows of a rank 0 that did not finish: %v\n", cmd, serr)
	}
	if err == nil {
		// A launcher's workers cannot tell it of wrong data but by the
		// results file.
		rs, rerr := live.ReadResultsFile(filepath.Join(out, live.ResultsFile))
		if rerr != nil {
			fmt.Fprintf(stderr, "nexar-live %s: %v\n", cmd, rerr)
			return exitRanks
		}
		var wrong int64
		for _, r := range rs {
			wrong += max(r.Wrong, 0)
		}
		if wrong > 0 {
			err = &live.WrongDataError{Wrong: wrong}
		}
	}
	switch {
	case err == nil:
		fmt.Fprintf(stderr, "nexar-live %s: wrote %s\n", cmd, filepath.Join(out, live.ResultsFile))
		return exitOK
	case live.IsWrongData(err):
		fmt.Fprintf(stderr, "nexar-live %s: %v\n", cmd, err)
		return exitWrong
	}
	status := exitRanks
	if ctx.Err() != nil {
		err, status = errors.New("interrupted"), exitInterrupted
	}
	fmt.Fprintf(stderr, "nexar-live %s: %v\n", cmd, err)
	// Only this run's partial file: one an earlier run left is not what
	// this one measured.
	partial := filepath.Join(out, live.PartialResultsFile)
	if info, statErr := os.Stat(partial); statErr == nil && !info.ModTime().Before(since) {
		again := ""
		if cmd == "run" {
			again = "; run again with --resume to continue from there"
		}
		fmt.Fprintf(stderr, "nexar-live %s: what was measured before is in %s%s\n", cmd, partial, again)
	}
	return status
}

func workerCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	var m measureFlags
	m.register(fs)
	var rf recoveryFlags
	rf.register(fs, false)
	var mf meshFlag
	mf.register(fs)
	out := fs.String("out", "", "output directory (rank 0 writes there)")
	noCompare := fs.Bool("no-compare", false, "do not predict the points with the scenario's model")
	resumeFrom := fs.Int("resume-from", 0, "continue a run after its first N points, whose rows rank 0's DIR/"+live.PartialResultsFile+" holds")
	profile := fs.String("profile", "", "write this process's CPU profile to this file")
	device := deviceFlag(fs)
	pos, status, ok := cmdline.ParseCmd("worker", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	switch {
	case len(pos) != 1:
		return cmdline.UsageError(stderr, "worker", "want one scenario file, got %d arguments", len(pos))
	case *out == "":
		return cmdline.UsageError(stderr, "worker", "missing --out DIR")
	case *resumeFrom < 0:
		return cmdline.UsageError(stderr, "worker", "--resume-from %d: want 0 or more points", *resumeFrom)
	}
	opt, err := m.options()
	if err != nil {
		return cmdline.UsageError(stderr, "worker", "%v", err)
	}
	cfg, err := m.config()
	if err != nil {
		return cmdline.UsageError(stderr, "worker", "%v", err)
	}
	mf.apply(&cfg, 0)
	if status, ok := checkDevice(stderr, "worker", *device); !ok {
		return status
	}
	recovery, hb, err := rf.check(0)
	if err != nil {
		return cmdline.UsageError(stderr, "worker", "%v", err)
	}
	if *profile != "" {
		stop, err := cli.StartCPUProfile(*profile)
		if err != nil {
			return cmdline.UsageError(stderr, "worker", "--profile: %v", err)
		}
		defer func() {
			if err := stop(); err != nil {
				fmt.Fprintf(stderr, "nexar-live worker: --profile: %v\n", err)
			}
		}()
		f, err := os.Create(cpuFile(*profile))
		if err != nil {
			return cmdline.UsageError(stderr, "worker", "--profile: %v", err)
		}
		defer f.Close()
		opt.CPU = f
	}
	var statusW io.Writer
	if f, err := launch.OpenStatusPipe(); err != nil {
		return cmdline.UsageError(stderr, "worker", "%v", err)
	} else if f != nil {
		defer f.Close()
		statusW = f
	}
	ctx, stop := signalContext()
	defer stop()
	rep, err := live.Worker(ctx, live.WorkerConfig{
		Scenario: pos[0], Options: opt, Net: cfg, Status: statusW,
		Output:      live.Output{Dir: *out, Table: stdout, Compare: runOutputs(comparer(*noCompare), &m), MinMax: m.minmax},
		JoinTimeout: m.timeout, Device: *device, Recovery: recovery, Heartbeat: hb, Elastic: rf.maxNP > 0,
		ResumeFrom: *resumeFrom,
	})
	if rep != nil {
		// A prediction the model could not make leaves no compare.csv:
		// say why rather than leave the user looking for it.
		for _, w := range rep.Warnings {
			fmt.Fprintf(stderr, "nexar-live worker: warning: %s\n", strings.ReplaceAll(w, "\n", "\n  "))
		}
	}
	switch {
	case err == nil:
		return exitOK
	case live.IsWrongData(err):
		return exitWrong
	}
	fmt.Fprintf(stderr, "nexar-live worker: %s\n", strings.ReplaceAll(err.Error(), "\n", "\n  "))
	if ctx.Err() != nil {
		return exitInterrupted
	}
	return exitRanks
}

func caCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ca", flag.ContinueOnError)
	job := fs.String("job", "nexar", "job the certificates are for: a peer of another job is refused")
	ranks := fs.Int("ranks", 0, "issue one certificate per rank, 0 to N-1, each good for its rank only (0: one certificate good for any rank of the job)")
	overwrite := fs.Bool("overwrite", false, "replace existing files (default: refuse to write over them)")
	pos, status, ok := cmdline.ParseCmd("ca", fs, args, stdout, stderr)
	if !ok {
		return status
	}
	if len(pos) != 1 {
		return cmdline.UsageError(stderr, "ca", "want one directory, got %d arguments", len(pos))
	}
	if *ranks < 0 {
		return cmdline.UsageError(stderr, "ca", "--ranks %d: want 0 or more", *ranks)
	}
	if err := realnet.CheckJob(*job); err != nil {
		return cmdline.UsageError(stderr, "ca", "--job: %v", err)
	}
	if err := os.MkdirAll(pos[0], 0o700); err != nil {
		return cmdline.UsageError(stderr, "ca", "%v", err)
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "nexar-live ca: %v\n", err)
		return exitRanks
	}
	ca, err := realnet.NewCA()
	if err != nil {
		return fail(err)
	}
	caFile, err := ca.WriteCA(pos[0], *overwrite)
	if err != nil {
		return fail(err)
	}
	if *ranks == 0 {
		cert, key, err := ca.WriteCredentials(pos[0], realnet.JobIdentity(*job), *overwrite)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "export NEXAR_CA=%s NEXAR_CERT=%s NEXAR_KEY=%s\n", abs(caFile), abs(cert), abs(key))
		return exitOK
	}
	var cert, key string
	for r := range *ranks {
		if cert, key, err = ca.WriteCredentials(pos[0], realnet.RankIdentity(*job, r), *overwrite); err != nil {
			return fail(err)
		}
	}
	// Each rank takes its own: the launcher's rank replaces {rank}.
	tmpl := func(p string) string {
		return strings.Replace(abs(p), fmt.Sprintf("-rank%d", *ranks-1), "-rank{rank}", 1)
	}
	fmt.Fprintf(stdout, "export NEXAR_CA=%s NEXAR_CERT=%s NEXAR_KEY=%s\n", abs(caFile), tmpl(cert), tmpl(key))
	return exitOK
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
