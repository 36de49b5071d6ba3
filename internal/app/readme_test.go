package app

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/memory"
)

// docs/api.md's HTTP table lists every route of the OpenAPI document, and
// names the `user` parameter wherever the document requires it; it lists
// every valid kind and category.
func TestREADMEMatchesAPI(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name, In string
				Required bool
			}
		}
	}
	if err := json.Unmarshal(httpapi.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	for path, ops := range doc.Paths {
		// docs/api.md writes /v1/pending/{id}/confirm\|ignore\|snooze for {action}.
		stem := strings.TrimSuffix(path, "{action}")
		var lines []string
		for _, l := range strings.Split(readme, "\n") {
			if strings.HasPrefix(l, "| `") && (strings.Contains(l, path+"`") || strings.Contains(l, path+"?") || stem != path && strings.Contains(l, stem)) {
				lines = append(lines, l)
			}
		}
		if len(lines) == 0 {
			t.Errorf("docs/api.md's API table does not list %s", path)
			continue
		}
		for method, op := range ops {
			for _, p := range op.Parameters {
				if p.Name == "user" && p.In == "query" && p.Required && !strings.Contains(strings.Join(lines, "\n"), "user=") {
					t.Errorf("%s %s needs user, and docs/api.md does not say so: %q", strings.ToUpper(method), path, lines)
				}
			}
		}
	}
	for _, k := range memory.Kinds {
		if !strings.Contains(readme, "`"+string(k)+"`") {
			t.Errorf("docs/api.md does not list the kind %s", k)
		}
	}
	for _, c := range memory.Categories {
		if !strings.Contains(readme, "`"+string(c)+"`") {
			t.Errorf("docs/api.md does not list the category %s", c)
		}
	}
}
