package schedule

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// An MSCCL++ execution plan (microsoft/mscclpp's executor reads it; its
// python/mscclpp/language writes it) is JSON: name, collective, protocol,
// inplace, and per GPU (gpus[]) its id, input_chunks, output_chunks,
// scratch_chunks, channels ([{channel_type, connected_to: [peer, ...]}],
// type for channel_type in older plans: the GPU's channels of each type,
// numbered in order), remote_buffers
// ([{rank, type}]) and threadblocks: each with its channels
// ([{channel_type, channel_ids}], ids of the GPU's channels), its
// remote_buffer_refs ([{access_channel_type, remote_buffer_ids}]) and ops,
// run in order. An op's channel_ids index the threadblock's channels of
// its channel_type; a remote chunk's buffer_id indexes the threadblock's
// remote_buffer_ids for that type. The k-th channel of GPU a to GPU b is
// connected to the k-th channel of b to a.
//
// What maps onto the Link (ReadMSCCLPP), as the MSCCL schedule's steps:
//
//   - put (and pws, pwsf: put with signal) over a memory or port channel
//     writes local chunks into a peer's buffer; the signal that follows on
//     that channel makes the puts before it a message each, sent then
//     (Send), and the peer's matching wait (the j-th wait on the channel
//     matches the j-th signal) receives them into the chunks the puts
//     named (Recv);
//   - a signal with no put before it, and its wait, only order the two
//     GPUs (a barrier): dropped, the Link's receives order the data;
//   - copy is a copy, re (reduce) sets its dst_buff to the reduction of
//     its src_buff (a copy of the first, then a reduce of each other; a
//     source that is dst_buff's memory, as i and o are in place, is the
//     one copied, which is then no copy at all);
//   - nop and flush do nothing on the Link.
//
// What does not map, and is refused naming the op: get and the read_*
// ops (rre, rres: a GPU reading a peer's memory, which the Link cannot
// express as a message the peer sends), the packet ops (ppkt, rppkt,
// cpkt, tpkt, upkt, repkt, respkt: LL packets carry flags in the data),
// res (reduce and put in one), the switch (NVLS) ops and channels
// (gstore, glre, glres), sem_acquire, sem_release and barrier (syncs
// between threadblocks of a GPU, which the Link's schedules express as
// step dependencies, not semaphores), and pipeline (a loop of the ops it
// holds over parts of the chunks). The older camelCase format
// (inputChunks, ops with i_buff and o_cids) is refused as such. A
// threadblock must send to one peer and receive from one (an MSCCL
// threadblock's send and recv), over the same channel number.

type ppPlan struct {
	Name       string  `json:"name"`
	Collective string  `json:"collective"`
	Protocol   string  `json:"protocol"`
	InPlace    *bool   `json:"inplace"`
	GPUs       []ppGPU `json:"gpus"`
	// Colletive is how some older plans misspell collective: read only
	// to refuse their format by name.
	Colletive json.RawMessage `json:"colletive"`
}

type ppGPU struct {
	ID      *int `json:"id"`
	In      int  `json:"input_chunks"`
	Out     int  `json:"output_chunks"`
	Scratch int  `json:"scratch_chunks"`
	// CamelIn is the older camelCase format's inputChunks: read only to
	// refuse that format by name.
	CamelIn json.RawMessage `json:"inputChunks"`
	TBs     []struct {
		Ops      []ppOp `json:"ops"`
		Channels []struct {
			Type string `json:"channel_type"`
			IDs  []int  `json:"channel_ids"`
		} `json:"channels"`
		Refs []struct {
			Type string `json:"access_channel_type"`
			IDs  []int  `json:"remote_buffer_ids"`
		} `json:"remote_buffer_refs"`
	} `json:"threadblocks"`
	Channels []ppChannel `json:"channels"`
	Remote   []struct {
		Rank int    `json:"rank"`
		Type string `json:"type"`
	} `json:"remote_buffers"`
}

// ppChannel is an entry of a GPU's channels. Current plans name its type
// channel_type, as the executor reads it
// (src/core/executor/execution_plan.cc); earlier ones type. Both are
// read, channel_type first.
type ppChannel struct {
	Type        string `json:"type"`
	ChannelType string `json:"channel_type"`
	To          []int  `json:"connected_to"`
}

