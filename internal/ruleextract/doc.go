// Package ruleextract is engram's rule-based fact extractor: a fast,
// deterministic pass over one conversation message that proposes
// memory.Candidates without any model.
//
// engram runs it when no LLM is configured, first on context compression (so
// nothing that leaves an agent's window is lost while the LLM is still
// working), and over turns whose LLM extraction failed for good. Chinese and
// English are both first-class: every family of patterns exists in both, and
// the predicates are one canonical English vocabulary (see vocab.go) so that
// "我住在上海" and "I live in Berlin" collide on (user, location) and the later
// supersedes the earlier.
//
// What it recognises, by family:
//
//   - identity (user turns only): name, nickname, location, hometown,
//     employer, occupation, age;
//   - preferences (user turns only): likes, dislikes, prefers;
//   - rules and explicit "remember …" notes (user turns only);
//   - decisions (user and, with lower confidence, assistant turns);
//   - updates (user turns): moves, changed habits ("我现在改喝茶了", "I
//     switched to tea", "no longer", "instead of", 不再), which carry the
//     habit's topic (drinks, food, smoking: habits.go) so that they
//     replace that topic's preferences and no others; tools migrated or
//     retired ("Jenkins 已经迁移到 GitHub Actions", "the old Jenkins is
//     retired", "已下线", "不用了");
//   - tools and versions, migrations and stopped tools, file paths (user and,
//     with lower confidence, assistant turns), and package installs or version
//     switches found in tool calls.
//
// Content is a clean standalone sentence in the language of the clause it
// came from: identity, preference and tool facts use short templates
// ("用户叫李雷", "User's name is Ana", "Project engram uses Go 1.26"); rules,
// notes and decisions keep the speaker's own clause behind a label
// ("规则：以后回答都用中文", "Decision: use Postgres").
//
// What it must never do: call out to anything (network, disk, clock, model);
// invent facts from questions, hypotheticals ("如果…", "if we used …",
// "assuming …", "we'd use …"), negations ("我不叫…", "we don't use …"),
// hedges ("…but I'm not sure", "看起来…"), sarcasm ("Oh sure, I just love
// …"), past states ("the old service used MySQL 5.7"), work under way or
// decided but not done ("we're migrating to React", "we decided to use
// Postgres" is the decision alone), one-off requests ("don't run the
// migration yet", "use Python 3.12 for this script"); take identity or
// preferences from anything but the user's own words (not quotations, text
// to translate, reported speech, or what "my students", "Sarah on the data
// team" or "many teams" do); return a candidate with an invalid kind
// or category, an empty subject, predicate or content, invalid UTF-8, or a
// confidence outside [0, 1]; panic on any input. It does not mask secrets:
// callers run text through internal/secrets first.
//
// Rules can misfire, so confidence follows seed 004's routing: clear patterns
// score 0.85–0.9 and are written at once, weaker ones score 0.60–0.85 and go
// to the pending queue for the user to confirm. Assistant turns are capped at
// 0.7 so nothing an assistant says about the user's setup is written without
// confirmation.
//
// Concurrency: Extract is a pure function over package-level tables and
// precompiled regular expressions; it is safe to call from many goroutines.
//
// Testing: table tests in both languages (positive and negative cases), the
// supersede pairing of version facts, a fuzz target FuzzExtract whose seed
// corpus lives in testdata/fuzz/FuzzExtract, and BenchmarkExtract on a
// typical message, because this runs on every turn.
package ruleextract
