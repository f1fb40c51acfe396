package launch

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexar-go/nexar-go/realnet"
)

var update = flag.Bool("update", false, "rewrite the actions in testdata/*.txt with what the supervisor does")

// TestTranscripts plays every testdata/*.txt through the supervisor, as
// etcd-io/raft's interaction tests play theirs through its state machine:
// each line is an event, and the lines after it that begin with "> " are
// the actions the supervisor answers with. The test fails when they
// differ; go test -run TestTranscripts -update rewrites them.
//
// Events (the clock starts at an arbitrary instant and moves only with
// tick):
//
//	launch np=N [timeout=D] [grace=D] [stop-grace=D] [shrink] [min-np=N] [kill=R@P,...] [join-late=P,...] [fail-start=R]
//	                    a Launcher with these fields starts ranks 0 to N-1 (pid 100+rank);
//	                    rank R's worker, if any, cannot start
//	rank R exit C       rank R's process exited with status C
//	rank R signal S     rank R's process was killed by signal S
//	rank R LINE         rank R wrote LINE on its status pipe (protocol.go)
//	tick +D             the clock moves by D and ticks
//	interrupt           the launcher's context ended (Ctrl-C)
//	member dead R: CAUSE
//	member rebuild epoch=E members=R,... [failed=R,...] [joined=R,...] point=P agreed=D
//	member rebuilt epoch=E members=R,... rebuild=D
//	member abort: CAUSE  the membership coordinator noticed or decided this
//	close               Run returns
//
// Actions: "start R" (a late member; it starts as pid 100+R, or Run
// returns the error of its start), "kill R: WHY", "interrupt R", "say:
// LINE", and "finish: " with ok, interrupted, or the error Run returns.
//
// Lines that begin with # and blank lines are kept as they are.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := playTranscript(string(data))
			if err != nil {
				t.Fatal(err)
			}
			if got == string(data) {
				return
			}
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			t.Errorf("%s: the supervisor does otherwise (go test -run TestTranscripts -update rewrites it):\n%s", file, firstDifference(string(data), got))
		})
	}
}

// firstDifference shows where want and got first differ, and got from
// there.
func firstDifference(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range gl {
		if i >= len(wl) || wl[i] != gl[i] {
			w := "(end of file)"
			if i < len(wl) {
				w = wl[i]
			}
			return fmt.Sprintf("line %d: want\n\t%s\ngot\n\t%s", i+1, w, strings.Join(gl[i:], "\n\t"))
		}
	}
	return fmt.Sprintf("line %d: want\n\t%s\ngot the end of the file", len(gl)+1, wl[len(gl)])
}

// transcript is a transcript being played: the supervisor, its clock,
// and the output so far.
type transcript struct {
	sup       *supervisor
	failStart int  // the rank whose worker cannot start, -1 for none
	ended     bool // a worker could not start: Run returns its error
	now       time.Time
	out       strings.Builder
}

// playTranscript plays the events of text and returns text with each
// event's actions after it.
func playTranscript(text string) (string, error) {
	tr := &transcript{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if strings.HasPrefix(line, "> ") || line == ">" {
			continue
		}
		tr.out.WriteString(line + "\n")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := tr.play(line); err != nil {
			return "", fmt.Errorf("line %d: %q: %v", i+1, line, err)
		}
	}
	return tr.out.String(), nil
}

// play plays one event line.
func (tr *transcript) play(line string) error {
	word, rest, _ := strings.Cut(line, " ")
	if word == "launch" {
		p, failStart, err := parsePolicy(rest)
		if err != nil {
			return err
		}
		tr.sup, tr.failStart, tr.ended = newSupervisor(p), failStart, false
		for r := 0; r < p.np && !tr.ended; r++ {
			tr.step(tr.start(r))
		}
		return nil
	}
	if tr.sup == nil {
		return errors.New("no launch line before it")
	}
	if (tr.sup.finished || tr.ended) && word != "close" && word != "member" {
		return errors.New("the run is over")
	}
	ev, err := parseEvent(word, rest, tr)
	if err != nil {
		return err
	}
	tr.step(ev)
	return nil
}

// step steps the supervisor with ev and writes the actions, starting
// the late members it asks for as Run does.
func (tr *transcript) step(ev event) {
	acts := tr.sup.step(tr.now, ev)
	for len(acts) > 0 {
		a := acts[0]
		acts = acts[1:]
		tr.out.WriteString(formatAction(a))
		if s, ok := a.(startRank); ok {
			acts = append(acts, tr.sup.step(tr.now, tr.start(s.rank))...)
		}
	}
}

// start is what comes of starting rank r's worker.
func (tr *transcript) start(r int) event {
	if r == tr.failStart {
		tr.ended = true
		tr.out.WriteString(fmt.Sprintf("> (rank %d cannot start: Run returns the error)\n", r))
		return startFailed{}
	}
	return started{r, 100 + r}
}