func (ch ppChannel) typ() string { return cmp.Or(ch.ChannelType, ch.Type) }

type ppOp struct {
	Name        string    `json:"name"`
	Src         []ppChunk `json:"src_buff"`
	Dst         []ppChunk `json:"dst_buff"`
	ChannelIDs  []int     `json:"channel_ids"`
	ChannelType string    `json:"channel_type"`
}

type ppChunk struct {
	Type     string `json:"type"`
	BufferID *int   `json:"buffer_id"`
	Index    int    `json:"index"`
	Size     int    `json:"size"`
}

// ppRefused are the ops that do not map, and why.
var ppRefused = map[string]string{
	"get":         "a GPU reading a peer's memory",
	"rre":         "a GPU reading a peer's memory (read_reduce)",
	"rres":        "a GPU reading a peer's memory (read_reduce_send)",
	"res":         "a reduce that writes a peer's memory (reduce_send)",
	"ppkt":        "LL packets (put_packet)",
	"rppkt":       "LL packets (read_put_packet)",
	"cpkt":        "LL packets (copy_packet)",
	"tpkt":        "LL packets (transform_to_packet)",
	"upkt":        "LL packets (unpack_packet)",
	"repkt":       "LL packets (reduce_packet)",
	"respkt":      "LL packets (reduce_send_packet)",
	"gstore":      "switch (NVLS) multimem",
	"glre":        "switch (NVLS) multimem",
	"glres":       "switch (NVLS) multimem",
	"sem_acquire": "semaphores between threadblocks",
	"sem_release": "semaphores between threadblocks",
	"barrier":     "a barrier between threadblocks",
	"pipeline":    "a loop of the ops it holds over parts of the chunks (pipeline)",
}

// LoadMSCCLPP reads the MSCCL++ execution plan at path (see ParseMSCCLPP).
func LoadMSCCLPP(path string) (*Schedule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	return ParseMSCCLPP(path, data)
}

// ParseMSCCLPP reads an MSCCL++ execution plan, file naming it in errors,
// as an MSCCL schedule (see the package documentation for the ops that
// map and those refused), and checks it as Parse does. An error names
// the file and the JSON path.
func ParseMSCCLPP(file string, data []byte) (*Schedule, error) {
	var p ppPlan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, jsonError(file, data, err)
	}
	c := &ppConv{file: file, p: &p}
	s, err := c.convert()
	if err != nil {
		return nil, err
	}
	return s, nil
}

type ppConv struct {
	file string
	p    *ppPlan
	b    *builder
	// sigs are the put groups each signal sends, by connection; waits
	// the waits, in order.
	sigs  map[ppConn][][]ppPut
	waits map[ppConn]int
	items [][][]ppItem // per GPU, per threadblock
}

// ppConn is the k-th channel from GPU a to GPU b (of a type).
type ppConn struct {
	a, b, k int
	typ     string
}

type ppPut struct {
	src      ppChunk
	dst      byte
	off, cnt int
}

// ppItem is one thing a threadblock does, in order: a local step, a
// signal sending sig's puts, or a wait receiving the puts of the j-th
// signal on conn.
type ppItem struct {
	local *Step
	conn  ppConn
	send  bool
	puts  []ppPut
	j     int
	path  string
}

func (c *ppConv) errorf(path, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %s", c.file, path, fmt.Sprintf(format, args...))
}

