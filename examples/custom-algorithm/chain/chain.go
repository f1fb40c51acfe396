// Package chain adds an allreduce algorithm to nexar-go's catalogue from
// outside nexar-go's module, as a user's module does: "chain" reduces the
// buffer down a chain of ranks, 0 -> 1 -> ... -> p-1, and sends the result
// back up it. Each rank sends one message down and one up, so its cost on
// alpha-beta is plain to derive:
//
//	T = 2(p-1)(α + nβ) + (p-1)nγ
//
// It ties with the ring on tiny messages on few ranks and loses to it
// everywhere else: it is here to show how an algorithm is added, tested and
// run, not to win. Importing the package registers it.
package chain

import (
	"context"
	"fmt"

	"github.com/nexar-go/nexar-go/algos"
)

// Tags of the chain's two phases. Algorithms own the low 16 bits of a
// tag (algos.AlgoTagBits); a Comm scopes the rest per operation.
const (
	tagDown algos.Tag = 0x7c01
	tagUp   algos.Tag = 0x7c02
)

// Algorithm is the catalogue's entry: what scenarios, nexar-sim list and
// nexar-live call "chain".
var Algorithm = &algos.Algorithm{
	Name:    "chain",
	Summary: "reduce down a chain of ranks, send the result back up; 2(p-1)(α+nβ) + (p-1)nγ (examples/custom-algorithm)",
	Run:     Allreduce,
}

func init() { algos.MustRegisterAlgorithm("allreduce", Algorithm) }

// Allreduce reduces c.Buf over every rank, in place, with c.Op over
// elements of c.DType.
func Allreduce(ctx context.Context, l algos.Link, c algos.Call) error {
	buf, dt := c.Buf, c.DType
	if buf.Len()%dt.Size() != 0 {
		return fmt.Errorf("chain: buffer of %d bytes is not a whole number of %s elements", buf.Len(), dt)
	}
	r, p := l.Rank(), l.Size()
	if p == 1 || buf.Len() == 0 {
		return nil
	}
	// Down: rank r folds the partial result of ranks 0..r-1 into its own
	// buffer and passes it on.
	if r > 0 {
		partial := l.Alloc(buf.Len())
		if err := algos.Recv(ctx, l, r-1, tagDown, partial); err != nil {
			return err
		}
		// partial op buf keeps the operands in rank order, so that every
		// rank ends with the same bits.
		if err := l.Reduce(partial, buf, dt, c.Op); err != nil {
			return err
		}
		if err := l.Copy(buf, partial); err != nil {
			return err
		}
	}
	if r < p-1 {
		if err := algos.Send(ctx, l, r+1, tagDown, buf); err != nil {
			return err
		}
		// Up: the last rank holds the result; it comes back rank by rank.
		if err := algos.Recv(ctx, l, r+1, tagUp, buf); err != nil {
			return err
		}
	}
	if r > 0 {
		return algos.Send(ctx, l, r-1, tagUp, buf)
	}
	return nil
}
