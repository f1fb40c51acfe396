package cli

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "c0ffee"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: modulePath, Version: "v1.2.0"}, Settings: vcs[:1]},
			"nexar-sim (nexar-go) v1.2.0, commit c0ffee, go1.26\n"},
		{debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: modulePath, Version: "(devel)"}, Settings: vcs},
			"nexar-sim (nexar-go) (devel), commit c0ffee (with uncommitted changes), go1.26\n"},
		{debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: "example.com/mine", Version: "(devel)"},
			Deps: []*debug.Module{{Path: modulePath, Version: "v1.2.0"}}},
			"nexar-sim (nexar-go v1.2.0) built by example.com/mine (devel), commit unknown, go1.26\n"},
		{debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: "example.com/mine", Version: "v0.1.0"}, Settings: vcs[:1],
			Deps: []*debug.Module{{Path: modulePath, Version: "v0.0.0", Replace: &debug.Module{Path: "../.."}}}},
			"nexar-sim (nexar-go v0.0.0 => ../..) built by example.com/mine v0.1.0, commit c0ffee, go1.26\n"},
	} {
		if got := versionOf("nexar-sim", &tc.bi); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
