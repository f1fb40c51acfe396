package algotest

import "sync"

// The references of the catalogue's collectives. Each fills the inputs
// with data built so that a misplaced or missing block, or a reduction in
// any order, is caught (Fill, Distinct, Tagged), and the outputs that are
// not inputs with Garbage, so that an element the collective never writes
// is caught too.
func init() {
	for name, r := range map[string]Reference{
		"allgather":      allgatherReference,
		"allreduce":      allreduceReference,
		"alltoall":       alltoallReference,
		"barrier":        barrierReference,
		"broadcast":      broadcastReference,
		"gather":         gatherReference,
		"reduce":         reduceReference,
		"reduce_scatter": reduceScatterReference,
		"scan":           scanReference,
		"scatter":        scatterReference,
		"sendrecv":       sendrecvReference,
	} {
		RegisterReference(name, r)
	}
}

// head is the first n bytes of b, or all of b if it is shorter.
func head(b []byte, n int) []byte { return b[:min(n, len(b))] }

// allreduceReference: every rank's buf holds Input and must end as
// Reduced; a lossy algorithm (a compressed allreduce) is held to what it
// must compute instead, CompressedReduced: the same compression of the
// same inputs, bit for bit (see AllreduceExpected).
func allreduceReference(c Case) Data {
	want := sync.OnceValue(func() []byte {
		return AllreduceExpected(c.Algorithm, c.Params, c.Count, c.DType, c.Op, c.World, c.Seed)
	})
	return func(rank int, _, buf []byte) []byte {
		Fill(head(buf, c.Count*c.DType.Size()), c.DType, c.Op, rank, c.World, c.Seed)
		return want()
	}
}

// reduceScatterReference: rank r's send is ReduceScatterInput; its buf
// must end as block r of the reduction of every rank's input.
func reduceScatterReference(c Case) Data {
	b := c.Block()
	want := sync.OnceValue(func() [][]byte { return ReduceScattered(b, c.DType, c.Op, c.World, c.Seed) })
	return func(rank int, send, buf []byte) []byte {
		copy(send, ReduceScatterInput(b, c.DType, c.Op, rank, c.World, c.Seed))
		w := want()[rank]
		copy(buf, Garbage(w))
		return w
	}
}

// allgatherReference: rank r's send is AllgatherInput; every rank's buf
// must end as Allgathered, rank i's block at block i.
func allgatherReference(c Case) Data {
	b := c.Block()
	want := sync.OnceValue(func() []byte { return Allgathered(b, c.DType, c.World, c.Seed) })
	return func(rank int, send, buf []byte) []byte {
		copy(send, AllgatherInput(b, c.DType, rank, c.Seed))
		w := want()
		copy(buf, Garbage(w))
		return w
	}
}

// alltoallReference: block j of rank r's send is meant for rank j and
// differs for every pair; block j of rank r's buf must end as what rank j
// meant for r.
func alltoallReference(c Case) Data {
	b := c.Block()
	return func(rank int, send, buf []byte) []byte {
		copy(send, AlltoallInput(b, c.DType, rank, c.World, c.Seed))
		w := AlltoallOutput(b, c.DType, rank, c.World, c.Seed)
		copy(buf, Garbage(w))
		return w
	}
}

// broadcastReference: the root's buf holds its data, every other rank's
// Garbage; every rank must end with the root's data.
func broadcastReference(c Case) Data {
	want := sync.OnceValue(func() []byte { return Broadcasted(c.Count, c.DType, c.Root, c.Seed) })
	garbage := sync.OnceValue(func() []byte { return Garbage(want()) })
	return func(rank int, _, buf []byte) []byte {
		if rank == c.Root {
			copy(buf, want())
		} else {
			copy(buf, garbage())
		}
		return want()
	}
}

// reduceReference: every rank's buf holds Input; the root's must end as
// their reduction, Reduced. Other ranks' buffers are unspecified
// (algorithms may leave partial results there).
func reduceReference(c Case) Data {
	want := sync.OnceValue(func() []byte { return Reduced(c.Count, c.DType, c.Op, c.World, c.Seed) })
	return func(rank int, _, buf []byte) []byte {
		Fill(head(buf, c.Count*c.DType.Size()), c.DType, c.Op, rank, c.World, c.Seed)
		if rank != c.Root {
			return nil
		}
		return want()
	}
}

// gatherReference: rank r's send is Distinct(r); the root's buf must end
// as Gathered. Other ranks' buf is not the collective's to write.
func gatherReference(c Case) Data {
	b := c.Block()
	want := sync.OnceValue(func() []byte { return Gathered(b, c.DType, c.World, c.Seed) })
	return func(rank int, send, buf []byte) []byte {
		copy(send, Distinct(b, c.DType, rank, c.Seed))
		if rank != c.Root {
			return nil
		}
		w := want()
		copy(buf, Garbage(w))
		return w
	}
}

// scatterReference: the root's send holds every rank's block
// (ScatterInput); rank r's buf must end as block r.
func scatterReference(c Case) Data {
	b := c.Block()
	return func(rank int, send, buf []byte) []byte {
		if rank == c.Root {
			copy(send, ScatterInput(b, c.DType, rank, c.Root, c.World, c.Seed))
		}
		w := Scattered(b, c.DType, rank, c.Seed)
		copy(buf, Garbage(w))
		return w
	}
}

// scanReference: every rank's buf holds Input and must end as the
// reduction of ranks 0..r (0..r-1 with the parameter exclusive = 1).
func scanReference(c Case) Data {
	want := sync.OnceValue(func() [][]byte {
		return Scanned(c.Count, c.DType, c.Op, c.World, c.Seed, c.Params["exclusive"] != 0)
	})
	return func(rank int, _, buf []byte) []byte {
		Fill(head(buf, c.Count*c.DType.Size()), c.DType, c.Op, rank, c.World, c.Seed)
		return want()[rank]
	}
}

// barrierReference: a barrier moves no data.
func barrierReference(Case) Data {
	return func(int, []byte, []byte) []byte { return nil }
}

// sendrecvReference: every rank's send is rank 0's message, Distinct(0),
// and its buf Garbage. The message must reach rank 1, and come back to
// rank 0 in the ping-pong (the algorithm "latency"); a world of one rank
// copies it. Ranks past 1 take no part: their buf must stay as it was.
// Rank 0's buf is not the other benchmarks' to define.
func sendrecvReference(c Case) Data {
	msg := sync.OnceValue(func() []byte { return Distinct(c.Count, c.DType, 0, c.Seed) })
	garbage := sync.OnceValue(func() []byte { return Garbage(msg()) })
	pingPong := c.Algorithm != nil && c.Algorithm.Name == "latency"
	return func(rank int, send, buf []byte) []byte {
		copy(send, msg())
		copy(buf, garbage())
		switch {
		case rank == 1 || c.World == 1 || rank == 0 && pingPong:
			return msg()
		case rank > 1:
			return garbage()
		}
		return nil
	}
}
