package calibrate

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/nexar-go/nexar-go/algos/nccl/tuner"
)

// NCCLInfo is what a run's lines say of NCCL and of the machine, beside
// its table: nccl-tests' list of devices, and NCCL's INFO lines where the
// run printed them (NCCL_DEBUG=INFO; NCCL_DEBUG_SUBSYS=INIT,TUNING for the
// choices). A field the log does not give is zero.
type NCCLInfo struct {
	// Version is NCCL's release, "2.26.2", from "NCCL version
	// 2.26.2+cuda12.8", or RCCL's ("RCCL version : 2.27.7-HEAD"), and
	// then RCCL is true.
	Version string
	RCCL    bool
	// TunerPlugin is the tuner plugin NCCL used ("TUNER/Plugin: Using
	// nccl_ofi_tuner"), "" for NCCL's own cost model.
	TunerPlugin string
	// GPU is the device the rank lines name ("NVIDIA H100 80GB HBM3"),
	// the first if they name several; Hosts is the hosts they name, and
	// HostsAtLeast says that the rank list was elided (nccl-tests cuts a
	// process's list at 2 KB; logs cut "..."), so that the hosts of the
	// ranks not listed are unknown and Hosts is a lower bound.
	GPU          string
	Hosts        int
	HostsAtLeast bool
	// Nodes and LocalRanks are NCCL's own counts, from its "comm 0x...
	// rank 0 nRanks 16 nNodes 2 localRanks 8" line: the nodes of the
	// communicator (NVLink domains with multi-node NVLink) and the ranks
	// of the first.
	Nodes, LocalRanks int
	// Ranks is the communicator's ranks, from the same line, or from
	// older releases' "comm 0x... rank 0 nranks 16 cudaDev 0 ... Init
	// COMPLETE", which gives no nodes.
	Ranks int
	// Channels is the communicator's collective channels ("16 coll
	// channels, ..." of NCCL 2.12 and later, else the count of its rings'
	// "Channel 05/16 :" lines), NVLSChannels its NVLS channels ("16 nvls
	// channels").
	Channels, NVLSChannels int
	// Rings and Trees are the channels whose ring ("Channel 00/16 :  0 1
	// 2 ...") and tree ("Trees [0] 1/-1/-1->0->-1 [1] ...") rank 0
	// printed, at most Channels.
	Rings, Trees int
	// Env are the variables NCCL says the environment set ("NCCL_ALGO set
	// by environment to Ring"), by name; nil if none.
	Env map[string]string
	// Choices are NCCL's choice for each call the log names, in order.
	Choices []NCCLChoice
}

// NCCLChoice is what NCCL ran for one call, as its INFO lines say:
// "AllReduce: 1048576 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..7}"
// (NCCL_DEBUG_SUBSYS=TUNING, 2.2x and later), or, from older releases,
// "1048576 Bytes -> Algo 1 proto 0 time 25.3", whose collective is the
// run's.
type NCCLChoice struct {
	Line int
	// Collective is the catalogue's collective, "" where the line does
	// not name one (the run's, then).
	Collective string
	// Bytes is the call's size as nccl-tests counts it: the whole
	// buffer of an allgather or reduce-scatter, whose choice lines
	// count a rank's part (scaled by the communicator's ranks).
	Bytes int
	// Algorithm is the catalogue's algorithm that runs NCCL's choice
	// ("nccl_ring_ll", "nccl_nvls_tree"), "" where the catalogue has none
	// (CollNet chain); Channels the channels it ran on, 0 if the line
	// does not say.
	Algorithm string
	Channels  int
}

// Variant is the choice as a variant of the catalogue, as results name
// it: "nccl_ring_ll(channels=8)", or the algorithm alone when the
// channels are not known.
func (c NCCLChoice) Variant() string {
	if c.Channels > 0 {
		return fmt.Sprintf("%s(channels=%d)", c.Algorithm, c.Channels)
	}
	return c.Algorithm
}

var (
	infoComm = regexp.MustCompile(`NCCL INFO (?:ncclCommInit\w* )?comm 0x[0-9a-f]+ rank \d+ n[Rr]anks (\d+)(?: nNodes (\d+))?(?: localRanks (\d+))?`)
	// libraryVersion is the library's version code on nccl-tests' (and
	// rccl-tests') version line: "nccl-library=22703".
	libraryVersion = regexp.MustCompile(`[nr]ccl-library=(\d+)`)
	// infoTuner is a tuner plugin in use: "TUNER/Plugin: Using
	// nccl_ofi_tuner (v3)", "Using tuner plugin example".
	infoTuner    = regexp.MustCompile(`NCCL INFO (?:TUNER/Plugin: Using|Using tuner plugin:?) (\S+)`)
	infoChannels = regexp.MustCompile(`NCCL INFO (\d+) coll channels,(?: (\d+) collnet channels,)?(?: (\d+) nvls channels,)?`)
	infoRing     = regexp.MustCompile(`NCCL INFO Channel (\d+)/(\d+) :((?:\s+\d+)+)\s*$`)
	infoTrees    = regexp.MustCompile(`NCCL INFO Trees((?:\s*\[\d+\]\s*\S+)+)`)
	infoTree     = regexp.MustCompile(`\[(\d+)\]`)
	infoEnv      = regexp.MustCompile(`NCCL INFO (NCCL_[A-Z0-9_]+) set by environment to (\S+)`)
	infoVersion  = regexp.MustCompile(`(NCCL|RCCL) version :? ?(\d+\.\d+\.\d+)`)
	// rankDevice reads nccl-tests' rank line past its rank: "... Pid
	// 41000 on node01 device 0 [0x18] NVIDIA H100 80GB HBM3".
	rankDevice = regexp.MustCompile(`\bon\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.+?)\s*$`)
)

