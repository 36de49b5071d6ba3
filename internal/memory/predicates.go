package memory

import "strings"

// SingleValued reports whether a subject holds at most one current value
// for predicate, so that a newer memory with the same subject and predicate
// supersedes the older one ("we use Python 3.10" → "now 3.12"). Other
// predicates (likes, rule, decision, …) are sets: a new value adds to them
// and only a near-duplicate merges. The vocabulary is canonical English
// whatever the conversation's language (see internal/ruleextract).
func SingleValued(predicate string) bool {
	switch NormalizeKey(predicate) {
	case "name", "nickname", "location", "hometown", "employer", "occupation", "age",
		"uses", "version", "path", "email", "timezone", "language", "role", "birthday":
		return true
	}
	return false
}

// NormalizeKey canonicalises a subject or predicate for matching: trimmed
// and lower-cased (CJK is unaffected).
func NormalizeKey(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// Preference reports whether predicate states a preference: likes,
// dislikes, prefers. They hold many values, but with a topic they are one
// slot: "drinks coffee every morning" (likes) and "no longer drinks milk"
// (dislikes) are both what the user drinks, and "switched to tea" replaces
// them both and leaves "likes jazz" alone.
func Preference(predicate string) bool {
	switch NormalizeKey(predicate) {
	case "likes", "dislikes", "prefers":
		return true
	}
	return false
}

// Replaces reports whether a memory takes the place of what its slot
// held before it was said: always for a single-valued predicate, and when
// its extractor said it updates for the others.
func Replaces(predicate string, updates bool) bool { return updates || SingleValued(predicate) }

// Slot names what holds one current value: a single-valued predicate of
// a subject (where the user lives); a topic of a subject's preferences
// (what they drink); else a predicate's values of one topic. A memory
// that replaces (Replaces) retires the current versions of its slot said
// before it, and is retired by one said after it.
func Slot(subject, predicate, topic string) string {
	subject, predicate = NormalizeKey(subject), NormalizeKey(predicate)
	switch {
	case SingleValued(predicate):
		return subject + "\x00" + predicate
	case Preference(predicate) && topic != "":
		return subject + "\x00preference\x00" + topic
	}
	return subject + "\x00" + predicate + "\x00" + topic
}
