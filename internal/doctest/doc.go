// Package doctest holds the test that runs the shell examples of README.md
// and docs/*.md against a real engram, in order, and compares what they
// print with what the page shows. It has no code of its own: the pages are
// its input.
//
// # How a page is read
//
// Every fenced block marked sh is run, command by command, by bash in a
// directory that looks like a checkout (the repository's top-level
// entries linked in) with the engram under test's data dir as ./data. A
// command may span lines (an open quote, a trailing backslash). The
// comment lines right after a command, up to a blank line or the next
// command, are what it prints: "# " and a line of output ("#" alone: an
// empty line), where "…" stands for any text, across lines too. A command
// with no such lines must exit 0, and a curl among them must not answer
// an error.
//
// A block that cannot run here is marked on the line before its fence:
//
//	<!-- not run: needs an LLM -->
//
// and the test lists it with the reason, as it lists each command whose
// tool (jq, the nats CLI) is not installed.
//
// # The engram the examples talk to
//
// Each page gets an engram of its own (every worker in one process, as
// engram serve runs), started on free ports; the pages' localhost:7420 and
// 127.0.0.1:4222 are rewritten to them, and back in what is printed. The
// engram command is the test binary itself, run as the CLI. Between
// commands the test waits until every worker has finished what the last
// one started (a person reading the page is slower than that), so an
// example may read what the one before it wrote.
package doctest
