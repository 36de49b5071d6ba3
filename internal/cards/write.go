package cards

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/engramhq/engram/internal/quiet"
)

// FileMode is the mode of a written card: cards hold what a user told an
// agent, so they are not world-readable.
const FileMode = 0o640

// WriteAtomic replaces the file at path with data so that a reader sees the
// old content or the new, never a mix, and a crash leaves one of the two:
// it writes a temp file in the same directory (a rename across file systems
// is not atomic), syncs it, renames it over path and syncs the directory so
// the rename itself survives a power loss. The file's mode is FileMode. On
// error the temp file is removed and path is untouched.
func WriteAtomic(path string, data []byte) error {
	_, err := WriteAtomicIf(path, data, nil)
	return err
}

// WriteAtomicIf is WriteAtomic that asks ok, when not nil, right before
// the rename, with the new content already on disk: false leaves path as
// it is (written is false). A caller that must not overwrite a file a
// person saved meanwhile checks it there, where the window is shortest.
func WriteAtomicIf(path string, data []byte, ok func() bool) (written bool, err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return false, fmt.Errorf("write %s: create temp file: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil || !written {
			quiet.Close(f) // the write failed already; the temporary goes
			quiet.Do(func() error { return os.Remove(tmp) })
		}
	}()
	if _, err := f.Write(data); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(FileMode); err != nil {
		return false, fmt.Errorf("write %s: chmod: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return false, fmt.Errorf("write %s: sync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return false, fmt.Errorf("write %s: close: %w", path, err)
	}
	if ok != nil && !ok() {
		return false, nil
	}
	if err := os.Rename(tmp, path); err != nil {
		return false, fmt.Errorf("write %s: rename: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		// The new file is in place; only its durability is in doubt.
		return true, fmt.Errorf("write %s: sync dir: %w", path, err)
	}
	return true, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
