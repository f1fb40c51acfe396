package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/nexar-go/nexar-go/sim"
)

// savedChange is the serial form of what results.csv cannot say of a
// row: its Recovery and Join (what the reports read of them, times in the
// simulator's picoseconds, so that a row read back reports them exactly as
// the run did; one row of many changes the world), and the Symmetry its
// run proved. A resumed run's checkpoint and a shard's manifest carry this
// instead.
type savedChange struct {
	Shrunk   *savedShrunk `json:"shrunk,omitempty"`
	Grown    *savedGrown  `json:"grown,omitempty"`
	Symmetry string       `json:"symmetry,omitempty"`
}

type savedShrunk struct {
	Failed   int      `json:"failed"`
	Hit      bool     `json:"hit"`
	World    int      `json:"world"`
	FailedAt sim.Time `json:"failed_at_ps"`
	Detected sim.Time `json:"detected_ps"`
	Agreed   sim.Time `json:"agreed_ps"`
	Rebuilt  sim.Time `json:"rebuilt_ps"`
	End      sim.Time `json:"end_ps"`
	// Run is Result.End.
	Run sim.Time `json:"run_ps"`
}

type savedGrown struct {
	World   int      `json:"world"`
	Joined  int      `json:"joined"`
	Agreed  sim.Time `json:"agreed_ps"`
	Rebuilt sim.Time `json:"rebuilt_ps"`
	End     sim.Time `json:"end_ps"`
	Run     sim.Time `json:"run_ps"`
}

// EncodeChange returns in one line of JSON how r's point changed the
// world (Recovery, Join) and under which group its run simulated one rank
// for all (Symmetry); nil if neither.
func (r Row) EncodeChange() ([]byte, error) {
	c := savedChange{Symmetry: r.Symmetry}
	if s := r.Recovery; s != nil {
		c.Shrunk = &savedShrunk{Failed: s.Failed, Hit: s.Hit, World: s.World, FailedAt: s.FailedAt, Detected: s.Detected,
			Agreed: s.Agreed, Rebuilt: s.Rebuilt, End: s.End, Run: s.Result.End}
	}
	if g := r.Join; g != nil {
		c.Grown = &savedGrown{World: g.World, Joined: g.Joined, Agreed: g.Agreed, Rebuilt: g.Rebuilt, End: g.End, Run: g.Result.End}
	}
	if c.Shrunk == nil && c.Grown == nil && c.Symmetry == "" {
		return nil, nil
	}
	return json.Marshal(c)
}

// DecodeChange sets r's Recovery, Join and Symmetry from what
// EncodeChange wrote.
// The runs' results they hold keep only what reports read, Result.End:
// the row itself has the rest.
func (r *Row) DecodeChange(data []byte) error {
	var c savedChange
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(&c)
	if err == nil && dec.More() {
		err = fmt.Errorf("more after the change")
	}
	if err != nil {
		return fmt.Errorf("the world change of row %s/%s at %d ranks: %v", r.Collective, r.Algorithm, r.World, err)
	}
	if g := c.Symmetry; g != "" && !sim.IsSymmetryGroup(g) {
		return fmt.Errorf("the run of row %s/%s at %d ranks: symmetry group %q: want cyclic or xor (sim.Result.SymmetryGroup)", r.Collective, r.Algorithm, r.World, g)
	}
	r.Recovery, r.Join, r.Symmetry = nil, nil, c.Symmetry
	if s := c.Shrunk; s != nil {
		r.Recovery = &sim.Shrunk{Failed: s.Failed, Hit: s.Hit, World: s.World, FailedAt: s.FailedAt, Detected: s.Detected,
			Agreed: s.Agreed, Rebuilt: s.Rebuilt, End: s.End, Result: &sim.Result{End: s.Run}}
	}
	if g := c.Grown; g != nil {
		r.Join = &sim.Grown{World: g.World, Joined: g.Joined, Agreed: g.Agreed, Rebuilt: g.Rebuilt, End: g.End,
			Result: &sim.Result{End: g.Run}}
	}
	return nil
}
