package app

import (
	"runtime/debug"
	"strings"
	"testing"
)

// engram version names the commit and a dirty tree, from the build
// information Go stamps (go build, go run) or from -ldflags -X (make
// release, the image).
func TestBuildOf(t *testing.T) {
	stamped := &debug.BuildInfo{Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}, {Key: "vcs.modified", Value: "true"},
	}}
	for _, c := range []struct {
		name             string
		info             *debug.BuildInfo
		commit, modified string
		want             string
	}{
		{"go build in a dirty checkout", stamped, "", "", "(commit 0123456789ab, modified)"},
		{"clean checkout", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "fedcba9876543210"}, {Key: "vcs.modified", Value: "false"}}}, "", "", "(commit fedcba987654)"},
		{"no VCS information", &debug.BuildInfo{}, "", "", "(commit unknown)"},
		{"make release, clean", &debug.BuildInfo{}, "1111222233334444", "", "(commit 111122223333)"},
		{"make release, dirty", &debug.BuildInfo{}, "1111222233334444", "true", "(commit 111122223333, modified)"},
		{"-X wins over another stamped commit", stamped, "1111222233334444", "", "(commit 111122223333)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func(c, m string) { Commit, Modified = c, m }(Commit, Modified)
			Commit, Modified = c.commit, c.modified
			got := BuildOf(c.info).String()
			if !strings.HasPrefix(got, Version+" "+c.want+" go") {
				t.Errorf("BuildOf = %q, want %q after the version", got, c.want)
			}
		})
	}
}