func (c *ppConv) convert() (*Schedule, error) {
	p := c.p
	if err := c.camel(); err != nil {
		return nil, err
	}
	coll := p.Collective
	switch coll {
	case "allreduce", "allgather", "reducescatter", "alltoall":
	default:
		return nil, c.errorf("collective", "%q: want allreduce, allgather, reducescatter or alltoall", coll)
	}
	n := len(p.GPUs)
	if n == 0 || n > 1024 {
		return nil, c.errorf("gpus", "want 1 to 1024 GPUs, not %d", n)
	}
	inPlace := p.InPlace != nil && *p.InPlace
	name := p.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(c.file), filepath.Ext(c.file))
	}
	nchunks := 0
	for i, g := range p.GPUs {
		path := fmt.Sprintf("gpus[%d]", i)
		if g.ID == nil || *g.ID != i {
			return nil, c.errorf(path+".id", "want ids 0 to %d in order", n-1)
		}
		for _, v := range []struct {
			k string
			n int
		}{{"input_chunks", g.In}, {"output_chunks", g.Out}, {"scratch_chunks", g.Scratch}} {
			if v.n < 0 || v.n > 1<<16 {
				return nil, c.errorf(path+"."+v.k, "%d: want 0 to 65536", v.n)
			}
		}
		if coll == "allreduce" || coll == "reducescatter" {
			nchunks = max(nchunks, g.In)
		} else {
			nchunks = max(nchunks, g.Out)
		}
	}
	if nchunks == 0 {
		return nil, c.errorf("gpus", "no GPU has chunks in its collective's buffer")
	}
	c.b = newBuilder(name, coll, n, nchunks, inPlace)
	c.b.s.File = c.file
	if p.Protocol != "" {
		c.b.s.Proto = p.Protocol
	}
	c.sigs, c.waits = map[ppConn][][]ppPut{}, map[ppConn]int{}
	c.items = make([][][]ppItem, n)
	for i := range p.GPUs {
		gs := &c.b.s.GPUs[i]
		gs.IChunks, gs.OChunks, gs.SChunks = p.GPUs[i].In, p.GPUs[i].Out, p.GPUs[i].Scratch
	}
	for i := range p.GPUs {
		for t := range p.GPUs[i].TBs {
			items, err := c.tb(i, t)
			if err != nil {
				return nil, err
			}
			c.items[i] = append(c.items[i], items)
		}
	}
	if err := c.match(); err != nil {
		return nil, err
	}
	if err := c.emit(); err != nil {
		return nil, err
	}
	if err := c.b.s.check(); err != nil {
		return nil, err
	}
	return c.b.s, nil
}

// camel refuses the camelCase format of older MSCCL++ plans
// (inputChunks, outputChunks, ops with i_buff, o_cids and ctype, some
// with collective misspelt colletive): its ops and channels are laid out
// differently, and read as the current format they would only give
// misleading errors (no chunks, no collective).
func (c *ppConv) camel() error {
	path := ""
	if c.p.Colletive != nil {
		path = "colletive"
	}
	for i, g := range c.p.GPUs {
		if path == "" && g.CamelIn != nil {
			path = fmt.Sprintf("gpus[%d].inputChunks", i)
		}
	}
	if path == "" {
		return nil
	}
	return c.errorf(path, "the older camelCase MSCCL++ plan format (inputChunks, outputChunks, ops with i_buff and o_cids) is not supported: want a plan in the current format (input_chunks, output_chunks, ops with src_buff and dst_buff), as current MSCCL++ writes it")
}

// channel resolves index i of the threadblock's channels of type typ to
// the connection it is: its peer and its number among the GPU's channels
// of that type to that peer.
func (c *ppConv) channel(gi, t int, typ string, i int, path string) (ppConn, error) {
	g := &c.p.GPUs[gi]
	if typ != "memory" && typ != "port" {
		return ppConn{}, c.errorf(path, "channel_type %q: the reader maps memory and port channels (switch channels are NVLS multimem)", typ)
	}
	var ids []int
	for _, ch := range g.TBs[t].Channels {
		if ch.Type == typ {
			ids = append(ids, ch.IDs...)
		}
	}
	if i < 0 || i >= len(ids) {
		return ppConn{}, c.errorf(path, "channel %d: threadblock has %d %s channel(s)", i, len(ids), typ)
	}
	var peers []int // the GPU's channels of type typ, in order
	for _, ch := range g.Channels {
		if ch.typ() == typ {
			peers = append(peers, ch.To...)
		}
	}
	id := ids[i]
	if id < 0 || id >= len(peers) {
		return ppConn{}, c.errorf(path, "%s channel %d: the GPU has %d", typ, id, len(peers))
	}
	peer := peers[id]
	if peer < 0 || peer >= len(c.p.GPUs) || peer == gi {
		return ppConn{}, c.errorf(path, "%s channel %d connects to GPU %d: want another GPU of the plan", typ, id, peer)
	}
	k := 0
	for _, q := range peers[:id] {
		if q == peer {
			k++
		}
	}
	return ppConn{gi, peer, k, typ}, nil
}

