package report

import (
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestSchemaDocumented: docs/results-json.md names every field of
// results.json (JSON and the types it holds), in backquotes.
func TestSchemaDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/results-json.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				t.Errorf("%s.%s has no JSON name", path, f.Name)
				continue
			}
			if !strings.Contains(string(doc), "`"+name+"`") {
				t.Errorf("docs/results-json.md does not name %s.%s (%q)", path, f.Name, name)
			}
			if f.Type.String() != "json.RawMessage" {
				walk(f.Type, path+"."+name)
			}
		}
	}
	walk(reflect.TypeOf(JSON{}), "results.json")
	if len(seen) < 8 {
		t.Errorf("walked %d types", len(seen))
	}
}

// TestSchemaExample: the example of docs/results-json.md reads as
// results.json.
func TestSchemaExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/results-json.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```json\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no ```json example")
	}
	j, err := ReadJSON(strings.NewReader(example))
	if err != nil {
		t.Fatal(err)
	}
	if j.Tool != ToolLive || len(j.Rows) == 0 || j.Model == nil {
		t.Errorf("example: %+v", j)
	}
}

// TestEncodeInfiniteLink: a network whose links do not bind (bandwidth
// "inf") encodes without its link bandwidth, which JSON cannot hold.
func TestEncodeInfiniteLink(t *testing.T) {
	j := JSON{Tool: ToolLive, Scenario: Scenario{Scenario: "loopback", LinkBandwidth: math.Inf(1)}}
	var b strings.Builder
	if err := j.Encode(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "link_bandwidth") {
		t.Errorf("infinite link bandwidth encoded:\n%s", b.String())
	}
	if _, err := ReadJSON(strings.NewReader(b.String())); err != nil {
		t.Error(err)
	}
}