func formatAction(a action) string {
	var s string
	switch a := a.(type) {
	case startRank:
		s = fmt.Sprintf("start %d", a.rank)
	case killRank:
		s = fmt.Sprintf("kill %d: %s", a.rank, a.why)
	case interruptRank:
		s = fmt.Sprintf("interrupt %d", a.rank)
	case say:
		s = "say: " + a.line
	case finish:
		switch {
		case a.interrupted:
			s = "finish: interrupted"
		case a.err == nil:
			s = "finish: ok"
		default:
			s = "finish: " + a.err.Error()
		}
	default:
		s = fmt.Sprintf("%#v", a)
	}
	return "> " + strings.ReplaceAll(s, "\n", "\n> ") + "\n"
}

// parsePolicy reads a launch line's fields: the policy, and the rank
// whose worker cannot start (-1 for none).
func parsePolicy(fields string) (p policy, failStart int, err error) {
	l := &Launcher{}
	failStart = -1
	for _, f := range strings.Fields(fields) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "np":
			l.NP, err = strconv.Atoi(v)
		case "timeout":
			l.Timeout, err = time.ParseDuration(v)
		case "grace":
			l.Grace, err = time.ParseDuration(v)
		case "stop-grace":
			l.StopGrace, err = time.ParseDuration(v)
		case "shrink":
			l.Shrink = true
		case "min-np":
			l.MinNP, err = strconv.Atoi(v)
		case "kill":
			l.Kill = map[int]int{}
			for _, rp := range strings.Split(v, ",") {
				var r, p int
				if _, err = fmt.Sscanf(rp, "%d@%d", &r, &p); err != nil {
					break
				}
				l.Kill[r] = p
			}
		case "join-late":
			l.JoinLate, err = parseInts(v)
		case "fail-start":
			failStart, err = strconv.Atoi(v)
		default:
			return p, 0, fmt.Errorf("unknown field %q", k)
		}
		if err != nil {
			return p, 0, fmt.Errorf("%s: %v", f, err)
		}
	}
	if l.NP < 1 {
		return p, 0, errors.New("want np=N, N at least 1")
	}
	return l.policy(), failStart, nil
}

// parseEvent reads an event line that begins with word.
func parseEvent(word, rest string, tr *transcript) (event, error) {
	switch word {
	case "rank":
		rs, what, _ := strings.Cut(rest, " ")
		r, err := strconv.Atoi(rs)
		if err != nil || r < 0 || r >= len(tr.sup.ranks) {
			return nil, fmt.Errorf("no rank %q", rs)
		}
		kind, arg, _ := strings.Cut(what, " ")
		switch kind {
		case "exit":
			c, err := strconv.Atoi(arg)
			if err != nil {
				return nil, err
			}
			if c == 0 {
				return exited{r, ""}, nil
			}
			return exited{r, fmt.Sprintf("exit status %d", c)}, nil
		case "signal":
			return exited{r, "killed by signal " + arg}, nil
		}
		return wrote{r, what}, nil
	case "tick":
		d, err := time.ParseDuration(strings.TrimPrefix(rest, "+"))
		if err != nil || !strings.HasPrefix(rest, "+") {
			return nil, fmt.Errorf("want tick +DURATION")
		}
		tr.now = tr.now.Add(d)
		return tick{}, nil
	case "interrupt":
		return interrupted{}, nil
	case "close":
		return closing{}, nil
	case "member":
		e, err := parseMembership(rest)
		e.At = tr.now
		return membership{e}, err
	}
	return nil, fmt.Errorf("unknown event %q", word)
}

// parseMembership reads what follows "member".
func parseMembership(s string) (realnet.MembershipEvent, error) {
	kind, rest, _ := strings.Cut(s, " ")
	kind = strings.TrimSuffix(kind, ":")
	e := realnet.MembershipEvent{Kind: kind}
	switch kind {
	case "dead":
		m, cause, ok := strings.Cut(rest, ": ")
		var err error
		if e.Member, err = strconv.Atoi(m); err != nil || !ok {
			return e, errors.New("want member dead R: CAUSE")
		}
		e.Cause = cause
		return e, nil
	case "abort":
		e.Cause = rest
		return e, nil
	case "rebuild", "rebuilt":
	default:
		return e, fmt.Errorf("unknown membership event %q", kind)
	}
	for _, f := range strings.Fields(rest) {
		k, v, _ := strings.Cut(f, "=")
		var err error
		switch k {
		case "epoch":
			e.Epoch, err = strconv.Atoi(v)
		case "point":
			e.Point, err = strconv.Atoi(v)
		case "members":
			e.Members, err = parseInts(v)
		case "failed":
			e.Failed, err = parseInts(v)
		case "joined":
			e.Joined, err = parseInts(v)
		case "agreed":
			e.Agreed, err = time.ParseDuration(v)
		case "rebuild":
			e.Rebuild, err = time.ParseDuration(v)
		default:
			err = errors.New("unknown field")
		}
		if err != nil {
			return e, fmt.Errorf("%s: %v", f, err)
		}
	}
	return e, nil
}

func parseInts(s string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		ns = append(ns, n)
	}
	return ns, nil
}
