package calibrate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nexar-go/nexar-go/algos"
	"github.com/nexar-go/nexar-go/units"
)

// recordedSetting is the value of the model setting called name that a
// run's transport thresholds give, and whether they give one: realnet's
// bulk_threshold and eager_threshold are the run's own; the eager_limit of
// the protocol models is where realnet's protocol changes, the eager
// threshold in eager mode, else the bulk threshold (never: neverLimit).
func recordedSetting(name string, t algos.Thresholds) (int, bool) {
	switch name {
	case "bulk_threshold":
		return t.Bulk, true
	case "eager_threshold":
		return t.Eager, true
	case "eager_limit":
		switch {
		case t.Eager > 0:
			return t.Eager, true
		case t.Bulk < 0:
			return neverLimit, true
		}
		return max(t.Bulk, 1), true // 0 sends every message with a payload on the bulk path, as 1 does
	}
	return 0, false
}

// neverLimit is the eager limit of a run that never took the bulk path:
// the largest message a scenario may name (1 PiB), which no smaller
// message reaches, and which a calibrated scenario can write.
const neverLimit = units.MaxBytes

// recorded is what the samples' runs recorded of one setting.
type recorded struct {
	value int
	// files are the files that recorded value, in the order met.
	files []string
	// first is the first sample that recorded value; other, unless nil,
	// one that recorded another, otherValue.
	first, other *Sample
	otherValue   int
	// unrecorded counts the samples whose file records no thresholds, and
	// anUnrecorded is one of them.
	unrecorded   int
	anUnrecorded string
}

// recordedOf collects what samples recorded of setting st; nil if none
// recorded anything.
func recordedOf(st Setting, samples []Sample) *recorded {
	if _, ok := recordedSetting(st.Name, algos.Thresholds{}); !ok {
		return nil
	}
	var r *recorded
	for i := range samples {
		s := &samples[i]
		if s.Transport == nil {
			continue
		}
		v, _ := recordedSetting(st.Name, *s.Transport)
		switch {
		case r == nil:
			r = &recorded{value: v, first: s}
		case v != r.value:
			if r.other == nil {
				r.other, r.otherValue = s, v
			}
			continue
		}
		if f := sourceFile(s.Source); !slices.Contains(r.files, f) {
			r.files = append(r.files, f)
		}
	}
	if r == nil {
		return nil
	}
	for _, s := range samples {
		if s.Transport == nil {
			if r.unrecorded == 0 {
				r.anUnrecorded = s.Source
			}
			r.unrecorded++
		}
	}
	return r
}

// sourceFile is the file of a Sample.Source ("file:line").
func sourceFile(source string) string {
	if i := strings.LastIndexByte(source, ':'); i > 0 {
		return source[:i]
	}
	return source
}

// byTheRun says which runs recorded the value, for Settings and notes.
func (r *recorded) byTheRun() string {
	if len(r.files) == 1 {
		return "recorded by the run (" + r.files[0] + ")"
	}
	return "recorded by the runs (" + strings.Join(r.files, ", ") + ")"
}

// disagreement is the error of samples whose runs recorded thresholds
// that give the setting different values.
func (r *recorded) disagreement(st Setting) error {
	a, b, va, vb := r.first, r.other, r.value, r.otherValue
	return fmt.Errorf("calibrate: the samples come from runs with different transport thresholds, which give %s %s (%s: %v) and %s (%s: %v): "+
		"fit each run's samples apart, or hold one value (--hold %s=SIZE)", st.Name, formatSetting(va), a.Source, describeThresholds(*a.Transport),
		formatSetting(vb), b.Source, describeThresholds(*b.Transport), st.Name)
}

// describeThresholds writes the thresholds a run recorded for the report,
// with its names and sizes: "bulk_threshold 64 KiB, eager_threshold 0
// (off)".
func describeThresholds(t algos.Thresholds) string {
	bulk := formatSetting(t.Bulk)
	if t.Bulk == 0 {
		bulk = formatSize(0) // every message with a payload on the bulk path, not off
	}
	return fmt.Sprintf("bulk_threshold %s, eager_threshold %s", bulk, formatSetting(t.Eager))
}

// applyRecorded holds setting v at the value the samples' runs recorded,
// unless Options.Hold gave one, and returns the notes to add: a given
// value that overrides the recorded one, samples that record nothing. It
// fails when the runs disagree and no value is given.
func applyRecorded(v *SettingValue, samples []Sample) ([]string, error) {
	r := recordedOf(v.Setting, samples)
	if r == nil {
		return nil, nil
	}
	var notes []string
	switch {
	case v.Given && r.other != nil:
		notes = append(notes, fmt.Sprintf("%s=%s given overrides the values the runs recorded, which disagree (%s at %s, %s at %s)",
			v.Name, formatSetting(v.Value), formatSetting(r.value), r.first.Source, formatSetting(r.otherValue), r.other.Source))
		return notes, nil
	case v.Given && r.value != v.Value:
		notes = append(notes, fmt.Sprintf("%s=%s given overrides %s, the value %s", v.Name, formatSetting(v.Value), formatSetting(r.value), r.byTheRun()))
		return notes, nil
	case v.Given:
		return nil, nil
	case r.other != nil:
		return nil, r.disagreement(v.Setting)
	}
	v.Value, v.Recorded = r.value, r.byTheRun()
	if r.unrecorded > 0 {
		notes = append(notes, fmt.Sprintf("%d sample(s) (%s) come from a file that does not record the transport thresholds: "+
			"fitted as if their run used the same %s %s", r.unrecorded, r.anUnrecorded, v.Name, formatSetting(v.Value)))
	}
	return notes, nil
}
