package ladder

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/internal/cli"
	"github.com/nexar-go/nexar-go/live"
	"github.com/nexar-go/nexar-go/live/launch"
	"github.com/nexar-go/nexar-go/realnet"
)

// EagerThreshold is the eager threshold of the eager rungs.
const EagerThreshold = 64 << 10

// Defaults of Options.
const (
	DefaultRounds   = 2000
	DefaultWarmup   = 200
	DefaultBWBytes  = 16 << 20
	DefaultBWRounds = 8
	DefaultIters    = 1000
)

// Options say what the ladder measures and how long.
type Options struct {
	// Rounds is the number of timed round trips of each latency rung,
	// after Warmup untimed ones (defaults DefaultRounds, DefaultWarmup).
	Rounds, Warmup int
	// BWBytes is the message of the bandwidth rungs, timed BWRounds times
	// after one untimed transfer (defaults DefaultBWBytes,
	// DefaultBWRounds).
	BWBytes, BWRounds int
	// Repeat runs the whole ladder this many times, one rung after the
	// other, and pools each rung's rounds: drift of a shared machine's
	// load then falls on every rung alike (default 1).
	Repeat int
	// Iters is the number of timed iterations of the harness rungs
	// (nexar-live's allreduce and empty collective), after Warmup/10
	// untimed ones (default DefaultIters).
	Iters int
	// Peer returns the command that starts the other process with args
	// (nexar-live ladder-peer ARGS...; it must call ServePeer with them).
	Peer func(args []string) *exec.Cmd
	// OMPIScript is scripts/ompi-allreduce/run.sh, which the Open MPI
	// rung runs with --ompi-only; empty skips the rung, as does a
	// machine without mpicc (the rung says why).
	OMPIScript string
	// GlooScript is scripts/gloo-allreduce/run.sh, which the Gloo rung
	// runs with --gloo-only under Python (default DefaultPython); empty
	// skips the rung, as does a Python without torch (the rung says why).
	GlooScript, Python string
	// Only, if not empty, names the rungs to run (Rung.Key); the others
	// are left out.
	Only []string
	// Profile, if not empty, is a directory that receives CPU profiles of
	// both processes over the whole ladder (ladder.pprof, peer.pprof).
	Profile string
	// Progress, if not nil, receives a line as each rung starts.
	Progress io.Writer
}

// DefaultPython is the interpreter of the Gloo rung: where Debian's
// python3-torch installs.
const DefaultPython = "/usr/bin/python3"

func (o Options) python() string {
	if o.Python == "" {
		return DefaultPython
	}
	return o.Python
}

func (o Options) withDefaults() Options {
	if o.Rounds <= 0 {
		o.Rounds = DefaultRounds
	}
	if o.Warmup <= 0 {
		o.Warmup = DefaultWarmup
	}
	if o.BWBytes <= 0 {
		o.BWBytes = DefaultBWBytes
	}
	if o.BWRounds <= 0 {
		o.BWRounds = DefaultBWRounds
	}
	if o.Iters <= 0 {
		o.Iters = DefaultIters
	}
	o.Repeat = max(o.Repeat, 1)
	return o
}

// Rung is one measured layer.
type Rung struct {
	// Key names the rung on the command line (Options.Only) and in CSV.
	Key string
	// Latency rungs are in seconds one way; bandwidth rungs in bytes per
	// second.
	Bandwidth bool
	// Name says what was measured.
	Name string
	// Below is the key of the rung this one is held against ("" none).
	Below string
	// Value is the median: seconds one way, or bytes per second.
	Value float64
	// Min is the best round: the least time, or the most bandwidth.
	Min float64
	// Ratio is Value over Below's Value (0 if there is none).
	Ratio float64
	// Samples is the number of timed rounds.
	Samples int
	// Skipped, if not empty, says why the rung was not measured.
	Skipped string
}

// Report is a ladder's rungs in the order they were measured.
type Report struct {
	Options Options
	// Procs is the GOMAXPROCS both processes ran with.
	Procs int
	Rungs []Rung
}

// rungDef is a rung to measure: the command the peer gets, and the
// ladder's own side.
type rungDef struct {
	Rung
	cmd command
}

