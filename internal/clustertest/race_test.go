//go:build race

package clustertest

const raceEnabled = true
