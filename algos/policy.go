package algos

import (
	"errors"
	"fmt"
)

// A Policy selects the algorithm of an "auto" call from a model of the
// hardware, where a Tuning table looks it up: NCCL's own choice is one
// (package algos/nccl/tuner; a scenario's policy = "nccl"). A Tuning
// with a Policy asks it first: SelectFor, with the machine the call runs
// on ("auto" passes its link's), and Select, with none (a Comm's).
type Policy interface {
	// Name names the policy, as a scenario's policy key does.
	Name() string
	// Select returns the algorithm and parameters for collective on
	// world ranks with a message of bytes bytes, as nccl-tests counts
	// them, and count elements, on machine m (nil if the link knows
	// none). It must return the same on every rank. It returns an error
	// wrapping ErrNoChoice when it has no choice for the call (a
	// collective it does not cover), and the table decides.
	Select(collective string, m *Machine, world, bytes, count int) (Choice, error)
}

// ErrNoChoice is wrapped by a Policy's error when it leaves a call to
// the table.
var ErrNoChoice = errors.New("no choice")

// PolicyError is a Policy's failure to select, as SelectFor returns it.
type PolicyError struct {
	Policy string
	Err    error
}

func (e *PolicyError) Error() string { return fmt.Sprintf("policy %s: %v", e.Policy, e.Err) }

// Unwrap returns the policy's error.
func (e *PolicyError) Unwrap() error { return e.Err }

// SelectFor returns the algorithm t picks for collective on world ranks
// of machine m (nil if unknown) with a message of bytes bytes and count
// elements: its Policy's choice if it has one and makes one, else the
// table's (Select). A policy's failure is a *PolicyError.
func (t *Tuning) SelectFor(m *Machine, collective string, world, bytes, count int) (Choice, error) {
	if t.Policy != nil {
		ch, err := t.Policy.Select(collective, m, world, bytes, count)
		switch {
		case err == nil:
			if ch.From == "" {
				ch.From = "policy " + t.Policy.Name()
			}
			return ch, nil
		case !errors.Is(err, ErrNoChoice):
			return Choice{}, &PolicyError{Policy: t.Policy.Name(), Err: err}
		}
	}
	return t.selectTable(collective, world, bytes, count)
}

// WithPolicy returns a copy of t (nexar's default table if t is nil)
// that asks p first. The copy shares t's collectives, which neither
// modifies.
func (t *Tuning) WithPolicy(p Policy) *Tuning {
	if t == nil {
		t = DefaultTuning()
	}
	out := *t
	out.Policy = p
	return &out
}