// maxInfoEntries bounds what one run keeps of lines that repeat (choices
// at every iteration, rings and trees of every rank): enough for every
// size of a sweep.
const maxInfoEntries = 1 << 12

// infoScanner gathers a run's NCCLInfo from its lines.
type infoScanner struct {
	info  NCCLInfo
	hosts map[string]bool
	rings map[int]bool
	lines []string // INFO lines with choices, for tuner.ParseLog
	at    []int
	any   bool
}

// scanRank reads a rank line's host and device.
func (s *infoScanner) scanRank(line string) {
	m := rankDevice.FindStringSubmatch(line)
	if m == nil {
		return
	}
	if s.hosts == nil {
		s.hosts = map[string]bool{}
	}
	if len(s.hosts) < maxInfoEntries {
		s.hosts[m[1]] = true
	}
	if s.info.GPU == "" {
		s.info.GPU = m[2]
	}
	s.any = true
}

// scanTestsVersion reads nccl-tests' (or rccl-tests') version line: "#
// nccl-tests version 2.13.10 nccl-headers=21903 nccl-library=21903", "#
// rccl-tests version 2.17.9 rccl-headers=22803 rccl-library=22707",
// "rccl-tests: Version develop:...": the library's release where no
// NCCL line gives it, and whether it is RCCL.
func (s *infoScanner) scanTestsVersion(line string) {
	if strings.Contains(strings.ToLower(line), "rccl") {
		s.info.RCCL, s.any = true, true
	}
	if m := libraryVersion.FindStringSubmatch(line); m != nil && s.info.Version == "" {
		if v := positive(m[1]); v >= 20900 {
			s.info.Version, s.any = ncclRelease(v), true
		}
	}
}

// scan reads a line that is not nccl-tests' own, and reports whether it
// was one of NCCL's that the run keeps.
func (s *infoScanner) scan(line string, n int) bool {
	if m := infoVersion.FindStringSubmatch(line); m != nil {
		s.info.Version, s.info.RCCL, s.any = m[2], m[1] == "RCCL", true
		return true
	}
	if !strings.Contains(line, "NCCL INFO") {
		return false
	}
	switch {
	case strings.Contains(line, "Bytes -> Algo"):
		if len(s.lines) < maxInfoEntries {
			s.lines = append(s.lines, line)
			s.at = append(s.at, n)
		}
	case infoComm.MatchString(line):
		m := infoComm.FindStringSubmatch(line)
		if s.info.Ranks == 0 {
			s.info.Ranks = positive(m[1])
		}
		if s.info.Nodes == 0 {
			s.info.Nodes = positive(m[2])
			s.info.LocalRanks = positive(m[3])
		}
	case infoTuner.MatchString(line):
		s.info.TunerPlugin = infoTuner.FindStringSubmatch(line)[1]
	case infoChannels.MatchString(line):
		m := infoChannels.FindStringSubmatch(line)
		s.info.Channels = positive(m[1])
		s.info.NVLSChannels = positive(m[3])
	case infoRing.MatchString(line):
		m := infoRing.FindStringSubmatch(line)
		ch, total := positive(m[1])+1, positive(m[2]) // channel 0 is the first
		if ch > 0 && total > 0 && ch <= total {
			if s.rings == nil {
				s.rings = map[int]bool{}
			}
			s.rings[ch] = true
			s.info.Rings = max(s.info.Rings, len(s.rings))
			if s.info.Channels == 0 || s.info.Channels < total {
				s.info.Channels = total
			}
		}
	case infoTrees.MatchString(line):
		trees := len(infoTree.FindAllString(infoTrees.FindStringSubmatch(line)[1], -1))
		s.info.Trees = max(s.info.Trees, trees)
	case infoEnv.MatchString(line):
		m := infoEnv.FindStringSubmatch(line)
		if s.info.Env == nil {
			s.info.Env = map[string]string{}
		}
		if len(s.info.Env) < maxInfoEntries {
			// Older releases end the line with a full stop ("set by
			// environment to 0."): it is the sentence's, not the value's.
			s.info.Env[m[1]] = strings.TrimSuffix(m[2], ".")
		}
	default:
		return false
	}
	s.any = true
	return true
}

