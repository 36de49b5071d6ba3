package secrets

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Finding is one secret Mask replaced.
type Finding struct {
	// Kind names the pattern: openai_key, anthropic_key, stripe_key,
	// aws_access_key, github_token, slack_token, google_api_key, jwt,
	// bearer, private_key, connection_string, password, generic_secret.
	Kind string
	// Ref is what replaced the secret in the text. It never contains the
	// secret.
	Ref string
}

// Masker masks secrets. Its zero value uses the default patterns; it holds
// no state, so one Masker can serve any number of goroutines.
type Masker struct{}

// maxRepeatMask is the shortest secret whose every other occurrence in the
// text is masked too: "my password is hunter22 … log in with hunter22".
// Shorter ones ("1234") would blank unrelated text.
const maxRepeatMask = 6

// Mask returns s with every secret replaced by its reference, and the
// secrets found, one Finding per distinct secret in order of appearance.
func (m *Masker) Mask(s string) (string, []Finding) {
	spans := find(s)
	if len(spans) == 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	var found []Finding
	seen := map[string]bool{}
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(sp.ref)
		last = sp.end
		if !seen[sp.ref] {
			seen[sp.ref] = true
			found = append(found, Finding{Kind: sp.kind, Ref: sp.ref})
		}
	}
	b.WriteString(s[last:])
	return b.String(), found
}

// Contains reports whether s holds a secret Mask would replace.
func (m *Masker) Contains(s string) bool {
	low := lowerASCII(s)
	protected := refSpans(s)
	for i := range patterns {
		p := &patterns[i]
		if !p.mayMatch(low) {
			continue
		}
		for _, c := range p.candidates(s, low) {
			if !overlapsSorted(c.start, c.end, protected) {
				return true
			}
		}
	}
	return false
}

// span is one secret's place in the text and what replaces it.
type span struct {
	start, end int
	kind, ref  string
	secret     string
	priority   int
}

// find returns the secrets in s, sorted by position and not overlapping.
// It stays O(n log n) in the number of matches, so a long log full of
// credentials costs little more than a short one.
func find(s string) []span {
	low := lowerASCII(s)
	protected := refSpans(s)
	var all []span
	for i := range patterns {
		p := &patterns[i]
		if !p.mayMatch(low) {
			continue
		}
		for _, c := range p.candidates(s, low) {
			if overlapsSorted(c.start, c.end, protected) {
				continue // a reference from an earlier Mask: never mask it again
			}
			c.priority = i
			all = append(all, c)
		}
	}
	if len(all) == 0 {
		return nil
	}
	sort.Slice(all, func(a, b int) bool {
		if all[a].start != all[b].start {
			return all[a].start < all[b].start
		}
		return all[a].end > all[b].end
	})
	var kept []span
	for i := 0; i < len(all); {
		j, end := i+1, all[i].end
		for j < len(all) && all[j].start < end {
			end = max(end, all[j].end)
			j++
		}
		kept = append(kept, resolve(all[i:j])...)
		i = j
	}
	sort.Slice(kept, func(a, b int) bool { return kept[a].start < kept[b].start })
	return withRepeats(s, kept, protected)
}

// resolve picks from matches that overlap one another. The longest wins,
// so a password that happens to contain a JWT is masked whole; on a tie
// the more specific pattern (earlier in the list) names it.
func resolve(cluster []span) []span {
	if len(cluster) == 1 {
		return cluster
	}
	sort.Slice(cluster, func(a, b int) bool {
		la, lb := cluster[a].end-cluster[a].start, cluster[b].end-cluster[b].start
		if la != lb {
			return la > lb
		}
		if cluster[a].priority != cluster[b].priority {
			return cluster[a].priority < cluster[b].priority
		}
		return cluster[a].start < cluster[b].start
	})
	var out []span
	for _, c := range cluster {
		overlaps := false
		for _, o := range out {
			if c.start < o.end && o.start < c.end {
				overlaps = true
				break
			}
		}
		if !overlaps {
			out = append(out, c)
		}
	}
	return out
}

// maxRepeatSecrets bounds how many distinct secrets are searched for again
// in the rest of the text: each costs one pass over it.
const maxRepeatSecrets = 64

