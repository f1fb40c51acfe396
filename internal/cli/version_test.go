package cli

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "c0ffee"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		bi      debug.BuildInfo
		stamped string
		want    string
	}{
		{debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: modulePath, Version: "v1.2.0"}, Settings: vcs[:1]}, "",
			"nexar-sim (nexar-go) v1.2.0, commit c0ffee, go1.26\n"},
		{debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: modulePath, Version: "(devel)"}, Settings: vcs}, "",
			"nexar-sim (nexar-go) (devel), commit c0ffee (with uncommitted changes), go1.26\n"},
		// -buildvcs=false: no vcs settings; the stamp, or unknown.
		{debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: modulePath, Version: "(devel)"}}, "80ca51a-dirty",
			"nexar-sim (nexar-go) (devel), commit 80ca51a-dirty, go1.26\n"},
		{debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: modulePath, Version: "(devel)"}}, "",
			"nexar-sim (nexar-go) (devel), commit unknown (see --help: --version), go1.26\n"},
		// A stamp wins over what Go recorded.
		{debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: modulePath, Version: "(devel)"}, Settings: vcs}, "v1.0-3-gc0ffee",
			"nexar-sim (nexar-go) (devel), commit v1.0-3-gc0ffee, go1.26\n"},
		{debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: "example.com/mine", Version: "(devel)"},
			Deps: []*debug.Module{{Path: modulePath, Version: "v1.2.0"}}}, "",
			"nexar-sim (nexar-go v1.2.0) built by example.com/mine (devel), commit unknown (see --help: --version), go1.26\n"},
		{debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: "example.com/mine", Version: "v0.1.0"}, Settings: vcs[:1],
			Deps: []*debug.Module{{Path: modulePath, Version: "v0.0.0", Replace: &debug.Module{Path: "../.."}}}}, "",
			"nexar-sim (nexar-go v0.0.0 => ../..) built by example.com/mine v0.1.0, commit c0ffee, go1.26\n"},
	} {
		if got := versionOf("nexar-sim", tc.stamped, &tc.bi); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

// TestStampedBuild builds nexar-sim as VersionHelp says, with Go's own
// record of the commit off (-buildvcs=false), and reads the stamp back.
func TestStampedBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a command")
	}
	bin := filepath.Join(t.TempDir(), "nexar-sim")
	build := exec.Command("go", "build", "-buildvcs=false", "-ldflags", "-X github.com/nexar-go/nexar-go/internal/cli.Commit=c0ffee-dirty", "-o", bin, "../../cmd/nexar-sim")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.Contains(string(out), ", commit c0ffee-dirty, go") {
		t.Errorf("--version: %q, %v", out, err)
	}
	if !strings.Contains(VersionHelp, `-ldflags "-X github.com/nexar-go/nexar-go/internal/cli.Commit=$(git describe --always --dirty)"`) {
		t.Error("VersionHelp does not give the -ldflags this test builds with")
	}
}