// rungs lists the ladder's rungs, lowest layer first.
func rungs(o Options) []rungDef {
	lat := func(key, name, below string, c command) rungDef {
		c.Rounds, c.Warmup = o.Rounds, o.Warmup
		return rungDef{Rung: Rung{Key: key, Name: name, Below: below}, cmd: c}
	}
	bw := func(key, name, below string, c command) rungDef {
		c.Bytes, c.Rounds, c.Warmup = o.BWBytes, o.BWRounds, 1
		return rungDef{Rung: Rung{Key: key, Name: name, Below: below, Bandwidth: true}, cmd: c}
	}
	harness := func(key, name, below string, c command) rungDef {
		c.Rounds, c.Warmup = o.Iters, max(o.Iters/10, 5)
		return rungDef{Rung: Rung{Key: key, Name: name, Below: below}, cmd: c}
	}
	// The TCP paths are measured as between hosts (against raw TCP and
	// Open MPI over TCP), the local socket's beside them.
	quicPath := netSpec{Thresholds: algos.Thresholds{Bulk: algos.BulkNever}}
	bulkPath := netSpec{Thresholds: algos.Thresholds{Bulk: 1}, TCP: true}
	eager := netSpec{Thresholds: algos.Thresholds{Eager: EagerThreshold}, TCP: true}
	local := func(n netSpec) netSpec { n.TCP = false; return n }
	return []rungDef{
		lat("tcp", "raw TCP ping-pong", "", command{Kind: kindTCP}),
		lat("unix", "raw Unix socket ping-pong", "tcp", command{Kind: kindUnix}),
		lat("quic-stream", "raw quic-go, one stream", "tcp", command{Kind: kindQUICStream}),
		lat("quic-msg", "raw quic-go, a stream per message", "quic-stream", command{Kind: kindQUICMsg}),
		lat("quic-xchg", "raw quic-go, both ways at once from an agreed start", "quic-msg", command{Kind: kindQUICXchg, Net: quicPath}),
		lat("realnet-quic", "realnet Send/Recv, QUIC path", "quic-msg", command{Kind: kindLink, Net: quicPath}),
		lat("realnet-eager", "realnet Send/Recv, eager TCP path (TLS)", "tcp", command{Kind: kindLink, Net: eager}),
		lat("realnet-bulk", "realnet Send/Recv, bulk path (request on QUIC, answer on TCP, TLS)", "tcp", command{Kind: kindLink, Net: bulkPath}),
		lat("realnet-local", "realnet Send/Recv, eager path, local socket", "unix", command{Kind: kindLink, Net: local(eager)}),
		harness("allreduce", "nexar-live allreduce 8 B, recursive_doubling, 2 ranks", "quic-msg",
			command{Kind: kindHarness, Algorithm: "recursive_doubling", Bytes: 8, Timing: live.TimingStart}),
		harness("allreduce-loop", "the same, --timing loop (mean of back-to-back iterations)", "quic-msg",
			command{Kind: kindHarness, Algorithm: "recursive_doubling", Bytes: 8, Timing: live.TimingLoop}),
		harness("empty", "nexar-live empty collective (the agreed start's own cost)", "",
			command{Kind: kindHarness, Algorithm: emptyAlgorithm, Timing: live.TimingStart}),
		harness("allreduce-eager", "nexar-live allreduce 8 B, 2 ranks, --eager-threshold", "realnet-eager",
			command{Kind: kindHarness, Algorithm: "recursive_doubling", Bytes: 8, Timing: live.TimingStart, Net: eager}),
		harness("allreduce-eager-loop", "the same, --timing loop", "ompi",
			command{Kind: kindHarness, Algorithm: "recursive_doubling", Bytes: 8, Timing: live.TimingLoop, Net: eager}),
		{Rung: Rung{Key: "ompi", Name: "Open MPI allreduce 8 B, 2 ranks, TCP (loop timing)", Below: "tcp"}, cmd: command{Kind: kindOMPI, Bytes: 8, Rounds: o.Iters * 10, Warmup: o.Iters}},
		{Rung: Rung{Key: "gloo", Name: "PyTorch Gloo allreduce 8 B, 2 ranks, TCP (loop timing)", Below: "tcp"}, cmd: command{Kind: kindGloo, Bytes: 8, Rounds: o.Iters, Warmup: max(o.Iters/10, 5)}},

		bw("tcp-bw", "raw TCP", "", command{Kind: kindTCP}),
		bw("unix-bw", "raw Unix socket", "tcp-bw", command{Kind: kindUnix}),
		bw("tcp-gcm-bw", "raw TCP in records sealed with AES-128-GCM as the bulk path's (the cipher's floor)", "tcp-bw", command{Kind: kindTCPGCM}),
		bw("quic-stream-bw", "raw quic-go, one stream", "tcp-bw", command{Kind: kindQUICStream}),
		bw("realnet-quic-bw", "realnet Send/Recv, QUIC path", "quic-stream-bw", command{Kind: kindLink, Net: quicPath}),
		bw("realnet-bulk-bw", "realnet Send/Recv, bulk path, TLS", "tcp-bw", command{Kind: kindLink, Net: bulkPath}),
		bw("realnet-plain-bw", "realnet Send/Recv, bulk path, --trusted-network", "tcp-bw", command{Kind: kindLink, Net: netSpec{Thresholds: bulkPath.Thresholds, Trusted: true}}),
		bw("realnet-eager-bw", "realnet Send/Recv, eager mode (rendezvous on TCP), TLS", "tcp-bw", command{Kind: kindLink, Net: eager}),
		bw("realnet-local-bw", "realnet Send/Recv, bulk path, local socket", "unix-bw", command{Kind: kindLink, Net: local(bulkPath)}),
	}
}

