package llm

import "strings"

// Defang makes text safe to place inside a prompt's <data>…</data> block:
// "<data>" and "</data>" (any case, any spacing) become "[data>" and
// "[/data>", so text from a conversation cannot end the block early and
// pass itself off as instructions. Every prompt engram builds puts what
// people said in such a block.
func Defang(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		rest := strings.TrimLeft(s[i+1:], " /")
		if len(rest) >= 4 && strings.EqualFold(rest[:4], "data") {
			b.WriteByte('[')
		} else {
			b.WriteByte('<')
		}
		s = s[i+1:]
	}
}
