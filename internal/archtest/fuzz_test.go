package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every fuzz target in the tree is in the Makefile's FUZZ list, so make
// fuzz runs it: one left out guards nothing after the day it was written.
func TestMakeFuzzNamesEveryTarget(t *testing.T) {
	root := filepath.Join("..", "..")
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\t(\./\S*):(Fuzz\w+)`).FindAllStringSubmatch(string(makefile), -1) {
		listed[m[1]+":"+m[2]] = true
	}
	fuzzFunc := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	found := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, m := range fuzzFunc.FindAllStringSubmatch(string(src), -1) {
			found++
			if target := "./" + filepath.ToSlash(rel) + ":" + m[1]; !listed[target] {
				t.Errorf("%s is not in the Makefile's FUZZ list", target)
			} else {
				delete(listed, target)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 20 {
		t.Fatalf("found only %d fuzz targets", found)
	}
	for target := range listed {
		t.Errorf("the Makefile's FUZZ list names %s, which does not exist", target)
	}
}