// withRepeats adds every other occurrence of a found secret: it is the same
// secret even where no keyword names it. kept is sorted by start.
func withRepeats(s string, kept, protected []span) []span {
	var repeats []span
	searched := map[string]bool{}
	for _, k := range kept {
		if len(k.secret) < maxRepeatMask || searched[k.secret] || len(searched) == maxRepeatSecrets {
			continue
		}
		searched[k.secret] = true
		for i := 0; ; {
			j := strings.Index(s[i:], k.secret)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(k.secret)
			i = end
			if !overlapsSorted(start, end, kept) && !overlapsSorted(start, end, protected) {
				repeats = append(repeats, span{start: start, end: end, kind: k.kind, ref: k.ref, secret: k.secret})
			}
		}
	}
	if len(repeats) == 0 {
		return kept
	}
	all := append(kept, repeats...)
	sort.Slice(all, func(a, b int) bool { return all[a].start < all[b].start })
	out := all[:0]
	lastEnd := 0
	for _, sp := range all {
		if sp.start >= lastEnd {
			out = append(out, sp)
			lastEnd = sp.end
		}
	}
	return out
}

// overlapsSorted reports whether [start, end) overlaps any of spans, which
// are sorted by start and do not overlap one another.
func overlapsSorted(start, end int, spans []span) bool {
	i := sort.Search(len(spans), func(i int) bool { return spans[i].end > start })
	return i < len(spans) && spans[i].start < end
}

// reRef matches the references Mask writes, so they are never masked
// again; refSpans finds the same spans without it, faster.
var reRef = regexp.MustCompile(`\[secret:[a-z_]+#[0-9a-f]{4}\]|[A-Za-z0-9_-]{1,16}…[A-Za-z0-9_-]{4}`)