// Keys returns the keys of the ladder's rungs, in order.
func Keys() []string {
	var keys []string
	for _, r := range rungs(Options{}.withDefaults()) {
		keys = append(keys, r.Key)
	}
	return keys
}

// Run measures the ladder: it starts the peer process, measures every rung
// against it in turn, and stops it.
func Run(ctx context.Context, opt Options) (*Report, error) {
	opt = opt.withDefaults()
	defs := rungs(opt)
	for _, k := range opt.Only {
		if !slices.ContainsFunc(defs, func(d rungDef) bool { return d.Key == k }) {
			return nil, fmt.Errorf("ladder: unknown rung %q (want one of %v)", k, Keys())
		}
	}
	dir, err := os.MkdirTemp("", "nexar-ladder-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ca, err := realnet.NewCA()
	if err != nil {
		return nil, err
	}
	caFile, certFile, keyFile, err := ca.WriteFiles(dir, realnet.JobIdentity("ladder"), false)
	if err != nil {
		return nil, err
	}
	creds, err := realnet.LoadCredentials(caFile, certFile, keyFile)
	if err != nil {
		return nil, err
	}
	if opt.Profile != "" {
		if err := os.MkdirAll(opt.Profile, 0o777); err != nil {
			return nil, err
		}
		stop, err := cli.StartCPUProfile(filepath.Join(opt.Profile, "ladder.pprof"))
		if err != nil {
			return nil, err
		}
		defer func() { _ = stop() }()
	}

	args := []string{caFile, certFile, keyFile}
	if opt.Profile != "" {
		args = append(args, filepath.Join(opt.Profile, "peer.pprof"))
	}
	// The processes get what nexar-live run gives two ranks on this
	// machine, unless GOMAXPROCS says otherwise.
	if os.Getenv("GOMAXPROCS") == "" {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(launch.RankProcs(2)))
	}
	pctx, kill := context.WithCancel(ctx)
	defer kill()
	cmd := opt.Peer(args)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, fmt.Sprintf("GOMAXPROCS=%d", runtime.GOMAXPROCS(0)))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("ladder: starting the peer: %w", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	context.AfterFunc(pctx, func() { cmd.Process.Kill() })
	p := &peerConn{enc: json.NewEncoder(stdin), dec: json.NewDecoder(bufio.NewReader(stdout)), creds: creds}

	rep := &Report{Options: opt, Procs: runtime.GOMAXPROCS(0)}
	var todo []rungDef
	for _, d := range defs {
		if len(opt.Only) == 0 || slices.Contains(opt.Only, d.Key) {
			todo = append(todo, d)
		}
	}
	samples := make([][]float64, len(todo))
	skipped := make([]string, len(todo))
	for pass := range opt.Repeat {
		for i, d := range todo {
			if opt.Progress != nil {
				fmt.Fprintf(opt.Progress, "ladder: pass %d/%d: %s\n", pass+1, opt.Repeat, d.Name)
			}
			s, skip, err := p.measure(pctx, d.cmd, opt)
			if err != nil {
				kill()
				<-waited
				return rep, fmt.Errorf("ladder: %s: %w", d.Name, err)
			}
			samples[i] = append(samples[i], s...)
			skipped[i] = skip
		}
	}
	for i, d := range todo {
		r := d.Rung
		r.Skipped = skipped[i]
		if r.Skipped == "" {
			r.Samples = len(samples[i])
			r.Value, r.Min = summarize(samples[i], d.Bandwidth, d.cmd.Bytes)
		}
		rep.Rungs = append(rep.Rungs, r)
	}
	stdin.Close() // the peer ends when its input does
	if err := <-waited; err != nil && ctx.Err() == nil {
		return rep, fmt.Errorf("ladder: the peer: %w", err)
	}
	rep.relate()
	return rep, ctx.Err()
}

