package cli

import (
	"fmt"
	"runtime/debug"
)

// modulePath is nexar-go's module, which a user's module may build the
// commands from (see Main in nexarsim).
const modulePath = "github.com/nexar-go/nexar-go"

// Commit is the commit the binary was built from, as the build stamps it
// (see VersionHelp): go build -ldflags "-X
// github.com/nexar-go/nexar-go/internal/cli.Commit=$(git describe --always
// --dirty)". Without it, Version takes the commit Go records (the build
// setting vcs.revision), which a build with -buildvcs=false lacks.
var Commit string

// VersionHelp says, in the commands' help, what --version says and how to
// stamp the commit where Go does not record it.
const VersionHelp = `--version names nexar-go's version and the commit the binary was built
from: Go records the commit when it builds in a checkout, unless the build
sets -buildvcs=false (some environments' GOFLAGS do), and then --version
says "commit unknown". Stamp it yourself:
  go build -ldflags "-X github.com/nexar-go/nexar-go/internal/cli.Commit=$(git describe --always --dirty)" -o bin/ ./cmd/...
`

// Version describes the build of program name: nexar-go's module version
// and the commit it was built from, and the user's module when it is the
// one that built the command with its own algorithms.
func Version(name string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return name + " (nexar-go): no build information\n"
	}
	return versionOf(name, Commit, bi)
}

// versionOf is Version of the build bi describes, whose commit the build
// stamped as stamped ("" if it did not).
func versionOf(name, stamped string, bi *debug.BuildInfo) string {
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	commit := stamped
	if commit == "" {
		commit = settings["vcs.revision"]
		if commit != "" && settings["vcs.modified"] == "true" {
			commit += " (with uncommitted changes)"
		}
	}
	if commit == "" {
		commit = "unknown (see --help: --version)"
	}
	if bi.Main.Path == modulePath {
		return fmt.Sprintf("%s (nexar-go) %s, commit %s, %s\n", name, bi.Main.Version, commit, bi.GoVersion)
	}
	dep := "(unknown)"
	for _, d := range bi.Deps {
		if d.Path == modulePath {
			dep = d.Version
			if d.Replace != nil {
				dep += " => " + d.Replace.Path
				if d.Replace.Version != "" {
					dep += " " + d.Replace.Version
				}
			}
		}
	}
	return fmt.Sprintf("%s (nexar-go %s) built by %s %s, commit %s, %s\n", name, dep, bi.Main.Path, bi.Main.Version, commit, bi.GoVersion)
}
