package schedule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// TE-CCL (microsoft/TE-CCL) solves a collective as a multi-commodity
// flow in time: time is cut into epochs of equal duration; in each epoch
// a link carries whole chunks; a chunk sent over link (i,j) in epoch e is
// at j from epoch e+1+ceil(alpha(i,j)/epoch) (the link's capacity being
// one chunk an epoch; alpha is left out where it is below the solver's
// alpha_threshold of an epoch). Its solution is a JSON object:
//
//	"1-Epoch_Duration"          the epoch, in seconds
//	"2-Expected_Epoch_Duration" the epoch asked for, in seconds
//	"3-Epochs_Required"         epochs until the last chunk arrives
//	"4-Collective_Finish_Time"  epochs required times the epoch, in seconds
//	"5-Algo_Bandwidth"          the algorithm's bandwidth
//	"6-Demand_Met"              {"GPU d": {"GPU s": {"Chunk c": seconds}}}
//	"7-Flows"                   ["Chunk C from S traveled over A->B in epoch E", ...]
//	                            (a flow through switches ends " via switches X")
//
// A TECCL is the solution read; Schedule makes it an MSCCL schedule.

// TECCL is a TE-CCL solution: its epochs and flows, over GPUs numbered
// as the solution numbers them.
type TECCL struct {
	File string
	// Epoch is 1-Epoch_Duration and Finish 4-Collective_Finish_Time, in
	// seconds; Epochs is 3-Epochs_Required.
	Epoch, Finish float64
	Epochs        int
	// GPUs are the solution's GPU ids, ascending: GPU GPUs[r] runs as rank r.
	GPUs []int
	// Chunks is how many chunks each GPU's input is cut into.
	Chunks int
	Flows  []Flow
}

// Flow is one line of 7-Flows: chunk Chunk of GPU Src crossed link
// From->To in epoch Epoch (as ranks, not GPU ids).
type Flow struct {
	Chunk, Src, From, To, Epoch int
	// Switches is the " via switches ..." part, "" for a direct link.
	Switches string
	// Again marks a flow that brings its receiver a chunk it already has
	// (its own, or one an earlier flow brought): TE-CCL's solutions may
	// carry such copies; the schedule moves them too, into scratch.
	Again bool
}

type tecclJSON struct {
	Epoch  *float64                                 `json:"1-Epoch_Duration"`
	Epochs *int                                     `json:"3-Epochs_Required"`
	Finish *float64                                 `json:"4-Collective_Finish_Time"`
	Demand map[string]map[string]map[string]float64 `json:"6-Demand_Met"`
	Flows  []string                                 `json:"7-Flows"`
	// TE-CCL writes an alltoall solution with these keys in place of
	// 6-Demand_Met and 7-Flows: read only to name it in the error.
	AlltoallFlows json.RawMessage `json:"6-Flows"`
	AlltoallPaths json.RawMessage `json:"7-chunk paths"`
}

var flowRE = regexp.MustCompile(`^Chunk (\d+) from (\d+) traveled over (\d+)->(\d+) in epoch (\d+)(?: via switches (.+))?$`)

// LoadTECCL reads the TE-CCL solution at path (see ParseTECCL).
func LoadTECCL(path string) (*TECCL, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	return ParseTECCL(path, data)
}

// ParseTECCL reads a TE-CCL solution, file naming it in errors. It reads
// allgather solutions (6-Demand_Met names every chunk of every GPU at
// every other GPU), and checks that every flow's sender holds its chunk
// in an earlier epoch and that every GPU receives every chunk (a chunk
// received again is marked Again). Other keys (8-Chunk paths) are not
// read. An alltoall solution (6-Flows and 7-chunk paths in place of
// 6-Demand_Met and 7-Flows) is refused as such. An error names the file
// and the JSON path.
func ParseTECCL(file string, data []byte) (*TECCL, error) {
	var j tecclJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, jsonError(file, data, err)
	}
	t := &TECCL{File: file}
	fail := func(path, format string, args ...any) error {
		return fmt.Errorf("%s: %s: %s", file, path, fmt.Sprintf(format, args...))
	}
	switch {
	case len(j.Demand) == 0 && (j.AlltoallFlows != nil || j.AlltoallPaths != nil):
		return nil, fail("6-Flows", "a TE-CCL alltoall solution (6-Flows and 7-chunk paths, no 6-Demand_Met): TE-CCL alltoall solutions are not supported, only allgather ones")
	case j.Epoch == nil || !(*j.Epoch > 0):
		return nil, fail("1-Epoch_Duration", "want a positive number of seconds")
	case j.Epochs == nil || *j.Epochs < 0:
		return nil, fail("3-Epochs_Required", "want a number of epochs, 0 or more")
	case j.Finish == nil || !(*j.Finish >= 0):
		return nil, fail("4-Collective_Finish_Time", "want a number of seconds, 0 or more")
	case len(j.Demand) == 0:
		return nil, fail("6-Demand_Met", `want {"GPU d": {"GPU s": {"Chunk c": seconds}}} naming the GPUs`)
	}
	t.Epoch, t.Epochs, t.Finish = *j.Epoch, *j.Epochs, *j.Finish
	if err := t.demand(j.Demand, fail); err != nil {
		return nil, err
	}
	if err := t.flows(j.Flows, fail); err != nil {
		return nil, err
	}
	return t, nil
}

