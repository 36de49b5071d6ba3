// Package rules holds engram's default rule files, embedded so that a
// binary started with no rules directory still behaves as the seeds
// describe. internal/rules documents the format and loads them
// (rules.LoadFS(defaultrules.FS, …)).
package rules

import "embed"

// FS holds the default rule files at its root.
//
//go:embed *.yaml
var FS embed.FS
