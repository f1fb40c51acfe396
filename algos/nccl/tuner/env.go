package tuner

import (
	"fmt"
	"strings"

	"github.com/nexar-go/nexar-go/algos/nccl"
)

// enables are NCCL's enable matrices of algorithms and protocols by
// collective (algoEnable and protoEnable in ncclTopoTuneModel): 1 on, 0
// off, and for LL128 2, "on where the hardware runs it" (the default;
// LL128 named in NCCL_PROTO is 1, on whatever the hardware).
type enables struct {
	algo  [NumColls][NumAlgos]int
	proto [NumColls][NumProtocols]int
}

// parseEnables reads NCCL_ALGO and NCCL_PROTO ("" for unset) as NCCL
// 2.30.7 does (parseList, src/graph/tuning.cc): entries separated by
// ';', each an optional collective and ':' (only the first may lack it,
// and then holds for every collective), then a list separated by ',' of
// names, matched without regard to case, or of names to leave out when
// the list starts with '^'. An entry sets every name of its collectives
// off (on with '^'), then the listed ones on (off). Empty items vanish,
// as strtok drops them; spaces are part of a name, as in NCCL, which
// then refuses it.
func parseEnables(algo, proto string) (enables, error) {
	var e enables
	for c := range NumColls {
		for a := range NumAlgos {
			e.algo[c][a] = 1
		}
		for p := range Protocol(NumProtocols) {
			e.proto[c][p] = 1
			if p == nccl.LL128 {
				e.proto[c][p] = 2
			}
		}
	}
	if err := parseList(proto, protoPrinted[:], func(c, i, v int) { e.proto[c][i] = v }); err != nil {
		return e, fmt.Errorf("NCCL_PROTO=%q: %w", proto, err)
	}
	if err := parseList(algo, algoPrinted[:], func(c, i, v int) { e.algo[c][i] = v }); err != nil {
		return e, fmt.Errorf("NCCL_ALGO=%q: %w", algo, err)
	}
	return e, nil
}

// CheckEnv reports whether NCCL would take algo and proto as NCCL_ALGO
// and NCCL_PROTO, and why not.
func CheckEnv(algo, proto string) error {
	_, err := parseEnables(algo, proto)
	return err
}

// parseList applies the entries of s to the collectives' lists of
// names, through set(collective, name, value).
func parseList(s string, names []string, set func(c, i, v int)) error {
	for n, entry := range fields(s, ";") {
		// strtok: a collective and a list, what follows a second ':'
		// unread; a lone item is a list, allowed only first.
		parts := fields(entry, ":")
		var prefix, list string
		switch {
		case len(parts) == 0:
			return fmt.Errorf("entry %q names nothing", entry)
		case len(parts) == 1:
			if n > 0 || strings.HasPrefix(s, ";") {
				return fmt.Errorf("every entry but the first must name its collective (%q does not)", entry)
			}
			list = parts[0]
		default:
			prefix, list = parts[0], parts[1]
		}
		off, on := 0, 1
		if strings.HasPrefix(list, "^") {
			off, on, list = 1, 0, list[1:]
		}
		matched := false
		for c := range NumColls {
			if prefix != "" && !strings.EqualFold(prefix, collPrinted[c]) {
				continue
			}
			matched = true
			for i := range names {
				set(int(c), i, off)
			}
			for _, name := range fields(list, ",") {
				i := indexFold(names, name)
				if i < 0 {
					return fmt.Errorf("unknown name %q (want %s)", name, strings.Join(names, ", "))
				}
				set(int(c), i, on)
			}
		}
		if !matched {
			return fmt.Errorf("unknown collective %q (want %s)", prefix, strings.Join(collPrinted[:], ", "))
		}
	}
	return nil
}

// fields splits s at sep, leaving out empty pieces, as strtok does.
func fields(s, sep string) []string {
	var out []string
	for _, f := range strings.Split(s, sep) {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

func indexFold(names []string, s string) int {
	for i, n := range names {
		if strings.EqualFold(n, s) {
			return i
		}
	}
	return -1
}
