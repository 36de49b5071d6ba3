// Package consolidation is the consolidator: the worker that runs engram's
// rules (rules/*.yaml, internal/rules). When an event arrives, the rules
// on: its type whose conditions hold run their actions; when a schedule
// falls due, its rules run. The actions build episodes (at session end,
// from the turns; on context.compressing, from the turns leaving the
// agent's window), fold them into the user's scratchpad, compress
// yesterday's event log into knowledge, merge near-duplicate memories
// (internal/dedupe: clustering in O(n log n), a model only inside a
// cluster), archive what faded, expired or overflows the cap, refresh the
// core profile (internal/maintain) and render MEMORY.md and USER.md
// (internal/cards).
//
// Every conclusion is published as an event (episode.built,
// scratchpad.updated, daily.summarized, memory.added, memories.merged,
// memories.archived, profile.refreshed) with an id derived from what caused
// it and the cause's time (a scheduled job's: its firing time), and only
// the projector writes the read model. So a retried event or a job run
// twice makes the same events, which the stream drops, and `engram rebuild`
// reproduces the consolidated state without calling a model.
//
// Decay writes nothing: a memory's score (maintain.Score) is a function
// of its importance, category, use and the time, computed where it is used
// — ranking, the cards and the archive action — so there is nothing to
// replay. An auto extract_now on turn.recorded, session.ended or
// context.compressing is the extraction batcher's to run (it holds the
// waiting turns; extractreq.BatcherRun), so the consolidator skips it. On
// a schedule it requests every turn not extracted yet, and on any other
// trigger (or a confirmed firing) the session's unextracted turns, under
// the batcher's request ids (extractreq.RequestID), so a turn is asked
// for once whoever asks.
//
// mode: confirm rules are not run: the firing waits in a queue (Pending)
// until an operator approves it (Approve) or dismisses it. With Queue set
// (engram sets a JetStream key-value bucket) the queue survives a restart
// and is shared by every instance; without, it lives in memory.
//
// The consolidator reads the read model through Store. In the single
// binary that is the local SQLite read model; a consolidator running apart
// has none (Store nil): it still builds compression episodes, whose turns
// travel in the event, and skips, with a warning, every action that needs
// stored turns or memories.
//
// What it must never do: write the read model itself; read the clock for
// anything it publishes (times come from events and firings); call a model
// per pair of memories; stop because of a bad rule (a bad rule file keeps
// the last good set running, see rules.Watcher; an action a retry cannot
// fix is logged and skipped); import the stream, SQLite or HTTP packages
// (internal/archtest).
//
// Concurrency: Handle is called by one consumer goroutine; Run (the
// scheduler and the card renderer) by its owner; RunJob, Pending, Approve
// and Dismiss from any goroutine. Shared state (the pending queue, the
// last scratchpads written, the cards waiting) is guarded by a mutex.
//
// Testing: the unit tests use a fake Store and a recording Emitter; the
// scheduler and the cards' debounce run under testing/synctest. The app
// package's tests run the consolidator end to end on a real JetStream and
// SQLite, including rules written and broken by the test, and
// `engram rebuild` after consolidation.
package consolidation
