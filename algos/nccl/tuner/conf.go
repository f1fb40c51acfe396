package tuner

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Config is the file NCCL's example tuner plugin reads
// (plugins/tuner/example in NCCL's repository, libnccl-tuner-example.so;
// NCCL_TUNER_CONFIG_FILE names it, nccl_tuner.conf in the working
// directory by default): one line a rule, in CSV,
//
//	collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]
//
// with the collectives broadcast, reduce, allgather, reducescatter and
// allreduce, the algorithms tree, ring, collnet_direct, collnet_chain,
// nvls, nvls_tree and pat, the protocols ll, ll128 and simple, and -1 for
// "any" (channels: see Rule.Channels). Lines that start with '#' and
// empty lines are skipped.
type Config struct {
	// Comments are written first, one "# " line each.
	Comments []string
	Rules    []Rule
}

// Rule is one line of a Config.
type Rule struct {
	Coll Coll
	// MinBytes and MaxBytes bound NCCL's nBytes, inclusive (a size_t).
	MinBytes, MaxBytes uint64
	Algo               Algo
	Proto              Protocol
	// Channels is the channel count the call runs on; -1 is what the
	// plugin calls NCCL's default, but the plugin (NCCL 2.30.7) then
	// answers 1 channel, as it does for calls no rule matches: write a
	// count.
	Channels int
	// Nodes, Ranks, PipeOps and RegBuff must equal the communicator's
	// nodes and ranks, the call's aggregated operations and whether its
	// buffers are registered (0 or 1); -1 matches any.
	Nodes, Ranks, PipeOps, RegBuff int
}

// AnySize is the largest max_bytes, SIZE_MAX: every size up to it.
const AnySize = math.MaxUint64

// maxConfLine is the example plugin's line buffer (MAX_LINE_LENGTH): fgets
// reads at most 255 characters a time, so a longer line is read as
// several.
const maxConfLine = 256

// WriteTo writes c in the plugin's format, deterministically: the
// comments, then the rules in order, each with 8 fields, or 10 when it
// sets numPipeOps or regBuff. It implements io.WriterTo.
func (c *Config) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	for _, s := range c.Comments {
		for _, l := range strings.Split(s, "\n") {
			fmt.Fprintf(&b, "# %s\n", l)
		}
	}
	for i, r := range c.Rules {
		if err := r.check(); err != nil {
			return 0, fmt.Errorf("tuner: rule %d: %w", i+1, err)
		}
		fmt.Fprintf(&b, "%s,%d,%d,%s,%s,%d,%d,%d", r.Coll, r.MinBytes, r.MaxBytes, r.Algo, r.Proto, r.Channels, r.Nodes, r.Ranks)
		if r.PipeOps != -1 || r.RegBuff != -1 {
			fmt.Fprintf(&b, ",%d,%d", r.PipeOps, r.RegBuff)
		}
		b.WriteString("\n")
	}
	n, err := w.Write(b.Bytes())
	return int64(n), err
}

func (r Rule) check() error {
	switch {
	case r.Coll < 0 || r.Coll >= NumColls:
		return fmt.Errorf("collective %d", int(r.Coll))
	case r.Algo < 0 || r.Algo >= NumAlgos:
		return fmt.Errorf("algorithm %d", int(r.Algo))
	case r.Proto < 0 || r.Proto >= NumProtocols:
		return fmt.Errorf("protocol %d", int(r.Proto))
	case r.MaxBytes < r.MinBytes:
		return fmt.Errorf("max_bytes %d below min_bytes %d", r.MaxBytes, r.MinBytes)
	case r.Channels == 0 || r.Channels < -1 || r.Nodes < -1 || r.Nodes == 0 || r.Ranks < -1 || r.Ranks == 0 ||
		r.PipeOps < -1 || r.RegBuff < -1 || r.RegBuff > 1:
		return fmt.Errorf("channels %d, nodes %d, ranks %d, pipe ops %d, regbuff %d: want -1 or a count (regbuff 0 or 1)",
			r.Channels, r.Nodes, r.Ranks, r.PipeOps, r.RegBuff)
	}
	return nil
}

// ConfLine is a line of a config file the plugin would load, with its
// number.
type ConfLine struct {
	Line int
	Rule Rule
}

// ErrConfLine is wrapped by ParseConfig's errors for lines the plugin
// would take otherwise than they read.
var ErrConfLine = errors.New("nccl_tuner.conf")

