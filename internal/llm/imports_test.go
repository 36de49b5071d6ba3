package llm_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestStandardLibraryOnly keeps llm and llmtest free of outside modules;
// llmtest may import llm.
func TestStandardLibraryOnly(t *testing.T) {
	allowed := map[string]bool{"github.com/engramhq/engram/internal/llm": true}
	for _, dir := range []string{".", "llmtest"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				first, _, _ := strings.Cut(path, "/")
				if strings.Contains(first, ".") && !(dir == "llmtest" && allowed[path]) {
					t.Errorf("%s imports %s: only the standard library is allowed", file, path)
				}
			}
		}
	}
}