// result returns what the lines said, nil if nothing, of a run of world
// ranks.
func (s *infoScanner) result(world int) *NCCLInfo {
	if !s.any {
		return nil
	}
	info := s.info
	info.Hosts = len(s.hosts)
	if info.Channels > 0 {
		info.Rings = min(info.Rings, info.Channels)
		info.Trees = min(info.Trees, info.Channels)
	}
	if len(s.lines) > 0 {
		// tuner.ParseLog reads the choice lines as NCCL prints them; it
		// fails only on a reader's error, which a strings.Reader has not.
		lg, _ := tuner.ParseLog(strings.NewReader(strings.Join(s.lines, "\n")))
		if lg != nil {
			ranks := cmp.Or(info.Ranks, world)
			for _, c := range lg.Choices {
				ch := NCCLChoice{Line: s.at[c.Line-1], Collective: c.Coll.Catalogue(), Bytes: c.Bytes,
					Algorithm: tuner.CatalogueName(c.Algo, c.Proto)}
				if (c.Coll == tuner.AllGather || c.Coll == tuner.ReduceScatter) && ranks > 0 && c.Bytes <= math.MaxInt/ranks {
					// The choice line counts a rank's part (the task's
					// count, enqueue.cc), nccl-tests the whole.
					ch.Bytes *= ranks
				}
				if c.ChannelHi >= c.ChannelLo && c.ChannelLo >= 0 {
					ch.Channels = c.ChannelHi - c.ChannelLo + 1
				}
				info.Choices = append(info.Choices, ch)
			}
			for _, t := range lg.Times {
				ch := NCCLChoice{Line: s.at[t.Line-1], Bytes: t.Bytes, Algorithm: tuner.CatalogueName(t.Algo, t.Proto)}
				if t.Named {
					ch.Collective = t.Coll.Catalogue()
				}
				info.Choices = append(info.Choices, ch)
			}
			slices.SortStableFunc(info.Choices, func(a, b NCCLChoice) int { return a.Line - b.Line })
		}
	}
	return &info
}

// Choice returns NCCL's choice for a call of collective with bytes bytes
// as the log has it (the last of the calls of that size, which come after
// the warm-up iterations), and false where the log does not say.
func (i *NCCLInfo) Choice(collective string, bytes int) (NCCLChoice, bool) {
	if i == nil {
		return NCCLChoice{}, false
	}
	for k := len(i.Choices) - 1; k >= 0; k-- {
		c := i.Choices[k]
		if c.Bytes == bytes && (c.Collective == "" || c.Collective == collective) && c.Algorithm != "" {
			return c, true
		}
	}
	return NCCLChoice{}, false
}

// String says in a line what the log says: "NCCL 2.26.2, 2 nodes, 16
// channels, NVIDIA H100 80GB HBM3".
func (i *NCCLInfo) String() string {
	if i == nil {
		return "no NCCL lines"
	}
	var parts []string
	switch {
	case i.Version != "" && i.RCCL:
		parts = append(parts, "RCCL "+i.Version)
	case i.Version != "":
		parts = append(parts, "NCCL "+i.Version)
	case i.RCCL:
		parts = append(parts, "RCCL")
	}
	if i.TunerPlugin != "" {
		parts = append(parts, "tuner plugin "+i.TunerPlugin)
	}
	switch {
	case i.Nodes > 0:
		parts = append(parts, fmt.Sprintf("%d node(s) (NCCL's comm line)", i.Nodes))
	case i.Hosts > 0 && i.HostsAtLeast:
		parts = append(parts, fmt.Sprintf("at least %d host(s) (the rank list is elided)", i.Hosts))
	case i.Hosts > 0:
		parts = append(parts, fmt.Sprintf("%d host(s)", i.Hosts))
	case i.Ranks > 0:
		parts = append(parts, fmt.Sprintf("a communicator of %d ranks (NCCL's comm line)", i.Ranks))
	}
	if i.Channels > 0 {
		parts = append(parts, fmt.Sprintf("%d channels", i.Channels))
	}
	if i.NVLSChannels > 0 {
		parts = append(parts, fmt.Sprintf("%d NVLS channels", i.NVLSChannels))
	}
	if len(i.Choices) > 0 {
		parts = append(parts, fmt.Sprintf("%d choice(s) of algorithm and protocol", len(i.Choices)))
	}
	for _, k := range sortedEnv(i.Env) {
		parts = append(parts, k+"="+i.Env[k])
	}
	if i.GPU != "" {
		parts = append(parts, i.GPU)
	}
	if len(parts) == 0 {
		return "no NCCL lines"
	}
	return strings.Join(parts, ", ")
}

func sortedEnv(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// NodesOf returns the nodes of a run of world ranks as its lines give
// them: NCCL's own count, else the hosts of its rank lines where they
// list every rank, else 0.
func (i *NCCLInfo) NodesOf(world int) int {
	switch {
	case i == nil:
		return 0
	case i.Nodes > 0 && i.Nodes <= world:
		return i.Nodes
	case i.Hosts > 0 && i.Hosts <= world && !i.HostsAtLeast:
		return i.Hosts
	}
	return 0
}
