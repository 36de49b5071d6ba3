// Package rules loads, checks and evaluates engram's consolidation rules:
// the YAML files in rules/ that say what the consolidator does when an
// event arrives or a schedule falls due (seed 002 §11, seed 001 §10.5).
// The consolidator holds no behaviour of its own beyond the actions; the
// shipped files reproduce the seeds, and removing one removes what it
// does.
//
// # Rule files
//
// A rule file is one YAML document with a rules: list. Every *.yaml and
// *.yml file directly in the rules directory is loaded, in name order;
// rule names are unique across all of them. A full example:
//
//	rules:
//	  - name: consolidate_on_session_end      # required: letters, digits, _ . -
//	    description: Consolidate sessions of 3 or more messages.
//	    on: session.ended                     # an event type; "*" matches any run: memory.*
//	    when:                                 # optional; a condition, see below
//	      all:
//	        - field: data.message_count
//	          op: gte                         # or the seed's ">="
//	          value: 3
//	        - not:
//	            field: data.reason
//	            op: eq
//	            value: error
//	    do:                                   # required: one or more actions, run in order
//	      - build_episode: {source: session_end}
//	      - update_scratchpad                 # an action with default parameters
//	      - extract_now: {reason: session_ended}
//	    mode: auto                            # auto (default) or confirm
//	    enabled: true                         # default true
//
//	  - name: weekly_dedupe
//	    schedule: "0 4 * * 1"                 # instead of on: a cron expression
//	    tz: Asia/Shanghai                     # optional; default the server's local zone
//	    do:
//	      - dedupe: {similarity: 0.9, min_entries: 10}
//
// A rule has exactly one trigger: on: (an event type engram knows, see the
// events package) or schedule:. A scheduled rule has no event, so no when:.
//
// # Conditions
//
// A condition is a comparison, field/op/value, or a group: all: (every one
// holds), any: (at least one holds), or not: (the one inside fails).
// Groups nest, up to 16 deep. Fields are CloudEvent attributes (id, source,
// type, subject, time, namespace, user, agent, …) or paths into the event's
// JSON data: data.message_count, data.kind, data.turns.0.role.
//
//	op        value               holds when the field …
//	eq, ne    a scalar or null    equals / does not equal the value (==, != too)
//	gt, gte,  a number or string  orders after / not before / before / not
//	lt, lte                       after it (>, >=, <, <= too); strings by bytes
//	in,       a list of scalars   equals one / none of them
//	not_in
//	contains  a scalar            is a string holding it, or a list with it
//	matches   an RE2 expression   is a string the expression matches (unanchored)
//	exists    true (default)      is present (or, with false, absent)
//	          or false
//
// A comparison needs its field present and of the kind it compares
// (numbers with numbers, strings with strings); otherwise it is false, for
// ne and not_in too, and `engram rules test` says why ("data.message_count
// is missing", "… is a string, gte needs a number"). To mean "anything but
// x, or nothing", write not: {field: f, op: eq, value: x}. Numbers in event
// data are compared as float64.
//
// # Actions
//
// An action is a name, or one name mapped to its parameters. Parameters
// left out take the defaults below (from DESIGN.md §5); `engram rules test`
// shows every action with all of its parameters.
//
//	build_episode      source: session_end | compression | sweep (default from
//	                   the trigger: session.ended, context.compressing, schedule)
//	update_scratchpad  max_chars: 2000
//	extract_now        reason: session_ended | compressing | sweep | quiet |
//	                   token_cap | manual (default from the trigger, else manual);
//	                   min_messages: 1 (the smallest session extracted at once);
//	                   quiet_gap: a duration (reason quiet), or token_cap: a
//	                   count ≥ 100 (reason token_cap), on turn.recorded only
//	compress_daily     days: 1 (how many past days of event log to compress)
//	dedupe             similarity: 0.9 (in (0, 1]), min_entries: 10 (per partition)
//	refresh_profile    min_importance: 0.7
//	decay              (none)
//	archive            score_below: 0.1, access_below: 2
//	expire             transient: 24h, short_term: 3d (durations: 90m, 36h, 3d)
//	enforce_cap        max_memories: 10000
//	render_cards       max_chars: 1500, per_kind: 5 (MEMORY.md, USER.md)
//	publish            type: an event type (required), data: a mapping
//
// A set in which a published event can lead back to the rule that
// published it is refused, whatever the conditions say.
//
// # Extraction triggers
//
// The extraction batcher has no triggers of its own: extract_now rules
// are its triggers. On turn.recorded, a rule with quiet_gap extracts a
// session once no turn has come for that long, and one with token_cap
// once its waiting turns pass that many tokens (each turn takes the
// thresholds of the rules it fires, the smallest when several do; none
// fired, that trigger is off for the session). On session.ended and
// context.compressing, the session's waiting turns are extracted at once
// when it has min_messages (the event's message_count, else its waiting
// turns). On a schedule, every turn not extracted yet is. A rule removed
// or disabled is a trigger off; the shipped rules/extraction.yaml,
// compression.yaml and daily.yaml give seed 001's 3 minutes, 6,000
// tokens, session end, compression and 03:00.
//
// mode: confirm makes the consolidator ask before running the actions
// (the firing waits as a pending item for an operator); auto runs them.
// A rule with enabled: false is checked but never fires.
//
// # Schedules
//
// Five fields, minute hour day-of-month month day-of-week, each *, a
// value, a range a-b, a step */n, a-b/n or a/n, or a comma list; months
// and weekdays may be names (JAN, MON; 0 and 7 are Sunday); or one of
// @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually. There
// is no seconds field. Day-of-month and day-of-week follow classic cron:
// if both are restricted a day matching either runs. Across daylight
// saving, each wall-clock time fires once: a time skipped when clocks go
// forward fires when they have, and a time that happens twice when they go
// back fires the first time. A rule that fell due several times while the
// worker was stopped or busy fires once.
//
// # Errors
//
// Every problem in every file is reported at once, each as
// file:line:col: message, for example
//
//	rules/session.yaml:21:9: rule consolidate_on_session_end: do[0]: unknown action "buld_episode" (did you mean build_episode?)
//
// Unknown keys, unknown event types and unknown actions are errors, not
// warnings, so a typo never silently disables a rule. For YAML syntax
// errors the line is where the text stops being YAML and the column is
// that line's first character: the YAML library reports no column.
//
// # Using it
//
// Load and LoadFS check a directory; Set.Match and Set.Explain run an
// event (see ParseEvent) against the rules; Set.Due and RunSchedule fire
// scheduled rules; Watcher reloads the directory when its files change,
// keeping the last good Set when a change breaks it. The package runs no
// action itself and never imports the CloudEvents SDK or NATS: a worker
// passes its events in as JSON and does the work.
//
// Concurrency: a Set and its Rules are immutable once loaded and may be
// shared freely; Watcher.Current may be called from any goroutine while
// Run polls. Watcher.Run and RunSchedule block until their context ends;
// their caller owns the goroutine.
//
// Testing: tables for each parse error with its exact line and column, for
// every operator, and for Schedule.Next across daylight saving; the watcher
// and the scheduler run under testing/synctest, with no sleeping; the
// shipped rules are loaded and run against sample events; FuzzParse, with
// the shipped files in its seed corpus, checks that no input panics.
package rules
