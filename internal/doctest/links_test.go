package doctest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// Every relative link of README.md and docs/ resolves in a clone: the file
// is in the repository (nothing outside it, like ../shared), and a
// #fragment names a heading of the page it points to.
func TestDocLinks(t *testing.T) {
	t.Parallel()
	absRoot, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages(t) {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, page)
		for _, target := range links(string(raw)) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			file := page
			if path != "" {
				file = filepath.Join(filepath.Dir(page), path)
			}
			abs, err := filepath.Abs(file)
			if err != nil || !strings.HasPrefix(abs, absRoot+string(filepath.Separator)) && abs != absRoot {
				t.Errorf("%s: link %s leaves the repository", name, target)
				continue
			}
			if _, err := os.Stat(file); err != nil {
				t.Errorf("%s: link %s: %v", name, target, err)
				continue
			}
			if frag == "" {
				continue
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%s: link %s: %v", name, target, err)
				continue
			}
			if !anchors(string(b))[frag] {
				t.Errorf("%s: link %s: %s has no heading #%s", name, target, path, frag)
			}
		}
	}
}

var (
	fenced     = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```\\s*$")
	inlineCode = regexp.MustCompile("`[^`\n]*`")
	link       = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

// links lists the targets of a page's markdown links and images, outside
// code.
func links(page string) []string {
	page = inlineCode.ReplaceAllString(fenced.ReplaceAllString(page, ""), "")
	var out []string
	for _, m := range link.FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

// anchors are the fragments GitHub gives a page's headings: lower case,
// punctuation dropped, spaces as hyphens, a repeat numbered.
func anchors(page string) map[string]bool {
	page = fenced.ReplaceAllString(page, "")
	out := map[string]bool{}
	for _, l := range strings.Split(page, "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var sb strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				sb.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				sb.WriteRune(r)
			}
		}
		base := sb.String()
		slug := base
		for n := 1; out[slug]; n++ {
			slug = fmt.Sprintf("%s-%d", base, n)
		}
		out[slug] = true
	}
	return out
}
