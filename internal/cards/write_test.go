package cards

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "MEMORY.md")

	t.Run("create", func(t *testing.T) {
		if err := WriteAtomic(path, []byte("# Core memory\n- one\n")); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := "# Core memory\n- one\n"; string(got) != want {
			t.Fatalf("content = %q, want %q", got, want)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fi.Mode().Perm(), os.FileMode(FileMode); got != want {
			t.Fatalf("mode = %v, want %v", got, want)
		}
	})
	t.Run("overwrite", func(t *testing.T) {
		if err := os.Chmod(path, 0o666); err != nil {
			t.Fatal(err)
		}
		if err := WriteAtomic(path, []byte("short")); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "short" {
			t.Fatalf("content = %q, want %q (no tail of the longer old file)", got, "short")
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fi.Mode().Perm(), os.FileMode(FileMode); got != want {
			t.Fatalf("mode = %v, want %v", got, want)
		}
	})
	t.Run("empty", func(t *testing.T) {
		if err := WriteAtomic(path, nil); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
			t.Fatalf("stat = %v, %v; want an empty file", fi, err)
		}
	})
	t.Run("no temp files left", func(t *testing.T) {
		if got := dirNames(t, dir); !slices.Equal(got, []string{"MEMORY.md"}) {
			t.Fatalf("dir holds %q, want only MEMORY.md", got)
		}
	})
	t.Run("relative path", func(t *testing.T) {
		t.Chdir(t.TempDir())
		if err := WriteAtomic("USER.md", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile("USER.md"); err != nil || string(got) != "x" {
			t.Fatalf("ReadFile = %q, %v", got, err)
		}
	})
}

func TestWriteAtomicErrors(t *testing.T) {
	t.Parallel()
	t.Run("missing directory", func(t *testing.T) {
		if err := WriteAtomic(filepath.Join(t.TempDir(), "nope", "MEMORY.md"), []byte("x")); err == nil {
			t.Fatal("WriteAtomic into a missing directory succeeded")
		}
	})
	t.Run("rename fails: temp removed, target untouched", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(dir, "MEMORY.md")
		// A non-empty directory cannot be replaced by a file.
		if err := os.MkdirAll(filepath.Join(target, "keep"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := WriteAtomic(target, []byte("x")); err == nil {
			t.Fatal("WriteAtomic over a directory succeeded")
		}
		if got := dirNames(t, dir); !slices.Equal(got, []string{"MEMORY.md"}) {
			t.Fatalf("dir holds %q, want only MEMORY.md (the temp file must be removed)", got)
		}
		if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
			t.Fatalf("target changed: %v, %v", fi, err)
		}
	})
}
