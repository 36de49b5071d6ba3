package llmextract

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the package on the standard library, the domain, the
// LLM client and the rule extractor's vocabulary: a worker composes it.
func TestImports(t *testing.T) {
	allowed := map[string]bool{
		"github.com/engramhq/engram/internal/memory":      true,
		"github.com/engramhq/engram/internal/llm":         true,
		"github.com/engramhq/engram/internal/ruleextract": true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if strings.Contains(first, ".") && !allowed[path] {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}