// summarize turns the rounds' seconds into the median and best: one way
// for latency (half the round trip; harness rungs report one-way times
// already, see measure), bytes per second for bandwidth.
func summarize(secs []float64, bandwidth bool, bytes int) (median, best float64) {
	s := slices.Clone(secs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	if bandwidth {
		return float64(bytes) / med, float64(bytes) / s[0]
	}
	return med, s[0]
}

// relate sets every rung's ratio to the rung below it.
func (r *Report) relate() {
	by := map[string]Rung{}
	for _, g := range r.Rungs {
		by[g.Key] = g
	}
	for i, g := range r.Rungs {
		b, ok := by[g.Below]
		if !ok || g.Skipped != "" || b.Skipped != "" || b.Value == 0 {
			continue
		}
		r.Rungs[i].Ratio = g.Value / b.Value
	}
}

// WriteTable prints the ladder: one line per rung, with its median, its
// best round and its ratio to the rung below.
func (r *Report) WriteTable(w io.Writer) {
	o := r.Options
	fmt.Fprintf(w, "# nexar-live ladder: two processes on 127.0.0.1, %s, %d CPUs, GOMAXPROCS %d\n", runtime.Version(), runtime.NumCPU(), r.Procs)
	fmt.Fprintf(w, "# latency: 8 B one way = half the median of %d round trips (after %d); harness rungs: nexar-live's own time, median of %d iterations\n",
		o.Rounds, o.Warmup, o.Iters)
	fmt.Fprintf(w, "# bandwidth: %d B one way then a 1 B acknowledgement, median of %d transfers\n", o.BWBytes, o.BWRounds)
	fmt.Fprintf(w, "# ratio: median / median of the rung named in 'against'; passes over the whole ladder: %d, rounds pooled\n", o.Repeat)
	// The key and name columns are as wide as their longest entries.
	keyW, nameW := len("bandwidth")+2, 0
	for _, g := range r.Rungs {
		keyW, nameW = max(keyW, utf8.RuneCountInString(g.Key)), max(nameW, utf8.RuneCountInString(g.Name))
	}
	group := ""
	for _, g := range r.Rungs {
		head := "latency"
		if g.Bandwidth {
			head = "bandwidth"
		}
		if head != group {
			group = head
			unit, best := "us", "best"
			if g.Bandwidth {
				unit = "GB/s"
			}
			fmt.Fprintf(w, "#\n# %-*s %-*s %10s %10s  %-*s %7s\n", keyW-2, head, nameW, "", unit, best, keyW, "against", "ratio")
		}
		if g.Skipped != "" {
			fmt.Fprintf(w, "%-*s %-*s %10s %10s  skipped: %s\n", keyW, g.Key, nameW, g.Name, "-", "-", g.Skipped)
			continue
		}
		v, m := g.Value*1e6, g.Min*1e6
		if g.Bandwidth {
			v, m = g.Value/1e9, g.Min/1e9
		}
		ratio := ""
		if g.Ratio > 0 {
			ratio = fmt.Sprintf("%6.2fx", g.Ratio)
		}
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("%-*s %-*s %10.2f %10.2f  %-*s %7s", keyW, g.Key, nameW, g.Name, v, m, keyW, g.Below, ratio), " "))
	}
}

// CSVHeader is the header of WriteCSV's output.
var CSVHeader = []string{"rung", "name", "kind", "median", "best", "unit", "against", "ratio", "samples", "skipped"}

// WriteCSV writes the rungs as CSV: latencies in seconds, bandwidths in
// bytes per second.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader)
	for _, g := range r.Rungs {
		kind, unit := "latency", "s"
		if g.Bandwidth {
			kind, unit = "bandwidth", "B/s"
		}
		f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
		cw.Write([]string{g.Key, g.Name, kind, f(g.Value), f(g.Min), unit, g.Below, f(g.Ratio), strconv.Itoa(g.Samples), g.Skipped})
	}
	cw.Flush()
	return cw.Error()
}

// errPeerGone is returned when the peer's output ends mid-rung.
var errPeerGone = errors.New("the peer process ended")

// newSession returns a fresh realnet session id.
func newSession() realnet.Session {
	var s realnet.Session
	rand.Read(s[:])
	return s
}

// deadline bounds one rung.
const rungTimeout = 5 * time.Minute
