//go:build soak

package clustertest

// soakTag: go test -tags soak runs the long versions of the tests that
// have one (make test runs their fast subsets).
const soakTag = true
