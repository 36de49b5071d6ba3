package secrets

import "strings"

// Hand-written scanners for the patterns that key on common words
// ("token", "password", "://"). As case-insensitive regular expressions
// they ran over the whole text whenever such a word appeared, which in an
// agent's conversation is nearly always; these look only where the word is.
// Each returns matches shaped like regexp's FindAllStringSubmatchIndex.

// Bounds that keep every scan linear: keys, user names and values longer
// than these are not what they seem, and scanning further from each of many
// keywords would be quadratic.
const (
	maxKey   = 128
	maxValue = 512
)

// scanKeyed finds field assignments whose key contains one of keywords
// (lowercase): DB_PASSWORD=…, "api_key": "…", token: …. The result holds
// [start, end, keyStart, keyEnd, valueStart, valueEnd]. With keyLast the
// keyword must end the key (PASSWORD, not PASSWORD_FILE); otherwise it may
// be followed by _ . or - and more (ACCESS_TOKEN_PROD).
func scanKeyed(s, low string, keywords []string, keyLast bool) [][]int {
	var out [][]int
	seen := map[int]bool{}
	for _, kw := range keywords {
		for i := 0; ; {
			j := strings.Index(low[i:], kw)
			if j < 0 {
				break
			}
			at := i + j
			after := at + len(kw)
			i = after
			if kw == "credential" && after < len(low) && low[after] == 's' {
				after++
			}
			start := at
			for start > 0 && at-start < maxKey && isKeyByte(low[start-1]) {
				start--
			}
			end := after
			for end < len(low) && end-after < maxKey && isKeyByte(low[end]) {
				end++
			}
			if start > 0 && isKeyByte(low[start-1]) || end < len(low) && isKeyByte(low[end]) {
				continue // longer than any real key
			}
			// ACCESS_TOKEN_PROD and SecretAccessKey go on past the keyword;
			// with keyLast only the keyword may end the key.
			if end != after && (keyLast || strings.IndexByte("_.-", low[after]) < 0 && !isUpper(s[after])) {
				continue
			}
			if seen[start] {
				continue
			}
			valStart, valEnd, ok := assignedValue(s, end)
			if !ok {
				continue
			}
			seen[start] = true
			out = append(out, []int{start, valEnd, start, end, valStart, valEnd})
		}
	}
	return out
}

// assignedValue reads `["']? \s* (:= | => | : | =) \s* ["']? value` from
// s[i:], the value running to whitespace, a quote or , ; ) < > `.
func assignedValue(s string, i int) (start, end int, ok bool) {
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		i++
	}
	i = skipSpace(s, i)
	switch {
	case strings.HasPrefix(s[i:], ":="), strings.HasPrefix(s[i:], "=>"):
		i += 2
	case i < len(s) && (s[i] == ':' || s[i] == '='):
		i++
	default:
		return 0, 0, false
	}
	i = skipSpace(s, i)
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		i++
	}
	start = i
	for i < len(s) && i-start <= maxValue && !isSpace(s[i]) && strings.IndexByte("\"'`<>,;)", s[i]) < 0 {
		i++
	}
	return start, i, i > start && i-start <= maxValue
}

// saidConnectors join a password to its value in prose, longest first.
var saidConnectors = []string{"is set to", "was set to", "set to", "changed to", "is now", "is", "was"}

// scanSaidPassword finds "password is X" / "passcode was X" / "password
// set to X", and a bare "password X" when X has letters and digits both
// (so "password reset link" is prose). The result holds [start, end,
// valueStart, valueEnd].
func scanSaidPassword(s, low string) [][]int {
	var out [][]int
	for _, kw := range []string{"password", "passcode", "passphrase", "passwd"} {
		for i := 0; ; {
			j := strings.Index(low[i:], kw)
			if j < 0 {
				break
			}
			at := i + j
			i = at + len(kw)
			if at > 0 && isWordByte(low[at-1]) {
				continue
			}
			k := i
			if k >= len(low) || !isSpace(low[k]) {
				continue
			}
			k = skipSpace(low, k)
			bare := true
			for _, c := range saidConnectors {
				if strings.HasPrefix(low[k:], c) && k+len(c) < len(low) && isSpace(low[k+len(c)]) {
					k, bare = skipSpace(low, k+len(c)), false
					break
				}
			}
			if k < len(s) && (s[k] == '"' || s[k] == '\'') {
				k++
			}
			v := k
			for v < len(s) && v-k <= maxValue && !isSpace(s[v]) && s[v] != '"' && s[v] != '\'' {
				v++
			}
			if v > k && v-k <= maxValue && (!bare || v-k >= 6 && hasLetterAndDigit(s[k:v])) {
				out = append(out, []int{at, v, k, v})
			}
		}
	}
	return out
}

// scanURLPassword finds the password in scheme://user:password@host. The
// result holds [start, end, passwordStart, passwordEnd].
func scanURLPassword(s, low string) [][]int {
	var out [][]int
	for i := 0; ; {
		j := strings.Index(low[i:], "://")
		if j < 0 {
			break
		}
		at := i + j
		i = at + 3
		start := at
		for start > 0 && at-start < 21 && isSchemeByte(low[start-1]) {
			start--
		}
		if at-start < 2 || low[start] < 'a' || low[start] > 'z' || start > 0 && isWordByte(low[start-1]) {
			continue
		}
		k := i
		for k < len(s) && k-i < maxKey && !isSpace(s[k]) && strings.IndexByte(":/@'\"<>", s[k]) < 0 {
			k++
		}
		if k >= len(s) || s[k] != ':' {
			continue
		}
		pw := k + 1
		k = pw
		for k < len(s) && k-pw < maxValue && !isSpace(s[k]) && strings.IndexByte("@/'\"<>", s[k]) < 0 {
			k++
		}
		if k == pw || k >= len(s) || s[k] != '@' {
			continue
		}
		out = append(out, []int{start, k + 1, pw, k})
	}
	return out
}

func isKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

func isSchemeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '.' || c == '-'
}

// isSpace is RE2's \s: ASCII whitespace.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

func hasLetterAndDigit(v string) bool {
	var letter, digit bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		letter = letter || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		digit = digit || '0' <= c && c <= '9'
	}
	return letter && digit
}