func refSpans(s string) []span {
	var out []span
	for i := 0; ; {
		j := strings.Index(s[i:], "[secret:")
		if j < 0 {
			break
		}
		at := i + j
		if m := reHashRefAt.FindStringIndex(s[at:min(len(s), at+64)]); m != nil {
			out = append(out, span{start: at, end: at + m[1]})
		}
		i = at + 1
	}
	for i := 0; ; {
		j := strings.Index(s[i:], "…")
		if j < 0 {
			break
		}
		at := i + j
		i = at + len("…")
		start := at
		for start > 0 && at-start < 16 && isTokenByte(s[start-1]) {
			start--
		}
		end := i
		for end < len(s) && end-i < 4 && isTokenByte(s[end]) {
			end++
		}
		if start < at && end-i == 4 {
			out = append(out, span{start: start, end: end})
		}
	}
	if len(out) == 0 {
		return nil
	}
	sort.Slice(out, func(a, b int) bool { return out[a].start < out[b].start })
	merged := out[:1]
	for _, sp := range out[1:] {
		if last := &merged[len(merged)-1]; sp.start < last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

var reHashRefAt = regexp.MustCompile(`^\[secret:[a-z_]+#[0-9a-f]{4}\]`)

// hashRef is the reference for a secret with no telling prefix.
func hashRef(kind, secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "[secret:" + kind + "#" + hex.EncodeToString(sum[:2]) + "]"
}

// pattern is one kind of secret.
type pattern struct {
	kind string
	// re or scan finds matches; scan returns them shaped like re's
	// FindAllStringSubmatchIndex.
	re    *regexp.Regexp
	scan  func(s, low string) [][]int
	group int // the submatch that is the secret; 0 is the whole match
	// keyGroup, when set, is the submatch naming the field ("DB_PASSWORD");
	// validKey rejects fields that are not secrets ("max_tokens").
	keyGroup int
	validKey func(key string) bool
	hints    []string // lowercase; the pattern runs only if one is in the text
	// bounded marks a token with a telling prefix (sk-, AKIA, ghp_): it
	// must not be glued to more token characters on either side.
	bounded bool
	valid   func(secret string) bool
}

func (p *pattern) mayMatch(low string) bool {
	for _, h := range p.hints {
		if strings.Contains(low, h) {
			return true
		}
	}
	return false
}

// candidates returns the valid matches of p in s.
func (p *pattern) candidates(s, low string) []span {
	var matches [][]int
	if p.scan != nil {
		matches = p.scan(s, low)
	} else {
		matches = p.re.FindAllStringSubmatchIndex(s, -1)
	}
	var out []span
	for _, m := range matches {
		start, end := m[2*p.group], m[2*p.group+1]
		if start < 0 {
			continue
		}
		secret := s[start:end]
		if p.group > 0 {
			// A value runs to the next space; sentence punctuation after
			// it is not part of it ("password=hunter22.").
			trimmed := strings.TrimRight(secret, ".,;:!?)]}'\"")
			end -= len(secret) - len(trimmed)
			secret = trimmed
		}
		if secret == "" || isRefLike(secret) {
			continue
		}
		if p.keyGroup > 0 && m[2*p.keyGroup] >= 0 && !p.validKey(s[m[2*p.keyGroup]:m[2*p.keyGroup+1]]) {
			continue
		}
		if p.valid != nil && !p.valid(secret) {
			continue
		}
		if !boundaryOK(s, start, end, p) {
			continue
		}
		out = append(out, span{start: start, end: end, kind: p.kind, ref: hashRef(p.kind, secret), secret: secret})
	}
	return out
}

// boundaryOK rejects a prefixed token glued to more token characters on
// either side: "xAKIA…", "AIza…" followed by a 36th character.
func boundaryOK(s string, start, end int, p *pattern) bool {
	if !p.bounded {
		return true
	}
	if start > 0 && isTokenByte(s[start-1]) {
		return false
	}
	return end == len(s) || !isTokenByte(s[end])
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// isRefLike reports a value that is (part of) a reference: a reference
// whose "[secret:" or "]" was cut off by some truncation is still one,
// and masking it again would garble it ("[secret:[secret:…").
func isRefLike(v string) bool {
	return strings.Contains(v, "…") || strings.Contains(v, "[secret:") || reRefBody.MatchString(v)
}

var reRefBody = regexp.MustCompile(`^(?:secret:)?[a-z_]+#[0-9a-f]{4}\]?$`)

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// The patterns, most specific first: on a tie the earlier names the secret.
var patterns = []pattern{
	{
		kind:  "private_key",
		re:    regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s]*)`),
		hints: []string{"private key"},
	},
	{
		kind:  "jwt",
		re:    regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`),
		hints: []string{"eyj"},
	},
	{
		kind:    "anthropic_key",
		re:      regexp.MustCompile(`sk-ant-[A-Za-z0-9_-]{20,}`),
		hints:   []string{"sk-ant-"},
		bounded: true,
	},
	{
		kind:    "openai_key",
		re:      regexp.MustCompile(`sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`),
		hints:   []string{"sk-"},
		bounded: true,
		valid:   letterAndDigit,
	},
	{
		kind:    "stripe_key",
		re:      regexp.MustCompile(`(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}`),
		hints:   []string{"_live_", "_test_"},
		bounded: true,
	},
	{
		kind:    "github_token",
		re:      regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}`),
		hints:   []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		bounded: true,
	},
	{
		kind:    "slack_token",
		re:      regexp.MustCompile(`xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,}`),
		hints:   []string{"xox", "xapp-"},
		bounded: true,
	},
	{
		kind:    "aws_access_key",
		re:      regexp.MustCompile(`(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}`),
		hints:   []string{"akia", "asia", "abia", "acca"},
		bounded: true,
	},
	{
		kind:    "google_api_key",
		re:      regexp.MustCompile(`AIza[0-9A-Za-z_-]{35}`),
		hints:   []string{"aiza"},
		bounded: true,
	},
	{
		kind:  "slack_webhook",
		re:    regexp.MustCompile(`https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}`),
		hints: []string{"hooks.slack.com"},
	},
	{
		kind:    "gitlab_token",
		re:      regexp.MustCompile(`glpat-[A-Za-z0-9_-]{20,}`),
		hints:   []string{"glpat-"},
		bounded: true,
	},
	{
		kind:    "huggingface_token",
		re:      regexp.MustCompile(`hf_[A-Za-z]{34}`),
		hints:   []string{"hf_"},
		bounded: true,
	},
	{
		kind:    "npm_token",
		re:      regexp.MustCompile(`npm_[A-Za-z0-9]{36}`),
		hints:   []string{"npm_"},
		bounded: true,
	},
	{
		kind:    "sendgrid_key",
		re:      regexp.MustCompile(`SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}`),
		hints:   []string{"sg."},
		bounded: true,
	},
	{
		kind:    "stripe_webhook_secret",
		re:      regexp.MustCompile(`whsec_[A-Za-z0-9]{24,}`),
		hints:   []string{"whsec_"},
		bounded: true,
	},
	{
		kind:  "password",
		re:    regexp.MustCompile(`\bmysql(?:dump|admin)?\b[^\n]*?\s-p([^\s-][^\s]{3,})`),
		group: 1,
		hints: []string{"mysql"},
		valid: plausible(4),
	},
	{
		kind:  "connection_string",
		scan:  scanURLPassword,
		group: 1,
		hints: []string{"://"},
		valid: plausible(1),
	},
	{
		kind:  "bearer",
		re:    regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)`),
		group: 1,
		hints: []string{"bearer"},
	},
	{
		kind:  "password",
		re:    regexp.MustCompile(`(?i)\bauthorization\s*[:=]\s*["']?basic\s+([A-Za-z0-9+/]{8,}={0,2})`),
		group: 1,
		hints: []string{"basic"},
	},
	{
		kind:     "password",
		scan:     func(s, low string) [][]int { return scanKeyed(s, low, passwordKeywords, true) },
		group:    2,
		keyGroup: 1,
		validKey: secretKey,
		hints:    []string{"pass", "pwd"},
		valid:    plausible(3),
	},
	{
		kind:  "password",
		re:    regexp.MustCompile(`(?:密码|口令)\s*(?:(?:是|为|设为|设置为|改为|改成)了?\s*[：:]?|[：:=])\s*([!-~]+)`),
		group: 1,
		hints: []string{"密码", "口令"},
		valid: plausible(3),
	},
	{
		kind:  "password",
		scan:  scanSaidPassword,
		group: 1,
		hints: []string{"pass"},
		valid: func(v string) bool { return plausible(4)(v) && hasNonLetter(v) },
	},
	{
		kind:     "generic_secret",
		scan:     func(s, low string) [][]int { return scanKeyed(s, low, secretKeywords, false) },
		group:    2,
		keyGroup: 1,
		validKey: secretKey,
		hints:    []string{"key", "secret", "token", "credential"},
		valid:    tokenLike,
	},
	{
		kind:  "generic_secret",
		re:    regexp.MustCompile(`(?:密钥|秘钥|私钥|令牌)\s*(?:(?:是|为|设为|改为|改成)了?\s*[：:]?|[：:=])\s*([!-~]+)`),
		group: 1,
		hints: []string{"密钥", "秘钥", "私钥", "令牌"},
		valid: tokenLike,
	},
}

