package tuner

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Table is a cost table as NCCL prints it with NCCL_DEBUG=INFO
// NCCL_DEBUG_SUBSYS=TUNING: for each collective, algorithm and protocol,
// the latency in microseconds and the algorithm bandwidth in GB/s (0: the
// pair is disabled), and the threads of each algorithm and protocol.
type Table struct {
	Lat, Bw [NumColls][NumAlgos][NumProtocols]float64
	Threads [NumAlgos][NumProtocols]int
	// Known and KnownThreads say which cells the table has: all of them
	// for a model's, those a log printed for a parsed one (logs are often
	// cut short, and older releases had fewer algorithms).
	Known        [NumColls][NumAlgos][NumProtocols]bool
	KnownThreads [NumAlgos][NumProtocols]bool
}

// Table returns the model's cost table.
func (m *Model) Table() *Table {
	t := &Table{}
	for c := range NumColls {
		for a := range NumAlgos {
			for p := range NumProtocols {
				t.Lat[c][a][p] = float64(m.lat[c][a][p])
				t.Bw[c][a][p] = float64(m.bw[c][a][p])
				t.Known[c][a][p] = true
			}
		}
	}
	for a := range NumAlgos {
		for p := range NumProtocols {
			t.Threads[a][p] = m.maxThreads[a][p]
			t.KnownThreads[a][p] = true
		}
	}
	return t
}

// WriteTo writes t as NCCL 2.30 prints it (ncclTopoTuneModel): blocks of
// three algorithms, a header of algorithms and protocols, the threads,
// then one row per collective of "latency/bandwidth" cells; each line as
// it follows "NCCL INFO ". Unknown cells print as zero. It implements
// io.WriterTo.
func (t *Table) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	for block := 0; block*3 < int(NumAlgos); block++ {
		algos := func(f func(a Algo)) {
			for ba := range 3 {
				if a := Algo(block*3 + ba); a < NumAlgos {
					f(a)
				}
			}
		}
		b.WriteString("  Algorithm   |")
		algos(func(a Algo) { fmt.Fprintf(&b, " %14s   %14s   %14s |", "", algoPrinted[a], "") })
		b.WriteString("\n  Protocol    |")
		for range 3 { // NCCL prints three algorithms' protocols in every block
			for p := range NumProtocols {
				fmt.Fprintf(&b, " %14s |", protoPrinted[p])
			}
		}
		b.WriteString("\n Max NThreads |")
		algos(func(a Algo) {
			for p := range NumProtocols {
				fmt.Fprintf(&b, " %14d |", t.Threads[a][p])
			}
		})
		b.WriteString("\n")
		for c := range NumColls {
			fmt.Fprintf(&b, "%13s |", collPrinted[c])
			algos(func(a Algo) {
				for p := range NumProtocols {
					fmt.Fprintf(&b, "%8.1f/%6.1f |", t.Lat[c][a][p], t.Bw[c][a][p])
				}
			})
			b.WriteString("\n")
		}
	}
	n, err := w.Write(b.Bytes())
	return int64(n), err
}

// Log is what a log of NCCL's INFO lines says of its cost model.
type Log struct {
	// Version is the release the log names ("NCCL version 2.29.7"), ""
	// if none.
	Version string
	// Table is the cost table the log prints (the last one if several
	// ranks or communicators printed one), nil if none.
	Table *Table
	// Times are the predicted times of calls a log at NCCL_DEBUG=INFO
	// (older releases) or TRACE prints: "1024 Bytes -> Algo 0 proto 0
	// time 25.331232".
	Times []LogTime
	// Choices are the choices NCCL 2.2x and later print with
	// NCCL_DEBUG_SUBSYS=TUNING: "AllReduce: 1048576 Bytes -> Algo RING
	// proto LL channel{Lo..Hi}={0..7}".
	Choices []LogChoice
}

// LogTime is one predicted time of a log.
type LogTime struct {
	Line int
	// Coll is the collective the line names ("ReduceScatter: 1048576
	// Bytes -> Algo 1 ...", as RCCL and some releases print it), where
	// Named.
	Coll  Coll
	Named bool
	Bytes int
	Algo  Algo
	Proto Protocol
	// Time is in microseconds, as printed (six decimals).
	Time float64
}

// LogChoice is one choice of a log.
type LogChoice struct {
	Line  int
	Coll  Coll
	Bytes int
	Algo  Algo
	Proto Protocol
	// ChannelLo and ChannelHi are the channels the call ran on.
	ChannelLo, ChannelHi int
}

var (
	reVersion = regexp.MustCompile(`(?:NCCL|RCCL) version :? ?(\d+\.\d+\.\d+)`)
	reTime    = regexp.MustCompile(`(?:(\w+): +)?(\d+) Bytes -> Algo (\d+) proto (\d+) time (\d+(?:\.\d+)?)`)
	reChoice  = regexp.MustCompile(`(\w+): +(\d+) Bytes -> Algo (\w+) +proto (\w+) +channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\}`)
)

// maxLogLine bounds the lines ParseLog reads.
const maxLogLine = 1 << 20

