package events_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Agents import this package: it must pull in nothing but the standard
// library, the CloudEvents envelope and the JSON library that reads it
// (what becomes encoding/json/v2).
func TestImports(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{
		"github.com/cloudevents/sdk-go/v2/event":      true,
		"github.com/go-json-experiment/json":          true,
		"github.com/go-json-experiment/json/jsontext": true,
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			std := !strings.Contains(strings.Split(p, "/")[0], ".")
			if !std && !allowed[p] {
				t.Errorf("%s imports %s", name, p)
			}
		}
	}
}