var (
	passwordKeywords = []string{"password", "passwd", "passphrase", "pass_word", "pwd"}
	secretKeywords   = []string{"api_key", "api-key", "apikey", "secret", "token", "access_key", "access-key", "auth_key", "auth-key", "private_key", "private-key", "credential"}
)

// letterAndDigit separates real keys from words that happen to start
// with "sk-": "sk-learn-compatible-estimators" has no digit. Case does
// not matter: sk-abcdefghijklmnopqrstuvwx1234 is a key.
func letterAndDigit(s string) bool {
	var letter, digit bool
	for _, r := range s {
		letter = letter || unicode.IsLetter(r)
		digit = digit || unicode.IsDigit(r)
	}
	return letter && digit
}

// notSecrets are values that name a type, a placeholder or a state, not a
// secret: "password: string", "token: null", "password=required".
var notSecrets = map[string]bool{
	"none": true, "null": true, "nil": true, "true": true, "false": true, "undefined": true, "str": true,
	"string": true, "int": true, "bool": true, "bytes": true, "any": true, "password": true, "passwd": true,
	"secret": true, "required": true, "optional": true, "incorrect": true, "invalid": true, "wrong": true,
	"correct": true, "empty": true, "hidden": true, "redacted": true, "masked": true, "your_password": true,
	"yourpassword": true, "your-password": true, "example": true, "placeholder": true, "todo": true,
	"tbd": true, "n/a": true, "na": true, "env": true, "token": true, "api_key": true, "apikey": true,
	"secret_key": true, "your_api_key": true, "your-api-key": true, "your_token": true, "<redacted>": true,
	"default": true, "unset": true, "omitted": true, "same": true, "changed": true, "reset": true,
	"expired": true, "set": true, "new": true, "old": true, "ok": true, "yes": true, "no": true,
}

