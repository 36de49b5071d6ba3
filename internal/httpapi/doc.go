// Package httpapi is engram's HTTP edge: ingest of CloudEvents (structured,
// batch and binary modes), search, health. It maps application errors to
// HTTP statuses in one table (errorStatus) and writes every error as
// {"error":{"code","message"}}.
//
// It must never acknowledge an event before JetStream has stored it, never
// echo memory contents in errors or logs, and never serve one tenant's data
// to another: every read takes namespace and user, and a bearer token, when
// tokens are configured, is bound to its namespace.
//
// Testing: handlers are exercised through httptest servers wired to a real
// embedded JetStream and a real SQLite file (see the app package's tests);
// the unit tests here cover decoding and error mapping.
package httpapi