// ParseLog reads the cost table, predicted times and choices of NCCL's
// INFO lines in r, whatever precedes "NCCL INFO" on a line (host, pid,
// rank) and whatever else the log holds: the tables of NCCL 2.19 and
// later (blocks of three algorithms) and of earlier releases (one
// "Latency/AlgBw" row of "Algo/Proto" columns). Rows cut short keep the
// cells before the cut. It fails only if r does, or a line is longer
// than 1 MiB.
func ParseLog(r io.Reader) (*Log, error) {
	lg := &Log{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLogLine)
	var t *Table
	var cols []column // the columns of the current block
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if m := reVersion.FindStringSubmatch(line); m != nil {
			lg.Version = m[1]
		}
		if m := reTime.FindStringSubmatch(line); m != nil {
			if x, ok := parseTime(m, n); ok {
				lg.Times = append(lg.Times, x)
			}
			continue
		}
		if m := reChoice.FindStringSubmatch(line); m != nil {
			if x, ok := parseChoice(m, n); ok {
				lg.Choices = append(lg.Choices, x)
			}
			continue
		}
		if i := strings.Index(line, "NCCL INFO"); i >= 0 {
			line = line[i+len("NCCL INFO"):]
		}
		fields := strings.Split(line, "|")
		if len(fields) < 2 {
			continue
		}
		head := strings.TrimSpace(fields[0])
		cells := fields[1:]
		switch head {
		case "Algorithm":
			cols = nil
			for _, f := range cells {
				if a, ok := printedAlgo(strings.TrimSpace(f)); ok {
					for p := range Protocol(NumProtocols) {
						cols = append(cols, column{a, p})
					}
				}
			}
			if t == nil || len(cols) > 0 && cols[0].algo == 0 {
				t = &Table{} // a new table starts with its first block
				lg.Table = t
			}
		case "Latency/AlgBw":
			cols = nil
			for _, f := range cells {
				ap := strings.Split(f, "/")
				if len(ap) != 2 {
					continue
				}
				a, okA := printedAlgo(strings.TrimSpace(ap[0]))
				p, okP := printedProto(strings.TrimSpace(ap[1]))
				if okA && okP {
					cols = append(cols, column{a, p})
				}
			}
			t = &Table{}
			lg.Table = t
		case "Max NThreads":
			if t == nil {
				continue
			}
			for i, f := range cells {
				v, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil || i >= len(cols) {
					break
				}
				c := cols[i]
				t.Threads[c.algo][c.proto], t.KnownThreads[c.algo][c.proto] = v, true
			}
		default:
			coll, ok := printedColl(head)
			if !ok || t == nil {
				continue
			}
			for i, f := range cells {
				lat, bw, ok := parseCell(f)
				if !ok || i >= len(cols) {
					break
				}
				c := cols[i]
				t.Lat[coll][c.algo][c.proto], t.Bw[coll][c.algo][c.proto] = lat, bw
				t.Known[coll][c.algo][c.proto] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tuner: reading a log: line %d: %w", n+1, err)
	}
	return lg, nil
}

type column struct {
	algo  Algo
	proto Protocol
}

// parseCell parses " 16.8/   0.5 ".
func parseCell(s string) (lat, bw float64, ok bool) {
	l, b, found := strings.Cut(s, "/")
	if !found {
		return 0, 0, false
	}
	lat, err1 := strconv.ParseFloat(strings.TrimSpace(l), 64)
	bw, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if err1 != nil || err2 != nil || !(lat >= 0) || !(bw >= 0) || lat > 1e12 || bw > 1e12 {
		return 0, 0, false
	}
	return lat, bw, true
}

func printedAlgo(s string) (Algo, bool) {
	for a, n := range algoPrinted {
		if s == n {
			return Algo(a), true
		}
	}
	if s == "CollNet" { // releases before CollNet had two algorithms
		return CollNetDirect, true
	}
	return 0, false
}

func printedProto(s string) (Protocol, bool) {
	for p, n := range protoPrinted {
		if s == n {
			return Protocol(p), true
		}
	}
	return 0, false
}

func printedColl(s string) (Coll, bool) {
	for c, n := range collPrinted {
		if s == n {
			return Coll(c), true
		}
	}
	return 0, false
}

func parseTime(m []string, line int) (LogTime, bool) {
	b, err1 := strconv.Atoi(m[2])
	a, err2 := strconv.Atoi(m[3])
	p, err3 := strconv.Atoi(m[4])
	t, err4 := strconv.ParseFloat(m[5], 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || a >= int(NumAlgos) || p >= NumProtocols {
		return LogTime{}, false
	}
	x := LogTime{Line: line, Bytes: b, Algo: Algo(a), Proto: Protocol(p), Time: t}
	if m[1] != "" {
		x.Coll, x.Named = printedColl(m[1])
	}
	return x, true
}

func parseChoice(m []string, line int) (LogChoice, bool) {
	coll, ok := printedColl(m[1])
	b, err1 := strconv.Atoi(m[2])
	lo, err2 := strconv.Atoi(m[5])
	hi, err3 := strconv.Atoi(m[6])
	if !ok || err1 != nil || err2 != nil || err3 != nil {
		return LogChoice{}, false
	}
	var a Algo
	var p Protocol
	if a, ok = upperAlgo(m[3]); !ok {
		return LogChoice{}, false
	}
	if p, ok = upperProto(m[4]); !ok {
		return LogChoice{}, false
	}
	return LogChoice{Line: line, Coll: coll, Bytes: b, Algo: a, Proto: p, ChannelLo: lo, ChannelHi: hi}, true
}

// upperAlgo and upperProto read the names the choice lines print
// (ncclAlgoToString: "RING", "COLLNET_DIRECT", "NVLS_TREE"; "LL128",
// "SIMPLE").
func upperAlgo(s string) (Algo, bool) {
	for a, n := range algoNames {
		if strings.EqualFold(s, n) {
			return Algo(a), true
		}
	}
	return 0, false
}

func upperProto(s string) (Protocol, bool) {
	for p, n := range protoPrinted {
		if strings.EqualFold(s, n) {
			return Protocol(p), true
		}
	}
	return 0, false
}