// reIdentifier is a word made of letters and underscores only.
var reIdentifier = regexp.MustCompile(`^[A-Za-z_]+$`)

// reCodeRef is a dotted identifier: config.password, os.environ, req.body.pw.
var reCodeRef = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$`)

// plausible returns a check that a value is a secret and not code, a
// placeholder or a path.
func plausible(minLen int) func(string) bool {
	return func(v string) bool {
		if len(v) < minLen || len(v) > 512 {
			return false
		}
		low := strings.ToLower(v)
		if notSecrets[low] || strings.HasPrefix(low, "your") && strings.ContainsAny(low, "_-") {
			return false
		}
		for _, p := range []string{"$", "{{", "<", "%", "#{", "/", "~/", "./", "process.env", "os.getenv", "os.environ", "env(", "getenv"} {
			if strings.HasPrefix(low, p) {
				return false
			}
		}
		if strings.ContainsAny(v, "([{") || reCodeRef.MatchString(v) || sameChar(v) {
			return false
		}
		// An identifier that names a secret is code, not a secret:
		// encodeUserPassword, api_key_var, passwordHash.
		if reIdentifier.MatchString(v) && (strings.Contains(low, "pass") || strings.Contains(low, "secret") ||
			strings.Contains(low, "token") || strings.Contains(low, "key")) {
			return false
		}
		return true
	}
}

// tokenLike is plausible and long or mixed enough to be a token: "max: 12"
// and "token: abc" are not.
func tokenLike(v string) bool {
	if !plausible(8)(v) {
		return false
	}
	var letter, digit, other bool
	for _, r := range v {
		switch {
		case unicode.IsLetter(r):
			letter = true
		case unicode.IsDigit(r):
			digit = true
		default:
			other = true
		}
	}
	switch {
	case digit && !letter && !other:
		return len(v) >= 16
	case letter && (digit || other):
		return true
	}
	return len(v) >= 20
}

// secretKey rejects fields whose names contain a secret word but hold a
// count, a name, a place or a setting: token_type, secret_name, api_key_id,
// password_min_length, password_reset_url.
func secretKey(key string) bool {
	for _, w := range keyWords(key) {
		if notSecretKeyWords[w] {
			return false
		}
	}
	return true
}

var notSecretKeyWords = map[string]bool{
	"max": true, "min": true, "num": true, "count": true, "limit": true, "len": true, "length": true,
	"size": true, "type": true, "budget": true, "usage": true, "total": true, "per": true, "input": true,
	"output": true, "prompt": true, "completion": true, "expiry": true, "expires": true, "expiration": true,
	"ttl": true, "ratio": true, "cost": true, "name": true, "url": true, "uri": true, "path": true,
	"file": true, "endpoint": true, "header": true, "prefix": true, "format": true, "id": true,
	"enabled": true, "version": true, "policy": true, "hash": true, "field": true, "label": true,
	"hint": true, "rule": true, "rules": true, "strength": true, "reset": true, "manager": true,
}

// keyWords splits a field name into lowercase words at _ . - and at
// camelCase humps: "DB_PASSWORD" → db password; "apiKeyId" → api key id.
func keyWords(key string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, r := range key {
		switch {
		case r == '_' || r == '.' || r == '-':
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	flush()
	return words
}

func hasNonLetter(v string) bool {
	for _, r := range v {
		if !unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

func sameChar(v string) bool {
	for i := 1; i < len(v); i++ {
		if v[i] != v[0] {
			return false
		}
	}
	return true
}
