package app

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/engramhq/engram/internal/quiet"
)

// LockDataDir takes an exclusive lock on the data dir, so that a second
// engram (or a rebuild) cannot open the same embedded JetStream store.
func LockDataDir(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	path := filepath.Join(dir, "engram.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		quiet.Close(f) // on a path that fails with its own error
		return nil, fmt.Errorf("%s is locked: another engram is running on this data dir (stop it, or point ENGRAM_NATS_URL at its NATS)", dir)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		quiet.Close(f) // nothing was written to it
	}, nil
}