// ParseConfig reads a config file as the example plugin does (loadConfig
// in plugin.c): lines of at most 255 characters (longer ones are split,
// each piece a line), skipped when they start with '#' or are empty (a
// CRLF file's '\r' dropped first, as the plugin, reading it, ignores it);
// fields split at commas (empty fields vanish, as strtok drops them),
// spaces and tabs trimmed, at most 10 read; lines of 8 to 10 fields are
// rules, others ignored. It returns the rules the plugin loads, with
// their lines, in order, and in strict mode (strict true) fails on what
// the plugin would silently misread: a line of the wrong number of
// fields, a name the plugin does not know (it reads unknown collectives
// as allreduce, algorithms as ring, protocols as simple), a number it
// would cut short or wrap (strtoull, atoi), a line split by the 256-byte
// buffer.
func ParseConfig(r io.Reader, strict bool) ([]ConfLine, error) {
	br := bufio.NewReader(r)
	var out []ConfLine
	n := 0
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w:%d: %s", ErrConfLine, n, fmt.Sprintf(format, args...))
	}
	pending := false // the previous piece did not end its line
	for {
		piece, err := readPiece(br)
		if len(piece) == 0 && err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		if !pending {
			n++
		} else if strict {
			return out, fail("longer than %d characters: the plugin reads it as several lines", maxConfLine-1)
		}
		pending = !strings.HasSuffix(piece, "\n")
		if piece[0] == '#' || piece[0] == '\n' {
			continue
		}
		line := piece
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		// A file saved with CRLF ends each line with a '\r' the plugin
		// reads harmlessly: after the last field, a number that atoi
		// and strtoull stop before, or alone on a blank line that makes
		// one field and is ignored.
		line = strings.TrimRight(line, "\r")
		if line == "" {
			continue
		}
		var tokens []string
		for _, t := range strings.Split(line, ",") {
			if t == "" {
				continue // strtok skips empty fields
			}
			if len(tokens) == 10 {
				if strict {
					return out, fail("more than 10 fields")
				}
				break
			}
			tokens = append(tokens, strings.Trim(t, " \t"))
		}
		if len(tokens) < 8 || len(tokens) > 10 {
			if strict {
				return out, fail("%d fields, want 8 to 10", len(tokens))
			}
			continue
		}
		rule, err := parseRule(tokens, strict)
		if err != nil {
			return out, fail("%v", err)
		}
		out = append(out, ConfLine{Line: n, Rule: rule})
	}
}

// readPiece reads what one fgets(line, 256, file) call would: up to and
// including a newline, at most 255 bytes.
func readPiece(br *bufio.Reader) (string, error) {
	var b strings.Builder
	for b.Len() < maxConfLine-1 {
		c, err := br.ReadByte()
		if err != nil {
			return b.String(), err
		}
		b.WriteByte(c)
		if c == '\n' {
			break
		}
	}
	return b.String(), nil
}

func parseRule(tok []string, strict bool) (Rule, error) {
	r := Rule{PipeOps: -1, RegBuff: -1}
	var ok bool
	if r.Coll, ok = lookup(collNames[:], tok[0], Coll(0)); !ok {
		if strict {
			return r, fmt.Errorf("unknown collective %q (the plugin reads it as allreduce)", tok[0])
		}
		r.Coll = AllReduce
	}
	if r.Algo, ok = lookup(algoNames[:], tok[3], Algo(0)); !ok {
		if strict {
			return r, fmt.Errorf("unknown algorithm %q (the plugin reads it as ring)", tok[3])
		}
		r.Algo = Ring
	}
	protoNames := []string{"ll", "ll128", "simple"}
	if r.Proto, ok = lookup(protoNames, tok[4], Protocol(0)); !ok {
		if strict {
			return r, fmt.Errorf("unknown protocol %q (the plugin reads it as simple)", tok[4])
		}
		r.Proto = 2
	}
	var err error
	if r.MinBytes, err = strtoull(tok[1], strict); err != nil {
		return r, fmt.Errorf("min_bytes: %v", err)
	}
	if r.MaxBytes, err = strtoull(tok[2], strict); err != nil {
		return r, fmt.Errorf("max_bytes: %v", err)
	}
	ints := []*int{&r.Channels, &r.Nodes, &r.Ranks, &r.PipeOps, &r.RegBuff}
	for i, t := range tok[5:] {
		if *ints[i], err = atoi(t, strict); err != nil {
			return r, fmt.Errorf("field %d: %v", 6+i, err)
		}
	}
	if strict {
		if err := r.check(); err != nil {
			return r, err
		}
	}
	return r, nil
}

