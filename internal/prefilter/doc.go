// Package prefilter decides, before every LLM turn and without calling a
// model, whether a user's message is worth a memory lookup (seed 001 §5.2,
// "预判规则引擎"). It is the cheap gate in front of retrieval: a lookup that
// is skipped costs nothing, one that runs costs a search and prompt tokens.
//
// # Rules, in the order they are applied
//
// The first rule that matches decides; Decision.Reason names it, as
// "rule" or "rule:what matched".
//
//  1. skip:empty — nothing visible (whitespace, zero-width characters).
//  2. skip:ack — the message is only acknowledgements and continuations:
//     继续, 好的, 好, 嗯, 确认, 谢谢, ok, okay, thanks, yes, no, go on, 👍 …,
//     possibly several with punctuation between them ("好的，继续", "ok thanks!").
//  3. skip:code — the message is mostly code: nothing but fenced or inline
//     code spans, or (with no fences) symbol-dense text with no prose in it.
//     Prose is any CJK text, three plain words in a row, a trailing question
//     mark or a leading wh-word. Code that is not symbol-dense (much Python,
//     SQL) is not recognised and falls through to the rules below.
//  4. Retrieve triggers, checked on the prose only (code spans removed, so a
//     '?' in a ternary or an identifier called "before" does not count):
//     pronoun:… — memory pronouns and recall phrases (我的, 我们的, 你记得,
//     还记得, 之前说过, my, our, remember, did I, what did we …);
//     time:… — time references (上次, 昨天, 前天, 上周, 之前, last time,
//     yesterday, last week, earlier, before …);
//     project:… — a known project name, case-insensitive; a name that starts
//     or ends with a Latin letter or digit must stand as a word there
//     ("go" does not match "going"), CJK is matched as a substring;
//     preference:… — 喜欢, 偏好, 习惯, 平时, 设置, 配置, prefer, favorite, usually …;
//     question — '?' or '？' (not one inside a URL such as a?b=1), 什么, 怎么,
//     为什么, 哪, 谁 …, a trailing 吗/呢/么/嘛, or a leading wh-word.
//     In a message over 1 KB only the first and last 512 bytes are read
//     for triggers: references and questions sit at either end of a long
//     paste, and such a message is retrieved for by the default anyway.
//  5. default — a message of at least MinLength (CJK characters count two,
//     other visible characters one) is retrieved for; "帮我写个函数" is, since
//     the user's stored preferences help with an instruction too. Seed 001
//     lists plain instructions as a skip; we do not, because a missed
//     lookup is worse than a wasted one.
//  6. skip:short — anything shorter.
//
// A caller that must retrieve whatever the message says (an explicit flag
// on the request) uses Forced instead of calling ShouldRetrieve.
//
// # What it must never do
//
// Call a model, touch the network or the disk, allocate much, or take more
// than microseconds: it runs before every LLM turn. It depends on the
// standard library only. It never rejects input: any string, valid UTF-8
// or not, gets a Decision.
//
// # Concurrency
//
// ShouldRetrieve is pure and safe for concurrent use; the word lists are
// built once at package initialisation and never changed.
//
// # Testing
//
// A table of Chinese and English messages covers every rule and the order
// between them; FuzzShouldRetrieve (seed corpus in testdata/fuzz) checks that
// no input panics and that every Decision is consistent with its reason;
// BenchmarkShouldRetrieve measures a mixed set of real-looking messages.
// TestImportsOnlyStandardLibrary keeps the package free of dependencies.
package prefilter
