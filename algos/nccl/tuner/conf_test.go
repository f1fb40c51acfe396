package tuner

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/nexar-go/nexar-go/algos/nccl"
)

func TestConfigRoundTrip(t *testing.T) {
	c := &Config{
		Comments: []string{"written by a test", "two lines"},
		Rules: []Rule{
			{Coll: AllReduce, MinBytes: 0, MaxBytes: 65535, Algo: Tree, Proto: nccl.LL, Channels: 2, Nodes: 2, Ranks: 16, PipeOps: -1, RegBuff: -1},
			{Coll: AllReduce, MinBytes: 65536, MaxBytes: AnySize, Algo: NVLSTree, Proto: nccl.Simple, Channels: 16, Nodes: 2, Ranks: 16, PipeOps: -1, RegBuff: -1},
			{Coll: ReduceScatter, MinBytes: 0, MaxBytes: AnySize, Algo: PAT, Proto: nccl.Simple, Channels: 32, Nodes: -1, Ranks: -1, PipeOps: 1, RegBuff: 0},
		},
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	want := `# written by a test
# two lines
allreduce,0,65535,tree,ll,2,2,16
allreduce,65536,18446744073709551615,nvls_tree,simple,16,2,16
reducescatter,0,18446744073709551615,pat,simple,32,-1,-1,1,0
`
	if b.String() != want {
		t.Errorf("wrote\n%s\nwant\n%s", b.String(), want)
	}
	lines, err := ParseConfig(&b, true)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		if l.Line != i+3 || !reflect.DeepEqual(l.Rule, c.Rules[i]) {
			t.Errorf("line %d: %+v, want line %d %+v", l.Line, l.Rule, i+3, c.Rules[i])
		}
	}
	bad := &Config{Rules: []Rule{{Coll: AllReduce, MinBytes: 2, MaxBytes: 1, Channels: 1, Nodes: -1, Ranks: -1, PipeOps: -1, RegBuff: -1}}}
	if _, err := bad.WriteTo(&b); err == nil {
		t.Error("wrote a rule whose range is empty")
	}
}

// The example plugin's parser (plugin.c, loadConfig), rule by rule.
func TestParseConfigPluginRules(t *testing.T) {
	long := "allreduce,0,100,ring,ll,4,1,8" + strings.Repeat(" ", 250) + "\n"
	for _, c := range []struct {
		name, text string
		lenient    []Rule // what the plugin loads
		strictErr  string // what strict mode says ("" : loads the same)
	}{
		{"comments and empty lines", "# a comment\n\n#allreduce,0,1,ring,ll,1,1,1\n", nil, ""},
		{"8 fields", "allreduce,0,100,ring,ll,4,1,8\n", []Rule{{AllReduce, 0, 100, Ring, nccl.LL, 4, 1, 8, -1, -1}}, ""},
		{"10 fields, spaces", " broadcast , 1 , 2 , tree , simple , -1 , -1 , -1 , 1 , 0\n",
			[]Rule{{Broadcast, 1, 2, Tree, nccl.Simple, -1, -1, -1, 1, 0}}, ""},
		{"empty fields vanish", "allreduce,,0,100,ring,ll,4,1,8\n", []Rule{{AllReduce, 0, 100, Ring, nccl.LL, 4, 1, 8, -1, -1}}, ""},
		{"7 fields ignored", "allreduce,0,100,ring,ll,4,1\n", nil, "7 fields"},
		{"11 fields cut to 10", "allreduce,0,100,ring,ll,4,1,8,1,0,9\n", []Rule{{AllReduce, 0, 100, Ring, nccl.LL, 4, 1, 8, 1, 0}}, "more than 10"},
		{"a comment after a space is a line", " #,0,100,ring,ll,4,1,8\n", []Rule{{AllReduce, 0, 100, Ring, nccl.LL, 4, 1, 8, -1, -1}}, "unknown collective"},
		{"names are lower case", "AllReduce,0,100,Tree,LL,4,1,8\n", []Rule{{AllReduce, 0, 100, Ring, nccl.Simple, 4, 1, 8, -1, -1}}, "unknown collective"},
		{"unknown protocol", "allgather,0,100,pat,simple128,4,1,8\n", []Rule{{AllGather, 0, 100, PAT, nccl.Simple, 4, 1, 8, -1, -1}}, "unknown protocol"},
		{"strtoull", "allreduce,0x10,-1,ring,ll,4,1,8\n", []Rule{{AllReduce, 0, math.MaxUint64, Ring, nccl.LL, 4, 1, 8, -1, -1}}, "not a whole number"},
		{"atoi", "allreduce,0,100,ring,ll,4c,1,8\n", []Rule{{AllReduce, 0, 100, Ring, nccl.LL, 4, 1, 8, -1, -1}}, "not an integer"},
		{"CRLF", "allreduce,0,100,ring,ll,4,1,8\r\n\r\nallreduce,101,200,ring,ll,4,1,8,1,0\r\n",
			[]Rule{{AllReduce, 0, 100, Ring, nccl.LL, 4, 1, 8, -1, -1}, {AllReduce, 101, 200, Ring, nccl.LL, 4, 1, 8, 1, 0}}, ""},
		{"a line of 255 and more is two", long, []Rule{{AllReduce, 0, 100, Ring, nccl.LL, 4, 1, 8, -1, -1}}, "longer than 255"},
		{"zero channels", "allreduce,0,100,ring,ll,0,1,8\n", []Rule{{AllReduce, 0, 100, Ring, nccl.LL, 0, 1, 8, -1, -1}}, "channels 0"},
	} {
		lines, err := ParseConfig(strings.NewReader(c.text), false)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []Rule
		for _, l := range lines {
			got = append(got, l.Rule)
		}
		if !reflect.DeepEqual(got, c.lenient) {
			t.Errorf("%s: loads %+v, want %+v", c.name, got, c.lenient)
		}
		_, err = ParseConfig(strings.NewReader(c.text), true)
		switch {
		case c.strictErr == "" && err != nil:
			t.Errorf("%s: strict: %v", c.name, err)
		case c.strictErr != "" && (err == nil || !errors.Is(err, ErrConfLine) || !strings.Contains(err.Error(), c.strictErr)):
			t.Errorf("%s: strict: %v, want %q", c.name, err, c.strictErr)
		}
	}
}

