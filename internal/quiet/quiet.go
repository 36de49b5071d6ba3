// Package quiet is the one place where engram drops an error on purpose,
// so that errcheck can hold every other call to account.
//
// Each helper is for a call whose error cannot change the outcome: closing
// what was only read (a response body, a query's rows, whose read error
// rows.Err() reports, a file opened to read), a rollback that runs after
// a commit or beside the error that caused it, a clean-up on a path that
// is already failing with its own error. A Close after writing is never
// one of them: its error says the write did not land, and is returned.
//
// It imports only the standard library, and any package may use it.
package quiet

import (
	"io"
	"os"
)

// Close closes c and drops its error.
func Close(c io.Closer) { _ = c.Close() }

// Rollback rolls tx back and drops its error: deferred after a commit it
// only reports that the transaction is done; on a failing path the
// caller returns the error that made it roll back.
func Rollback(tx interface{ Rollback() error }) { _ = tx.Rollback() }

// Do calls f and drops its error (os.RemoveAll of a temporary directory on
// a path that already fails, a logger's Sync to a terminal).
func Do(f func() error) { _ = f() }

// RemoveAll removes a scratch directory and drops the error: whatever is
// left of it is under the system's temporary directory.
func RemoveAll(dir string) { _ = os.RemoveAll(dir) }
