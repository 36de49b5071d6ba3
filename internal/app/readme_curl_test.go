package app

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// curlExample is one curl command of README.md and the answer README shows
// for it (the "# {…}" lines after it; empty when it shows none).
type curlExample struct {
	cmd, shown string
}

// readmeCurls reads every curl command in README.md's sh blocks.
func readmeCurls(t *testing.T) []curlExample {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []curlExample
	inSh := false
	var cur *curlExample
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			inSh = true
		case strings.HasPrefix(line, "```"):
			flush()
			inSh = false
		case !inSh:
		case strings.HasPrefix(line, "curl "):
			flush()
			cur = &curlExample{cmd: line}
		case cur != nil && strings.HasPrefix(line, "#"):
			cur.shown += strings.TrimSpace(strings.TrimPrefix(line, "#")) + "\n"
		case cur != nil && cur.shown == "":
			cur.cmd += "\n" + line
		}
	}
	return out
}

// keys collects every object key in v.
func keys(v any, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			into[k] = true
			keys(e, into)
		}
	case []any:
		for _, e := range x {
			keys(e, into)
		}
	}
}

// holds reports whether v has key with value want anywhere within it.
func holds(v any, key string, want any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == key && e == want || holds(e, key, want) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if holds(e, key, want) {
				return true
			}
		}
	}
	return false
}

// Every curl example in README.md runs against a real engram, in order,
// answers JSON, and the answer has every field README shows for it, with
// every value README shows in full: the memory the context example shows
// is there, straight after the turn that states it.
func TestREADMECurlExamples(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	examples := readmeCurls(t)
	if len(examples) < 4 {
		t.Fatalf("found %d curl examples in README.md", len(examples))
	}
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	shownKey := regexp.MustCompile(`"([a-z_]+)":`)
	shownValue := regexp.MustCompile(`"([a-z_]+)":("(?:[^"\\]|\\.)*"|-?[0-9][0-9.]*|true|false)`)
	for _, ex := range examples {
		cmd := strings.ReplaceAll(ex.cmd, "localhost:7420", a.HTTPAddr())
		c := exec.CommandContext(t.Context(), "sh", "-c", strings.Replace(cmd, "curl ", curl+" -f ", 1))
		out, err := c.Output()
		if err != nil {
			t.Errorf("README example failed: %v\n%s\n%s", err, ex.cmd, out)
			continue
		}
		var got any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Errorf("README example answered non-JSON %q: %v\n%s", out, err, ex.cmd)
			continue
		}
		have := map[string]bool{}
		keys(got, have)
		for _, m := range shownKey.FindAllStringSubmatch(ex.shown, -1) {
			if !have[m[1]] {
				t.Errorf("README shows %q in the answer to\n%s\nbut engram answered %s", m[1], ex.cmd, out)
			}
		}
		// And every value it shows in full (a string without "…", a
		// number, true or false) is in the answer under its key.
		for _, m := range shownValue.FindAllStringSubmatch(ex.shown, -1) {
			var want any
			if err := json.Unmarshal([]byte(m[2]), &want); err != nil || strings.Contains(m[2], "…") {
				continue
			}
			if !holds(got, m[1], want) {
				t.Errorf("README shows \"%s\":%s in the answer to\n%s\nbut engram answered %s", m[1], m[2], ex.cmd, out)
			}
		}
		// The next example may read what this one wrote.
		if r, ok := got.(map[string]any); ok && r["results"] != nil && r["accepted"] != nil {
			waitProjected(t, a, lastSeqOf(httpResult{Body: r}))
		}
	}
}