// chunk checks a local chunk and returns its buffer.
func (c *ppConv) chunk(gi int, ch ppChunk, path string) (byte, error) {
	if len(ch.Type) != 1 || !strings.Contains("ios", ch.Type) {
		return 0, c.errorf(path+".type", "%q: want i, o or s", ch.Type)
	}
	b := ch.Type[0]
	if n := c.b.s.GPUs[gi].chunks(b); ch.Size < 1 || ch.Index < 0 || ch.Index+ch.Size > n {
		return 0, c.errorf(path, "chunks %d to %d of buffer %s: want within its %d chunks", ch.Index, ch.Index+ch.Size-1, ch.Type, n)
	}
	return b, nil
}

// remote resolves a put's destination chunk: the peer's rank, buffer and
// chunks.
func (c *ppConv) remote(gi, t int, typ string, ch ppChunk, path string) (int, ppPut, error) {
	g := &c.p.GPUs[gi]
	if ch.BufferID == nil {
		return 0, ppPut{}, c.errorf(path, "a put's dst_buff names a remote buffer: want buffer_id")
	}
	var ids []int
	for _, r := range g.TBs[t].Refs {
		if r.Type == typ {
			ids = append(ids, r.IDs...)
		}
	}
	bid := *ch.BufferID
	if bid < 0 || bid >= len(ids) || ids[bid] < 0 || ids[bid] >= len(g.Remote) {
		return 0, ppPut{}, c.errorf(path+".buffer_id", "%d: want one of the threadblock's %d remote buffer(s) for %s channels", bid, len(ids), typ)
	}
	rb := g.Remote[ids[bid]]
	if rb.Rank < 0 || rb.Rank >= len(c.p.GPUs) || rb.Rank == gi {
		return 0, ppPut{}, c.errorf(path, "remote buffer of rank %d: want another GPU of the plan", rb.Rank)
	}
	dst := ch
	dst.Type = rb.Type
	b, err := c.chunk(rb.Rank, dst, path)
	if err != nil {
		return 0, ppPut{}, err
	}
	return rb.Rank, ppPut{dst: b, off: ch.Index, cnt: ch.Size}, nil
}

// tb reads threadblock t of GPU gi into items.
func (c *ppConv) tb(gi, t int) ([]ppItem, error) {
	var items []ppItem
	pending := map[ppConn][]ppPut{} // puts by connection, not yet signalled
	for oi, op := range c.p.GPUs[gi].TBs[t].Ops {
		path := fmt.Sprintf("gpus[%d].threadblocks[%d].ops[%d]", gi, t, oi)
		if why, ok := ppRefused[op.Name]; ok {
			return nil, c.errorf(path, "op %q does not map onto the Link: %s", op.Name, why)
		}
		switch op.Name {
		case "nop", "flush":
		case "copy", "re":
			steps, err := c.local(gi, op, path)
			if err != nil {
				return nil, err
			}
			for i := range steps {
				items = append(items, ppItem{local: &steps[i], path: path})
			}
		case "put", "pws", "pwsf":
			conns, err := c.put(gi, t, op, path, pending)
			if err != nil {
				return nil, err
			}
			if op.Name != "put" {
				for _, k := range conns {
					items = c.signal(items, k, pending, path)
				}
			}
		case "signal", "rlxsignal", "wait", "rlxwait":
			for i, id := range op.ChannelIDs {
				k, err := c.channel(gi, t, op.ChannelType, id, fmt.Sprintf("%s.channel_ids[%d]", path, i))
				if err != nil {
					return nil, err
				}
				if strings.HasSuffix(op.Name, "signal") {
					items = c.signal(items, k, pending, path)
					continue
				}
				from := ppConn{k.b, k.a, k.k, k.typ}
				items = append(items, ppItem{conn: from, j: c.waits[from], path: path})
				c.waits[from]++
			}
		default:
			return nil, c.errorf(path, "op %q: not an op of MSCCL++ execution plans that the reader knows", abbrev(op.Name))
		}
	}
	for k, puts := range pending {
		if len(puts) > 0 {
			return nil, c.errorf(fmt.Sprintf("gpus[%d].threadblocks[%d]", gi, t), "puts to GPU %d with no signal after them: the peer would never know the data arrived", k.b)
		}
	}
	return items, nil
}

