package scenario

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Error is one problem with a scenario file.
type Error struct {
	// File is the file's name as given to Parse or Load.
	File string
	// Line is the line of the problem, from 1; 0 when it concerns the
	// whole file (it cannot be read).
	Line int
	// Key is the key the problem concerns, as a path such as
	// "network.latency" or "sweep[1].world" (sweeps count from 0); empty
	// for syntax errors that name no key.
	Key string
	// Msg says what is wrong and what was expected.
	Msg string
}

// Error formats e as "file:line: key: message", leaving out the parts
// that are missing.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	if e.File != "" || e.Line > 0 {
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in a scenario, in the order of the lines
// they concern. Parse and Load return one (never empty) when the scenario
// is bad, so that a user can fix every problem at once.
type Errors []*Error

// Error joins the errors, one per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the errors, for errors.As and errors.Is.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Sort orders es by line, keeping the order of errors on one line.
func (es Errors) Sort() {
	sort.SliceStable(es, func(i, j int) bool { return es[i].Line < es[j].Line })
}

// Err returns es sorted, or nil if es is empty, so that a function can
// return it as an error without making a non-nil error of an empty list.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	es.Sort()
	return es
}

// Errorf returns an error about key of sweep s, on the line that defines the
// key (or the sweep's header if the key is not in the file), for checks
// made outside this package such as those of package sweep.
func (s *Sweep) Errorf(key, format string, args ...any) *Error {
	return &Error{File: s.file, Line: s.KeyLine(key), Key: s.Key(key), Msg: fmt.Sprintf(format, args...)}
}

// PolicyErrorf returns an error about the policy the sweep's "auto"
// selects by: on the line of the sweep's own policy key, or else of the
// file's.
func (s *Sweep) PolicyErrorf(format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if _, own := s.lines[s.Key("policy")]; own {
		return &Error{File: s.file, Line: s.KeyLine("policy"), Key: s.Key("policy"), Msg: msg}
	}
	if n := lineOf(s.lines, "policy"); n > 0 {
		return &Error{File: s.file, Line: n, Key: "policy", Msg: msg}
	}
	return &Error{File: s.file, Line: s.KeyLine("algorithms"), Key: s.Key("algorithms"), Msg: msg}
}

// TuningErrorf returns an error about the tuning table the sweep's "auto"
// uses: on the line of the sweep's own tuning key, or else of the file's,
// or else of the sweep's algorithms (nexar's default table).
func (s *Sweep) TuningErrorf(format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if _, own := s.lines[s.Key("tuning")]; own || s.TuningFile == "" {
		key := "tuning"
		if !own {
			key = "algorithms"
		}
		return &Error{File: s.file, Line: s.KeyLine(key), Key: s.Key(key), Msg: msg}
	}
	return &Error{File: s.file, Line: lineOf(s.lines, "tuning"), Key: "tuning", Msg: msg}
}
