package dedupe

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the package on the standard library, the domain and
// the LLM client: the consolidator composes it.
func TestImports(t *testing.T) {
	allowed := map[string]bool{
		"github.com/engramhq/engram/internal/memory": true,
		"github.com/engramhq/engram/internal/llm":    true,
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
				t.Errorf("%s imports %s: only the standard library, internal/memory and internal/llm are allowed", name, path)
			}
		}
	}
}
