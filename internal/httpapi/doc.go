// Package httpapi is engram's HTTP edge: ingest of CloudEvents (structured,
// batch and binary modes), search, health. It maps application errors to
// HTTP statuses in one table (errorStatus) and writes every error as
// {"error":{"code","message"}}.
//
// It must never acknowledge an event before JetStream has stored it, never
// echo memory contents in errors or logs, and never serve one tenant's data
// to another: every read takes namespace and user, and a bearer token, when
// tokens are configured, is bound to its namespace. Nor may it take what a
// web page could send in its visitor's name: before any route runs, the
// edge (edge.go) refuses a Host engram does not answer to, a request from
// another site, and a body that is not JSON. A write whose source and id
// are stored with other content is answered 409 (conflict), never as a
// duplicate.
//
// Testing: handlers are exercised through httptest servers wired to a real
// embedded JetStream and a real SQLite file (see the app package's tests);
// the unit tests here cover decoding and error mapping.
package httpapi
