package cli

import (
	"fmt"
	"runtime/debug"
)

// modulePath is nexar-go's module, which a user's module may build the
// commands from (see Main in nexarsim).
const modulePath = "github.com/nexar-go/nexar-go"

// Version describes the build of program name: nexar-go's module version
// and the commit it was built from, and the user's module when it is the
// one that built the command with its own algorithms.
func Version(name string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return name + " (nexar-go): no build information\n"
	}
	return versionOf(name, bi)
}

// versionOf is Version of the build bi describes.
func versionOf(name string, bi *debug.BuildInfo) string {
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	commit := settings["vcs.revision"]
	if commit == "" {
		commit = "unknown"
	}
	if settings["vcs.modified"] == "true" {
		commit += " (with uncommitted changes)"
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
