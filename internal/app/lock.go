package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/engramhq/engram/internal/quiet"
)

// LockDataDir takes an exclusive lock on the data dir, so that a second
// engram (or a rebuild) cannot open the same embedded JetStream store.
func LockDataDir(dir string) (unlock func(), err error) {
	if err := checkDataDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "engram.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		quiet.Close(f) // on a path that fails with its own error
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is locked: another engram is running on this data dir (stop it, or point ENGRAM_NATS_URL at its NATS)", dir)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		quiet.Close(f) // nothing was written to it
	}, nil
}

// checkDataDir makes the data dir if it is missing and checks that engram
// can write there, so that a read-only one is named as such at start,
// not by whichever write fails first.
func checkDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return dataDirError(dir, err)
	}
	f, err := os.CreateTemp(dir, ".engram-write-check-*")
	if err != nil {
		return dataDirError(dir, err)
	}
	name := f.Name()
	if err := errors.Join(f.Close(), os.Remove(name)); err != nil {
		return dataDirError(dir, err)
	}
	return nil
}

func dataDirError(dir string, err error) error {
	if errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("data dir %s is read-only (%w): engram keeps its event store and read model there; "+
			"make it writable for the user engram runs as, or point --data-dir (ENGRAM_DATA_DIR) elsewhere", dir, err)
	}
	return fmt.Errorf("data dir %s: %w", dir, err)
}