func lookup[T ~int](names []string, s string, _ T) (T, bool) {
	for i, n := range names {
		if s == n {
			return T(i), true
		}
	}
	return 0, false
}

// strtoull reads a number as C's strtoull(s, NULL, 10) does: spaces, a
// sign, the longest run of digits (a minus wraps it, too many saturate),
// the rest ignored; strict mode wants digits alone.
func strtoull(s string, strict bool) (uint64, error) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	v, err := strconv.ParseUint(t[:i], 10, 64)
	if strict && (neg || i == 0 || i != len(t) || len(t) != len(s) || err != nil) {
		return 0, fmt.Errorf("%q is not a whole number of bytes", s)
	}
	switch {
	case i == 0:
		return 0, nil
	case err != nil:
		return math.MaxUint64, nil // ERANGE, whatever the sign
	case neg:
		return -v, nil
	}
	return v, nil
}

// atoi reads a number as C's atoi does (leading spaces, a sign, digits;
// the rest ignored); strict mode wants an integer alone, in int32.
func atoi(s string, strict bool) (int, error) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	j := 0
	if j < len(t) && (t[j] == '+' || t[j] == '-') {
		j++
	}
	for j < len(t) && t[j] >= '0' && t[j] <= '9' {
		j++
	}
	v, err := strconv.ParseInt(t[:j], 10, 64)
	if strict && (err != nil || v < math.MinInt32 || v > math.MaxInt32 || j != len(t) || len(t) != len(s)) {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	var ne *strconv.NumError
	switch {
	case errors.As(err, &ne) && ne.Err == strconv.ErrRange && t[0] == '-':
		v = math.MinInt64 // glibc's atoi is (int)strtol, which saturates
	case errors.As(err, &ne) && ne.Err == strconv.ErrRange:
		v = math.MaxInt64
	case err != nil:
		v = 0 // no digits
	}
	return int(int32(v)), nil
}

// Apply is the example plugin's getCollInfo: the first rule that matches
// the call (collective, size, nodes, ranks, pipelined operations,
// registered buffers: -1 matching any) and names a pair the cost table
// costs does not ignore makes that pair's cost 0, so that NCCL picks it,
// and sets its channels. It returns the table, the plugin's channel count
// (1 where no rule matches: the plugin's default) and the rule's index
// (-1 if none).
func (c *Config) Apply(call Call, nodes, ranks, regBuff int, costs [NumAlgos][NumProtocols]float64) ([NumAlgos][NumProtocols]float64, int, int) {
	pipeOps := max(call.PipeOps, 1)
	for i, r := range c.Rules {
		if r.Coll != call.Coll || uint64(call.Bytes) < r.MinBytes || uint64(call.Bytes) > r.MaxBytes ||
			(r.Nodes != -1 && r.Nodes != nodes) || (r.Ranks != -1 && r.Ranks != ranks) ||
			(r.PipeOps != -1 && r.PipeOps != pipeOps) || (r.RegBuff != -1 && r.RegBuff != regBuff) {
			continue
		}
		if r.Algo < 0 || r.Algo >= NumAlgos || r.Proto < 0 || r.Proto >= NumProtocols || costs[r.Algo][r.Proto] == ignore {
			continue
		}
		costs[r.Algo][r.Proto] = 0
		channels := 1
		if r.Channels != -1 {
			channels = r.Channels
		}
		return costs, channels, i
	}
	return costs, 1, -1
}

// ChooseWith returns what NCCL picks for call with the example plugin
// loaded with c (ncclGetAlgoInfo with a tuner): the plugin edits the cost
// table, NCCL picks the least cost and its channels, and the plugin's
// channel count replaces NCCL's. Time is the model's time of the pair
// picked (not the 0 the plugin wrote), and rule the rule that matched
// (-1 if none).
func (m *Model) ChooseWith(c *Config, call Call, regBuff bool) (ch Choice, rule int, err error) {
	t := m.costs(call)
	rb := 0
	if regBuff {
		rb = 1
	}
	_, channels, rule := c.Apply(call, m.sys.Nodes, m.sys.Ranks, rb, m.Costs(call))
	if rule >= 0 {
		t[c.Rules[rule].Algo][c.Rules[rule].Proto] = 0
	}
	ch, err = m.choose(call, t)
	if err != nil {
		return ch, rule, err
	}
	ch.Channels = channels
	ch.Time = float64(m.time(call.Coll, ch.Algo, ch.Proto, call.Bytes, max(call.PipeOps, 1)))
	return ch, rule, nil
}
