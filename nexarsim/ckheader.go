package nexarsim

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// ckHeader is what a checkpoint's first line says of the run that wrote
// it: its scenario's hash, its shard and, from this version on, its
// scenario's name.
type ckHeader struct {
	hash, shard, name string
}

func (h ckHeader) String() string {
	s := fmt.Sprintf("%s hash=%s shard=%s", checkpointMagic, h.hash, h.shard)
	if h.name != "" {
		s += " scenario=" + strconv.Quote(h.name)
	}
	return s
}

// parseCkHeader reads a checkpoint's first line, as ckHeader.String
// writes it (a line without its scenario's name is an earlier version's);
// ok is false for a line that is not a checkpoint's.
func parseCkHeader(line string) (h ckHeader, ok bool) {
	rest, ok := strings.CutPrefix(line, checkpointMagic+" ")
	if !ok {
		return h, false
	}
	hash, rest, _ := strings.Cut(rest, " ")
	shard, name, _ := strings.Cut(rest, " ")
	if h.hash, ok = strings.CutPrefix(hash, "hash="); !ok || h.hash == "" {
		return ckHeader{}, false
	}
	if h.shard, ok = strings.CutPrefix(shard, "shard="); !ok {
		return ckHeader{}, false
	}
	if name != "" {
		q, ok := strings.CutPrefix(name, "scenario=")
		if !ok {
			return ckHeader{}, false
		}
		var err error
		if h.name, err = strconv.Unquote(q); err != nil {
			return ckHeader{}, false
		}
	}
	return h, true
}

// foreignCheckpoint says how the checkpoint in dir, whose first line is
// first, differs from the run of want: another scenario (or the same file
// changed since), another shard, or no checkpoint at all.
func foreignCheckpoint(dir, first string, want ckHeader) error {
	got, ok := parseCkHeader(first)
	if !ok {
		return fmt.Errorf("%s does not start as a checkpoint of nexar-sim does (%q)", filepath.Join(dir, checkpointFile), first)
	}
	var diffs []string
	if got.hash != want.hash {
		what := "another scenario"
		switch {
		case got.name != "" && got.name != want.name:
			what = fmt.Sprintf("scenario %q, not %q", got.name, want.name)
		case got.name != "":
			what = fmt.Sprintf("scenario %q as it was before it changed", got.name)
		}
		diffs = append(diffs, fmt.Sprintf("%s (hash %s, this run's %s)", what, short(got.hash), short(want.hash)))
	}
	if got.shard != want.shard {
		diffs = append(diffs, fmt.Sprintf("shard %s, not %s", got.shard, want.shard))
	}
	return fmt.Errorf("the checkpoint in %s is of %s: its rows are not this run's points", dir, strings.Join(diffs, ", and "))
}
