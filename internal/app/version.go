package app

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is engram's version, reported by `engram version` and by the
// NATS services, which require semantic versioning. make release sets it
// with -ldflags "-X github.com/engramhq/engram/internal/app.Version=…".
var Version = "0.1.0-dev"

// Commit is the commit engram was built from, when the build says so with
// -ldflags -X (make release, the Dockerfile: a build without .git has no
// VCS information of its own). Empty: the build information Go stamps
// (vcs.revision) is read instead.
var Commit = ""

// Modified is "true" when -ldflags -X says the tree had changes Commit
// does not hold.
var Modified = ""

// Build says what engram was built from.
type Build struct {
	Version  string
	Commit   string // "" when unknown
	Modified bool   // the working tree had changes the commit does not hold
	Go       string // the Go release it was built with
	Platform string // GOOS/GOARCH
}

// BuildOf is Version and Commit, completed from the build information Go
// stamps into a binary built in a git checkout (go build, go install,
// go run), which knows the commit and whether the tree was dirty.
func BuildOf(info *debug.BuildInfo) Build {
	b := Build{Version: Version, Commit: Commit, Modified: Modified == "true", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info == nil {
		return b
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if b.Commit == "" || b.Commit == revision {
		b.Commit, b.Modified = revision, b.Modified || modified == "true"
	}
	return b
}

// CurrentBuild is this binary's Build.
func CurrentBuild() Build {
	info, _ := debug.ReadBuildInfo()
	return BuildOf(info)
}

// String is one line: "0.1.0-dev (commit 0123456789ab, modified) go1.26.8 linux/amd64".
func (b Build) String() string {
	commit := "commit unknown"
	if b.Commit != "" {
		commit = "commit " + b.Commit[:min(12, len(b.Commit))]
	}
	if b.Modified {
		commit += ", modified"
	}
	return fmt.Sprintf("%s (%s) %s %s", b.Version, commit, b.Go, b.Platform)
}
