package stream

import (
	"fmt"
	"strings"
)

// Subject prefixes. MEMORY holds mem.>; DEADLETTER holds dlq.>.
const (
	SubjectPrefix    = "mem"
	DLQSubjectPrefix = "dlq"
)

// Subject returns mem.<namespace>.<user>.<type>. The event type keeps its
// dots so that mem.*.*.turn.recorded selects every recorded turn.
func Subject(namespace, user, eventType string) string {
	return SubjectPrefix + "." + EncodeToken(namespace) + "." + EncodeToken(user) + "." + eventType
}

// ParseSubject splits a mem.> subject into its decoded parts.
func ParseSubject(subject string) (namespace, user, eventType string, err error) {
	parts := strings.SplitN(subject, ".", 4)
	if len(parts) != 4 || parts[0] != SubjectPrefix {
		return "", "", "", fmt.Errorf("subject %q is not mem.<namespace>.<user>.<type>", subject)
	}
	if namespace, err = DecodeToken(parts[1]); err != nil {
		return "", "", "", fmt.Errorf("subject %q: namespace: %w", subject, err)
	}
	if user, err = DecodeToken(parts[2]); err != nil {
		return "", "", "", fmt.Errorf("subject %q: user: %w", subject, err)
	}
	// One user, one spelling: a purge by subject (Erase, retention) must
	// never miss an event filed under another encoding of the same user.
	if enc := EncodeToken(namespace); enc != parts[1] {
		return "", "", "", fmt.Errorf("subject %q: namespace is not canonically encoded (want %q)", subject, enc)
	}
	if enc := EncodeToken(user); enc != parts[2] {
		return "", "", "", fmt.Errorf("subject %q: user is not canonically encoded (want %q)", subject, enc)
	}
	return namespace, user, parts[3], nil
}

// EncodeToken makes an id safe as one subject token: ASCII letters, digits,
// '-' and '_' stay as they are (so common ids read naturally in `nats`
// output); every other byte, including '.', '*', '>', '%', spaces and
// non-ASCII, becomes %XX. The encoding is reversible and injective, so two
// different users never share a subject.
func EncodeToken(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !plain(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if plain(c) {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	return string(b)
}

// DecodeToken reverses EncodeToken.
func DecodeToken(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("truncated escape in %q", s)
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", fmt.Errorf("bad escape in %q", s)
		}
		b = append(b, hi<<4|lo)
		i += 2
	}
	return string(b), nil
}

func plain(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