// The plugin's getCollInfo: the first matching rule whose pair NCCL
// allows wins; -1 and no match give one channel.
func TestConfigApply(t *testing.T) {
	s, _ := dgxH100.System(16)
	m, _ := Tune(s)
	c := &Config{Rules: []Rule{
		// NVLS is off across nodes without CollNet: skipped.
		{AllReduce, 0, AnySize, NVLS, nccl.Simple, 8, 2, 16, -1, -1},
		{AllReduce, 0, 1 << 20, Ring, nccl.LL128, 12, 2, 16, -1, -1},
		{AllReduce, 0, AnySize, Ring, nccl.Simple, -1, -1, -1, -1, -1},
		{AllGather, 0, AnySize, Ring, nccl.Simple, 4, 3, -1, -1, 1},
	}}
	for _, x := range []struct {
		call     Call
		regBuff  bool
		rule     int
		a        Algo
		p        Protocol
		channels int
	}{
		{Call{Coll: AllReduce, Bytes: 1024}, false, 1, Ring, nccl.LL128, 12},
		{Call{Coll: AllReduce, Bytes: 1<<20 + 1}, false, 2, Ring, nccl.Simple, 1},
		{Call{Coll: AllGather, Bytes: 1024}, true, -1, Ring, nccl.LL, 1}, // nodes do not match: NCCL's pick, one channel
		{Call{Coll: Broadcast, Bytes: 1 << 30}, false, -1, Ring, nccl.Simple, 1},
	} {
		ch, rule, err := m.ChooseWith(c, x.call, x.regBuff)
		if err != nil {
			t.Fatal(err)
		}
		if rule != x.rule || ch.Algo != x.a || ch.Proto != x.p || ch.Channels != x.channels {
			t.Errorf("%s of %d bytes: rule %d, %v; want rule %d, %s/%s on %d", x.call.Coll, x.call.Bytes, rule, ch, x.rule, x.a, x.p, x.channels)
		}
		if want := m.Time(x.call.Coll, ch.Algo, ch.Proto, x.call.Bytes); ch.Time != want {
			t.Errorf("%s of %d bytes: time %g, the model's %g", x.call.Coll, x.call.Bytes, ch.Time, want)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("# c\nallreduce,0,65535,tree,ll,2,2,16\nallreduce,65536,18446744073709551615,nvls_tree,simple,16,2,16,1,0\n"))
	f.Add([]byte("broadcast,,1,2,ring,ll128,-1,-1,-1,-1,-1,7\r\n #x\n\nreduce,1,0,pat,ll,0,0,0\n"))
	f.Add([]byte(strings.Repeat("allgather,1,2,ring,ll,1,1,1,", 20) + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lenient, err := ParseConfig(bytes.NewReader(data), false)
		if err != nil {
			t.Fatalf("lenient parse failed: %v", err)
		}
		strict, strictErr := ParseConfig(bytes.NewReader(data), true)
		if strictErr == nil && !reflect.DeepEqual(strict, lenient) {
			t.Fatalf("strict %+v, lenient %+v", strict, lenient)
		}
		// What the plugin loads and we can write reads back the same.
		var c Config
		for _, l := range lenient {
			if l.Rule.check() == nil {
				c.Rules = append(c.Rules, l.Rule)
			}
		}
		var b bytes.Buffer
		if _, err := c.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		again, err := ParseConfig(&b, true)
		if err != nil {
			t.Fatalf("%v reading back\n%s", err, b.String())
		}
		if len(again) != len(c.Rules) {
			t.Fatalf("%d rules read back, %d written", len(again), len(c.Rules))
		}
		for i := range again {
			if again[i].Rule != c.Rules[i] {
				t.Fatalf("rule %d: %+v read back as %+v", i, c.Rules[i], again[i].Rule)
			}
		}
	})
}