// signal ends the puts pending on connection k: a message each.
func (c *ppConv) signal(items []ppItem, k ppConn, pending map[ppConn][]ppPut, path string) []ppItem {
	puts := pending[k]
	delete(pending, k)
	c.sigs[k] = append(c.sigs[k], puts)
	return append(items, ppItem{conn: k, send: true, puts: puts, j: len(c.sigs[k]) - 1, path: path})
}

// put records a put's chunks as pending on their connections.
func (c *ppConv) put(gi, t int, op ppOp, path string, pending map[ppConn][]ppPut) ([]ppConn, error) {
	if len(op.Src) != len(op.Dst) || len(op.Src) == 0 {
		return nil, c.errorf(path, "%d src_buff and %d dst_buff chunks: want as many, at least one", len(op.Src), len(op.Dst))
	}
	var conns []ppConn
	for i := range op.Src {
		sp, dp := fmt.Sprintf("%s.src_buff[%d]", path, i), fmt.Sprintf("%s.dst_buff[%d]", path, i)
		if _, err := c.chunk(gi, op.Src[i], sp); err != nil {
			return nil, err
		}
		peer, pu, err := c.remote(gi, t, op.ChannelType, op.Dst[i], dp)
		if err != nil {
			return nil, err
		}
		if op.Src[i].Size != op.Dst[i].Size {
			return nil, c.errorf(dp, "size %d, where the src_buff chunk has %d", op.Dst[i].Size, op.Src[i].Size)
		}
		pu.src = op.Src[i]
		k, err := c.putChannel(gi, t, op, i, peer, path)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(conns, k) {
			conns = append(conns, k)
		}
		pending[k] = append(pending[k], pu)
	}
	return conns, nil
}

// putChannel is the connection a put's i-th chunk goes over: its
// channel_ids[i] where given (port channels), else the threadblock's one
// channel of the type to the peer.
func (c *ppConv) putChannel(gi, t int, op ppOp, i, peer int, path string) (ppConn, error) {
	if i < len(op.ChannelIDs) {
		k, err := c.channel(gi, t, op.ChannelType, op.ChannelIDs[i], fmt.Sprintf("%s.channel_ids[%d]", path, i))
		if err == nil && k.b != peer {
			err = c.errorf(path, "channel %d goes to GPU %d, the remote buffer is GPU %d's", op.ChannelIDs[i], k.b, peer)
		}
		return k, err
	}
	var found []ppConn
	idx := 0
	for _, ch := range c.p.GPUs[gi].TBs[t].Channels {
		if ch.Type != op.ChannelType {
			continue
		}
		for range ch.IDs {
			if k, err := c.channel(gi, t, op.ChannelType, idx, path); err == nil && k.b == peer {
				found = append(found, k)
			}
			idx++
		}
	}
	if len(found) != 1 {
		return ppConn{}, c.errorf(path, "the threadblock has %d %s channel(s) to GPU %d: want one, or channel_ids", len(found), op.ChannelType, peer)
	}
	return found[0], nil
}

// local makes a copy or a reduce steps of the schedule.
func (c *ppConv) local(gi int, op ppOp, path string) ([]Step, error) {
	type ref struct {
		b        byte
		off, cnt int
	}
	read := func(list []ppChunk, key string) ([]ref, error) {
		var rs []ref
		for i, ch := range list {
			b, err := c.chunk(gi, ch, fmt.Sprintf("%s.%s[%d]", path, key, i))
			if err != nil {
				return nil, err
			}
			rs = append(rs, ref{b, ch.Index, ch.Size})
		}
		return rs, nil
	}
	src, err := read(op.Src, "src_buff")
	if err != nil {
		return nil, err
	}
	dst, err := read(op.Dst, "dst_buff")
	if err != nil {
		return nil, err
	}
	step := func(o Op, s, d ref) Step {
		return Step{Type: o, SrcBuf: s.b, SrcOff: s.off, DstBuf: d.b, DstOff: d.off, Cnt: d.cnt, DepID: -1, Deps: -1}
	}
	var steps []Step
	switch {
	case op.Name == "copy" && len(src) == len(dst) && len(src) > 0:
		for i := range src {
			if src[i].cnt != dst[i].cnt {
				return nil, c.errorf(path, "copies %d chunks into %d", src[i].cnt, dst[i].cnt)
			}
			steps = append(steps, step(Copy, src[i], dst[i]))
		}
	case op.Name == "re" && len(dst) == 1 && len(src) >= 1:
		// dst = the reduction of the sources: a copy of the first, then a
		// reduce of each other, unless a source is dst's memory (in
		// place, i and o may be one), which is then the first.
		d := dst[0]
		var over []int // the sources that share memory with dst
		same := -1     // the one that is dst's memory, if any
		for i, s := range src {
			if s.cnt != d.cnt {
				return nil, c.errorf(path, "src_buff[%d] has %d chunks, dst_buff %d", i, s.cnt, d.cnt)
			}
			switch c.b.s.chunkOverlap(gi, s.b, s.off, d.b, d.off, d.cnt) {
			case sameMem:
				over, same = append(over, i), i
			case partMem:
				over = append(over, i)
			}
		}
		first := 0
		if len(over) == 1 && over[0] == same {
			first = same
		} else if len(over) > 1 || (len(over) == 1 && over[0] > 0) {
			return nil, c.errorf(path, "src_buff[%d] overlaps dst_buff: the reduction would read what it wrote", over[len(over)-1])
		}
		if same != first {
			steps = append(steps, step(Copy, src[first], d))
		}
		for i, s := range src {
			if i != first {
				steps = append(steps, step(Reduce, s, d))
			}
		}
	default:
		return nil, c.errorf(path, "%s with %d src_buff and %d dst_buff chunks: want as many for copy, one dst_buff for re", op.Name, len(src), len(dst))
	}
	return steps, nil
}

