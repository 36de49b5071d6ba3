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
