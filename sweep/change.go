package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/nexar-go/nexar-go/sim"
)

// savedChange is the serial form of a row's Recovery and Join: what the
// reports read of them, times in the simulator's picoseconds, so that a
// row read back reports them exactly as the run did. results.csv has no
// column for them (one row of many changes the world); a resumed run's
// checkpoint and a shard's manifest carry this instead.
type savedChange struct {
	Shrunk *savedShrunk `json:"shrunk,omitempty"`
	Grown  *savedGrown  `json:"grown,omitempty"`
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

// EncodeChange returns how r's point changed the world (Recovery, Join)
// in one line of JSON, nil if it did not.
func (r Row) EncodeChange() ([]byte, error) {
	var c savedChange
	if s := r.Recovery; s != nil {
		c.Shrunk = &savedShrunk{Failed: s.Failed, Hit: s.Hit, World: s.World, FailedAt: s.FailedAt, Detected: s.Detected,
			Agreed: s.Agreed, Rebuilt: s.Rebuilt, End: s.End, Run: s.Result.End}
	}
	if g := r.Join; g != nil {
		c.Grown = &savedGrown{World: g.World, Joined: g.Joined, Agreed: g.Agreed, Rebuilt: g.Rebuilt, End: g.End, Run: g.Result.End}
	}
	if c.Shrunk == nil && c.Grown == nil {
		return nil, nil
	}
	return json.Marshal(c)
}

// DecodeChange sets r's Recovery and Join from what EncodeChange wrote.
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
	r.Recovery, r.Join = nil, nil
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
