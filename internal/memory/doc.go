// Package memory is engram's domain: the things a memory service keeps
// (turns, memories, search results), the scope that every read is filtered
// by, and the application error type.
//
// It imports nothing of engram's and no outside library, so every other
// package can depend on it and it can depend on none of them. Workers and
// storage speak to each other through the small types and interfaces here.
package memory