// jsonError names the line of a JSON syntax or type error.
func jsonError(file string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("%s:%d: %v", file, lineAt(data, se.Offset), err)
	case errors.As(err, &te):
		return fmt.Errorf("%s:%d: %s: want %s, not JSON %s", file, lineAt(data, te.Offset), te.Field, te.Type, te.Value)
	}
	return fmt.Errorf("%s: %v", file, err)
}

func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// numbered reads "GPU 3" or "Chunk 0".
func numbered(key, word string) (int, bool) {
	s, ok := strings.CutPrefix(key, word+" ")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && strconv.Itoa(n) == s
}

type failFunc func(path, format string, args ...any) error

// demand reads 6-Demand_Met: the GPUs, the chunks, and that the demand is
// an allgather's.
func (t *TECCL) demand(d map[string]map[string]map[string]float64, fail failFunc) error {
	type key struct{ dst, src, c int }
	met := map[key]bool{}
	ids := map[int]bool{}
	for _, dk := range sortedKeys(d) {
		dst, ok := numbered(dk, "GPU")
		path := fmt.Sprintf("6-Demand_Met[%q]", dk)
		if !ok {
			return fail(path, `want a key "GPU n"`)
		}
		ids[dst] = true
		for _, sk := range sortedKeys(d[dk]) {
			src, ok := numbered(sk, "GPU")
			if !ok {
				return fail(fmt.Sprintf("%s[%q]", path, sk), `want a key "GPU n"`)
			}
			ids[src] = true
			for _, ck := range sortedKeys(d[dk][sk]) {
				c, ok := numbered(ck, "Chunk")
				if !ok || c > 1<<16 {
					return fail(fmt.Sprintf("%s[%q][%q]", path, sk, ck), `want a key "Chunk c"`)
				}
				t.Chunks = max(t.Chunks, c+1)
				met[key{dst, src, c}] = true
			}
		}
	}
	for id := range ids {
		t.GPUs = append(t.GPUs, id)
	}
	sort.Ints(t.GPUs)
	for _, dst := range t.GPUs {
		for _, src := range t.GPUs {
			for c := 0; c < t.Chunks && src != dst; c++ {
				if !met[key{dst, src, c}] {
					return fail("6-Demand_Met", "GPU %d does not demand chunk %d of GPU %d: the reader takes allgather solutions, where every GPU demands every chunk", dst, c, src)
				}
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// flows reads 7-Flows and checks that they deliver every chunk, each
// sent by a GPU that held it in an earlier epoch.
func (t *TECCL) flows(lines []string, fail failFunc) error {
	rank := map[int]int{}
	for r, id := range t.GPUs {
		rank[id] = r
	}
	at := make([]int, len(lines)) // the index each flow came from
	for i, line := range lines {
		path := fmt.Sprintf("7-Flows[%d]", i)
		m := flowRE.FindStringSubmatch(line)
		if m == nil {
			return fail(path, "%q: want \"Chunk C from S traveled over A->B in epoch E\" (and optionally \" via switches X\")", abbrev(line))
		}
		var n [5]int
		for k := range n {
			v, err := strconv.Atoi(m[k+1])
			if err != nil || v > 1<<30 {
				return fail(path, "%q: %s is out of range", abbrev(line), m[k+1])
			}
			n[k] = v
		}
		f := Flow{Chunk: n[0], Epoch: n[4], Switches: m[6]}
		for k, p := range []*int{&f.Src, &f.From, &f.To} {
			r, ok := rank[n[k+1]]
			if !ok {
				return fail(path, "%q: node %d is not a GPU of 6-Demand_Met", abbrev(line), n[k+1])
			}
			*p = r
		}
		switch {
		case f.Chunk >= t.Chunks:
			return fail(path, "%q: chunk %d, where 6-Demand_Met names %d chunks a GPU", abbrev(line), f.Chunk, t.Chunks)
		case f.From == f.To:
			return fail(path, "%q: a link from a GPU to itself", abbrev(line))
		}
		t.Flows = append(t.Flows, f)
		at[i] = i
	}
	sort.SliceStable(at, func(a, b int) bool { return t.Flows[at[a]].less(t.Flows[at[b]]) })
	return t.causal(at, fail)
}

func (f Flow) less(g Flow) bool {
	a := [5]int{f.Epoch, f.From, f.To, f.Src, f.Chunk}
	b := [5]int{g.Epoch, g.From, g.To, g.Src, g.Chunk}
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// causal checks the flows, at holding their indices in epoch order.
func (t *TECCL) causal(at []int, fail failFunc) error {
	n, k := len(t.GPUs), t.Chunks
	// got[r][s*k+c] is 1 + the epoch r received chunk c of s in (-1: its own).
	got := make([][]int, n)
	for r := range got {
		got[r] = make([]int, n*k)
		for c := range k {
			got[r][r*k+c] = -1
		}
	}
	for _, i := range at {
		f := t.Flows[i]
		path := fmt.Sprintf("7-Flows[%d]", i)
		ch := f.Src*k + f.Chunk
		if g := got[f.From][ch]; g == 0 || g-1 >= f.Epoch && g > 0 {
			return fail(path, "GPU %d sends chunk %d of GPU %d in epoch %d before it has received it", t.GPUs[f.From], f.Chunk, t.GPUs[f.Src], f.Epoch)
		}
		if got[f.To][ch] != 0 {
			t.Flows[i].Again = true // a copy its receiver has: kept, as the network carries it
			continue
		}
		got[f.To][ch] = f.Epoch + 1
	}
	for r := range got {
		for ch, g := range got[r] {
			if g == 0 {
				return fail("7-Flows", "GPU %d never receives chunk %d of GPU %d", t.GPUs[r], ch%k, t.GPUs[ch/k])
			}
		}
	}
	return nil
}

// Schedule returns the solution as an MSCCL allgather schedule, out of
// place, of len(GPUs) times Chunks chunks: rank r copies its input into
// its chunks of the output; for each GPU it sends to, a threadblock sends
// the chunks of the flows over that link in the order of their epochs
// (its own from its input, the others from the output once first
// received); for each GPU it receives from, a threadblock receives them
// in the same order (a chunk received again into a scratch chunk of its
// own). The epochs themselves are not kept: a chunk goes as soon as the
// link's threadblock has sent the earlier ones and the chunk has arrived,
// so the schedule finishes no later than the solution's epochs when the
// network's costs are those the solution was solved for.
func (t *TECCL) Schedule() (*Schedule, error) {
	n, k := len(t.GPUs), t.Chunks
	name := strings.TrimSuffix(filepath.Base(t.File), filepath.Ext(t.File))
	b := newBuilder(name, "allgather", n, n*k, false)
	b.s.File = t.File
	order := make([]int, len(t.Flows))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, c int) bool { return t.Flows[order[a]].less(t.Flows[order[c]]) })
	for r := range n {
		g := &b.s.GPUs[r]
		g.IChunks, g.OChunks = k, n*k
		cp := b.tb(r, -1, -1, 0)
		b.step(r, cp, Copy, 'i', 0, 'o', r*k, k, noDep)
		// recvAt[ch] is the step that receives output chunk ch.
		recvAt := map[int]dep{}
		for peer := range n {
			tb := -1
			for _, i := range order {
				if f := t.Flows[i]; f.To == r && f.From == peer {
					if tb < 0 {
						tb = b.tb(r, -1, peer, 0)
					}
					ch := f.Src*k + f.Chunk
					if f.Again {
						b.step(r, tb, Recv, 's', g.SChunks, 's', g.SChunks, 1, noDep)
						g.SChunks++
						continue
					}
					recvAt[ch] = b.step(r, tb, Recv, 'o', ch, 'o', ch, 1, noDep)
				}
			}
		}
		for peer := range n {
			tb := -1
			for _, i := range order {
				f := t.Flows[i]
				if f.From != r || f.To != peer {
					continue
				}
				if tb < 0 {
					tb = b.tb(r, peer, -1, 0)
				}
				ch := f.Src*k + f.Chunk
				if f.Src == r {
					b.step(r, tb, Send, 'i', f.Chunk, 'o', ch, 1, noDep)
				} else {
					b.step(r, tb, Send, 'o', ch, 'o', ch, 1, recvAt[ch])
				}
			}
		}
	}
	if err := b.s.check(); err != nil {
		return nil, err
	}
	return b.s, nil
}
