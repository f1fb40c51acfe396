package launch

import (
	"fmt"
	"strconv"
	"strings"
)

// RankFailure is one rank of a failed run.
type RankFailure struct {
	Rank int
	// End says how the process ended: "killed by signal: killed",
	// "exit status 3", "killed by nexar-live after rank 3 failed", ...
	End string
	// Point is the point it was measuring ("" before the first).
	Point string
	// Err is the error it reported, if any, and Blamed the peer that error
	// names (-1 if none).
	Err    string
	Blamed int
	// Hung is set for a rank killed because the run made no progress.
	Hung bool
}

func (f RankFailure) String() string {
	s := fmt.Sprintf("rank %d: %s", f.Rank, f.End)
	if f.Point != "" && !strings.HasPrefix(f.Err, f.Point) {
		s += ", during " + f.Point
	}
	if f.Err != "" {
		s += ": " + f.Err
	}
	return s
}

// RunError reports a run that did not finish: the ranks to blame and
// what became of every rank that did not end cleanly.
type RunError struct {
	// Culprits are the ranks the failure is attributed to: a rank that
	// died or failed on its own, else the ranks the others' errors name,
	// else the ranks that hung.
	Culprits []int
	// Ranks are every rank that did not finish cleanly, by rank.
	Ranks []RankFailure
	// Hung is set when the run was stopped for making no progress.
	Hung bool
}

func (e *RunError) Error() string {
	var b strings.Builder
	names := make([]string, len(e.Culprits))
	for i, r := range e.Culprits {
		names[i] = strconv.Itoa(r)
	}
	who := "rank " + strings.Join(names, "")
	if len(names) != 1 {
		who = "ranks " + strings.Join(names, ", ")
	}
	switch {
	case e.Hung:
		fmt.Fprintf(&b, "live: %s hung: no rank made progress", who)
	case len(names) == 1:
		for _, f := range e.Ranks {
			if f.Rank != e.Culprits[0] {
				continue
			}
			if f.Err == "" && strings.HasPrefix(f.End, "killed by nexar-live") && !strings.Contains(f.End, "--kill") {
				fmt.Fprintf(&b, "live: %s stopped responding: the other ranks lost it, and nexar-live killed it", who)
			} else {
				fmt.Fprintf(&b, "live: %s failed (%s)", who, f.End)
			}
		}
		if b.Len() == 0 {
			fmt.Fprintf(&b, "live: %s failed (the other ranks lost it)", who)
		}
	default:
		fmt.Fprintf(&b, "live: %s failed", who)
	}
	for _, f := range e.Ranks {
		b.WriteString("\n  " + f.String())
	}
	return b.String()
}
