package verify

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// writeParams writes a sweep's params line, its names in order; nothing
// when there are none.
func writeParams(b *bytes.Buffer, params map[string]int) {
	if len(params) == 0 {
		return
	}
	names := slices.Sorted(maps.Keys(params))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s = %d", n, params[n])
	}
	fmt.Fprintf(b, "params = { %s }\n", strings.Join(parts, ", "))
}
