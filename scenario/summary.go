package scenario

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// networkSummary describes the [network] table t and the faults read
// before it in one line, for captions that must tell one network from
// another: the model, then the table's other keys with their values as
// the file gives them, in the file's order, then the faults:
//
//	flow: topology fat_tree, tiers 2, radix 16, oversubscription 3, link_bandwidth 25Gbit/s, link_latency 1us; latency jitter lognormal(mean 4us, stddev 4us)
//
// Sub-tables ([network.transport]) describe realnet, not the simulated
// network, and are left out, but for model = "realnet", whose two paths
// they are.
func (c *checker) networkSummary(t *table) string {
	type kv struct {
		line     int
		key, val string
	}
	var kvs []kv
	model, _ := t.m["model"].(string)
	if name, ok := t.m["preset"].(string); ok && model == "" {
		if p, err := LookupPreset(name); err == nil {
			v, _ := p.Value("model")
			model, _ = v.(string)
		}
	}
	var add func(path string, m map[string]any)
	add = func(path string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok && model == "realnet" && k == "transport" {
				add(joinPath(path, k), sub)
			}
			if text, ok := valueText(v); ok && (path != t.path || k != "model") {
				kvs = append(kvs, kv{lineOf(c.lines, joinPath(path, k)), k, text})
			}
		}
	}
	add(t.path, t.m)
	slices.SortFunc(kvs, func(a, b kv) int { return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.key, b.key)) })
	parts := make([]string, len(kvs))
	for i, p := range kvs {
		parts[i] = p.key + " " + p.val
	}
	s := model
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	var faults []string
	for _, f := range c.faultList {
		faults = append(faults, f.String())
	}
	if len(faults) > 0 {
		s += "; " + strings.Join(faults, "; ")
	}
	return s
}

// valueText writes a TOML value as a caption shows it: strings bare,
// numbers and booleans as Go prints them, arrays in brackets; false for
// tables, which a one-line summary leaves out.
func valueText(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case int64:
		return strconv.FormatInt(v, 10), true
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), true
	case bool:
		return strconv.FormatBool(v), true
	case []any:
		items := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := valueText(e); ok {
				items = append(items, s)
			}
		}
		return "[" + strings.Join(items, ", ") + "]", true
	case map[string]any, []map[string]any:
		return "", false
	default:
		return fmt.Sprint(v), true
	}
}