// match checks that every signal has its wait.
func (c *ppConv) match() error {
	keys := make([]ppConn, 0, len(c.sigs)+len(c.waits))
	for k := range c.sigs {
		keys = append(keys, k)
	}
	for k := range c.waits {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y ppConn) int {
		return cmp.Or(x.a-y.a, x.b-y.b, strings.Compare(x.typ, y.typ), x.k-y.k)
	})
	for _, k := range keys {
		groups := c.sigs[k]
		if w := c.waits[k]; w != len(groups) {
			return c.errorf("gpus", "GPU %d signals GPU %d %d time(s) on its %s channel %d to it, and GPU %d waits %d time(s) on the matching channel: a wait that never ends or a signal never waited for", k.a, k.b, len(groups), k.typ, k.k, k.b, w)
		}
	}
	return nil
}

// emit writes every threadblock's items as the schedule's steps.
func (c *ppConv) emit() error {
	chans := 1
	for gi := range c.items {
		for t, items := range c.items[gi] {
			send, recv, ch := -1, -1, -1
			at := func(peer *int, want int, k ppConn, path string) error {
				if *peer >= 0 && *peer != want {
					return c.errorf(path, "threadblock %d of GPU %d exchanges with GPUs %d and %d: the reader maps a threadblock that sends to one peer and receives from one", t, gi, *peer, want)
				}
				if ch >= 0 && ch != k.k {
					return c.errorf(path, "threadblock %d of GPU %d uses channels %d and %d to its peers: want one channel number", t, gi, ch, k.k)
				}
				*peer, ch = want, k.k
				return nil
			}
			for _, it := range items {
				var err error
				switch {
				case it.local != nil:
				case it.send && len(it.puts) > 0:
					err = at(&send, it.conn.b, it.conn, it.path)
				case !it.send && len(c.sigs[it.conn][it.j]) > 0:
					err = at(&recv, it.conn.a, it.conn, it.path)
				}
				if err != nil {
					return err
				}
			}
			tb := c.b.tb(gi, send, recv, max(ch, 0))
			chans = max(chans, ch+1)
			for _, it := range items {
				c.emitItem(gi, tb, it)
			}
		}
	}
	c.b.s.NChannels = chans
	return nil
}

func (c *ppConv) emitItem(gi, tb int, it ppItem) {
	switch {
	case it.local != nil:
		st := *it.local
		c.b.step(gi, tb, st.Type, st.SrcBuf, st.SrcOff, st.DstBuf, st.DstOff, st.Cnt, noDep)
	case it.send:
		for _, p := range it.puts {
			c.b.step(gi, tb, Send, p.src.Type[0], p.src.Index, p.dst, p.off, p.cnt, noDep)
		}
	default:
		for _, p := range c.sigs[it.conn][it.j] {
			c.b.step(gi, tb, Recv, p.dst, p.off, p.dst, p.off, p.cnt, noDep)
		}
	}
}
