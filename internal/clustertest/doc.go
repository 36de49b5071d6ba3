// Package clustertest runs engram as people deploy it apart — a
// three-node JetStream cluster on loopback and the worker processes, each
// its own operating-system process with only its NATS rights — and holds
// it to the single binary: the same workload through both ends in the
// same read model (TestEquivalence), and a NATS node and one instance of
// each worker killed with SIGKILL under load lose nothing, duplicate
// nothing and extract every session once (TestFailover).
//
// The package is tests only. Every process (nats-server nodes, workers,
// the single binary) is the test binary run again in a child mode
// (TestMain), so nothing is built beside `go test` and a child is killed
// and restarted by its pid like any deployed process. Ports are taken free
// on loopback; state lives in t.TempDir.
//
// The fast versions run in `make test` (a few seconds of load); go test
// -tags soak (or ENGRAM_SOAK=1) runs the long ones (more users and
// sessions, several kill rounds).
package clustertest
