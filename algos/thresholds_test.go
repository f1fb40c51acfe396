package algos_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos"
)

// TestThresholdsString: String writes what ParseThresholds reads back,
// each size as the flags and scenario files spell it.
func TestThresholdsString(t *testing.T) {
	for _, c := range []struct {
		t    algos.Thresholds
		want string
	}{
		{algos.DefaultThresholds(), "bulk=64KiB,eager=off"},
		{algos.Thresholds{Bulk: 16 << 10}, "bulk=16KiB,eager=off"},
		{algos.Thresholds{Bulk: algos.BulkNever, Eager: 16 << 10}, "bulk=never,eager=16KiB"},
		{algos.Thresholds{Bulk: 0}, "bulk=0,eager=off"},
		{algos.Thresholds{Bulk: 1, Eager: 1000}, "bulk=1,eager=1000"},
		{algos.Thresholds{Bulk: 3 << 20, Eager: 1536}, "bulk=3MiB,eager=1536"},
		{algos.Thresholds{Bulk: 2 << 30}, "bulk=2GiB,eager=off"},
	} {
		if got := c.t.String(); got != c.want {
			t.Errorf("%+v: String() = %q, want %q", c.t, got, c.want)
		}
		back, err := algos.ParseThresholds(c.want)
		if err != nil || back != c.t {
			t.Errorf("ParseThresholds(%q) = %+v, %v, want %+v", c.want, back, err, c.t)
		}
	}
}

func TestParseThresholds(t *testing.T) {
	for _, c := range []struct {
		in   string
		want algos.Thresholds
	}{
		{"eager=off,bulk=64KiB", algos.Thresholds{Bulk: 64 << 10}},
		{" bulk = 16 KiB , eager = 0 ", algos.Thresholds{Bulk: 16 << 10}},
		{"bulk=off,eager=never", algos.Thresholds{Bulk: algos.BulkNever}},
		{"bulk=-1,eager=4096", algos.Thresholds{Bulk: algos.BulkNever, Eager: 4096}},
		{"bulk=64KB,eager=1.5KiB", algos.Thresholds{Bulk: 64000, Eager: 1536}},
		{"bulk=1e3B,eager=1_024", algos.Thresholds{Bulk: 1000, Eager: 1024}},
	} {
		got, err := algos.ParseThresholds(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseThresholds(%q) = %+v, %v, want %+v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", "want bulk=SIZE,eager=SIZE"},
		{"bulk=64KiB", "want both"},
		{"eager=off", "want both"},
		{"bulk=1,bulk=2,eager=off", "bulk given twice"},
		{"bulk=1,eager=off,colour=red", `unknown threshold "colour"`},
		{"bulk=64XB,eager=off", `unknown unit "XB"`},
		{"bulk=-2,eager=off", "negative"},
		{"bulk=0.5,eager=off", "not a whole number"},
		{"bulk=1,eager=-4", "negative"},
		{"bulk=2PiB,eager=off", `unknown unit "PiB"`},
		{"bulk=2000TB,eager=off", "too large"},
		{"bulk=1e999999,eager=off", "too many digits"},
		{"bulk=KiB,eager=off", "not a size"},
		{"bulk=1/2,eager=off", `unknown unit "/2"`},
	} {
		if _, err := algos.ParseThresholds(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseThresholds(%q): error %v, want one saying %q", c.in, err, c.want)
		}
	}
}

// ExampleThresholds: thresholds written as String writes them, and read
// back.
func ExampleThresholds() {
	t := algos.DefaultThresholds()
	fmt.Println(t)
	t.Eager = 16 << 10
	back, err := algos.ParseThresholds(t.String())
	fmt.Println(back, back == t, err)
	never, _ := algos.ParseBulkThreshold("never")
	fmt.Println(algos.Thresholds{Bulk: never})
	// Output:
	// bulk=64KiB,eager=off
	// bulk=64KiB,eager=16KiB true <nil>
	// bulk=never,eager=off
}
