package rules

import (
	goparser "go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestImports keeps the package to the standard library, the YAML parser
// and the logger: rules run inside every worker, and a worker that
// evaluates them must not pull in NATS, SQLite or the CloudEvents SDK
// through it.
func TestImports(t *testing.T) {
	allowed := map[string]bool{"go.yaml.in/yaml/v3": true, "go.uber.org/zap": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(token.NewFileSet(), name, nil, goparser.ImportsOnly)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			first, _, _ := strings.Cut(path, "/")
			if strings.Contains(first, ".") && !allowed[path] {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}
