package llmextract

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/memory"
)

const tea = `{"subject":"user","predicate":"likes","content":"User likes green tea","kind":"preference","category":"config","importance":0.6,"confidence":0.9}`

func TestParseShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, reply string
		want        int // candidates
		problems    int
	}{
		{"facts", `{"facts":[` + tea + `]}`, 1, 0},
		{"memories", `{"memories":[` + tea + `]}`, 1, 0},
		{"upper-case key", `{"Facts":[` + tea + `]}`, 1, 0},
		{"bare array", `[` + tea + `]`, 1, 0},
		{"lone fact", tea, 1, 0},
		{"fenced", "```json\n{\"facts\":[" + tea + "]}\n```", 1, 0},
		{"think block", "<think>\nThe user said they like tea. Output {\"facts\":[]}?\n</think>\n{\"facts\":[" + tea + "]}", 1, 0},
		{"prose around", "Here is what I found:\n{\"facts\":[" + tea + "]}\nLet me know!", 1, 0},
		{"trailing commas", `{"facts":[` + tea + `,],}`, 1, 0},
		{"empty list", `{"facts":[]}`, 0, 0},
		{"null list", `{"facts":null}`, 0, 0},
		{"empty object", `{}`, 0, 0},
		{"none", "NONE", 0, 0},
		{"none with dot", " None. ", 0, 0},
		{"cut short", `{"facts":[` + tea + `,` + strings.Replace(tea, "green", "black", 1) + `,{"subject":"user","predicate":"na`, 2, 1},
		{"cut after an item", `{"facts":[` + tea + `,` + strings.Replace(tea, "green", "black", 1), 2, 1},
		{"two items and trailing commas", `{"facts":[` + tea + `,` + strings.Replace(tea, "green", "black", 1) + `,],}`, 2, 0},
		{"cut short after think", "<think>[1]</think>```json\n[" + tea + `,{"subj`, 1, 1},
		{"cut short with nested array", `{"facts":[{"subject":"go","predicate":"uses","content":"uses go","tags":["a","b"]},{"subject":"x`, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, problems, err := Parse(tc.reply)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(got) != tc.want || len(problems) != tc.problems {
				t.Fatalf("got %d candidates %+v and problems %q, want %d and %d", len(got), got, problems, tc.want, tc.problems)
			}
			if tc.want > 0 && tc.name != "cut short with nested array" {
				want := memory.Candidate{Kind: memory.KindPreference, Category: memory.CategoryConfig, Subject: "user",
					Predicate: "likes", Content: "User likes green tea", Importance: 0.6, Confidence: 0.9}
				if got[0] != want {
					t.Errorf("got %+v, want %+v", got[0], want)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, reply string
		is          error
	}{
		{"prose", "I could not find anything worth remembering.", llm.ErrNoJSON},
		{"empty", "", llm.ErrNoJSON},
		{"think only", "<think>Let me see {\"facts\":", llm.ErrNoJSON},
		{"other object", `{"answer":"hello"}`, errShape},
		{"facts not a list", `{"facts":"user likes tea"}`, errShape},
		{"no usable item", `{"facts":[{"subject":"user"},"likes tea",3]}`, nil},
		{"number", `42`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := Parse(tc.reply)
			if err == nil {
				t.Fatalf("Parse returned %+v and no error", got)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v, want one wrapping %v", err, tc.is)
			}
			if got != nil {
				t.Errorf("candidates %+v returned with an error", got)
			}
		})
	}
}

func TestParseNormalises(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, item string
		want       memory.Candidate
	}{
		{"defaults", `{"subject":"user","predicate":"note","content":"x"}`,
			memory.Candidate{Kind: memory.KindFact, Category: memory.CategoryConversation, Subject: "user", Predicate: "note", Content: "x", Importance: 0.5, Confidence: 0.7}},
		{"upper case and plural kind", `{"subject":"User","predicate":"Prefers","content":"  dark\n mode ","kind":"PREFERENCES","category":"Preferences"}`,
			memory.Candidate{Kind: memory.KindPreference, Category: memory.CategoryConfig, Subject: "user", Predicate: "prefers", Content: "dark mode", Importance: 0.5, Confidence: 0.7}},
		{"suffixed kind, missing category", `{"subject":"user","predicate":"name","content":"Ana","kind":"identity_info"}`,
			memory.Candidate{Kind: memory.KindIdentity, Category: memory.CategoryIdentity, Subject: "user", Predicate: "name", Content: "Ana", Importance: 0.5, Confidence: 0.7}},
		{"chinese kind and category", `{"subject":"用户","predicate":"偏好","content":"用户喜欢用 Vim","kind":"偏好","category":"配置"}`,
			memory.Candidate{Kind: memory.KindPreference, Category: memory.CategoryConfig, Subject: "user", Predicate: "prefers", Content: "用户喜欢用 Vim", Importance: 0.5, Confidence: 0.7}},
		{"chinese rule and identity", `{"subject":"用户","predicate":"名字","content":"用户叫李雷","kind":"身份","category":"身份"}`,
			memory.Candidate{Kind: memory.KindIdentity, Category: memory.CategoryIdentity, Subject: "user", Predicate: "name", Content: "用户叫李雷", Importance: 0.5, Confidence: 0.7}},
		{"seed 000 field names", `{"type":"RULE","entity":"user","attribute":"rule","fact":"Never use emoji","is_update":"yes"}`,
			memory.Candidate{Kind: memory.KindRule, Category: memory.CategoryConfig, Subject: "user", Predicate: "rule", Content: "Never use emoji", Importance: 0.5, Confidence: 0.7, Updates: true}},
		{"unknown kind and category", `{"subject":"Postgres","predicate":"Lives In","content":"db","kind":"banana","category":"whatever"}`,
			memory.Candidate{Kind: memory.KindFact, Category: memory.CategoryConversation, Subject: "postgres", Predicate: "location", Content: "db", Importance: 0.5, Confidence: 0.7}},
		{"template copied", `{"subject":"a","predicate":"b","content":"c","kind":"FACT|PREFERENCE|RULE"}`,
			memory.Candidate{Kind: memory.KindFact, Category: memory.CategoryConversation, Subject: "a", Predicate: "b", Content: "c", Importance: 0.5, Confidence: 0.7}},
		{"scores as strings", `{"subject":"a","predicate":"b","content":"c","importance":"0.8","confidence":"85%"}`,
			memory.Candidate{Kind: memory.KindFact, Category: memory.CategoryConversation, Subject: "a", Predicate: "b", Content: "c", Importance: 0.8, Confidence: 0.85}},
		{"scores out of range", `{"subject":"a","predicate":"b","content":"c","importance":7,"confidence":-2}`,
			memory.Candidate{Kind: memory.KindFact, Category: memory.CategoryConversation, Subject: "a", Predicate: "b", Content: "c", Importance: 1, Confidence: 0}},
		{"scores as words and junk", `{"subject":"a","predicate":"b","content":"c","importance":"high","confidence":"sure"}`,
			memory.Candidate{Kind: memory.KindFact, Category: memory.CategoryConversation, Subject: "a", Predicate: "b", Content: "c", Importance: 0.8, Confidence: 0.7}},
		{"null fields", `{"subject":"a","predicate":"b","content":"c","importance":null,"project":null,"updates":null}`,
			memory.Candidate{Kind: memory.KindFact, Category: memory.CategoryConversation, Subject: "a", Predicate: "b", Content: "c", Importance: 0.5, Confidence: 0.7}},
		{"project topic updates", `{"subject":"Go","predicate":"version","content":"Go 1.26","kind":"fact","category":"config","project":" engram ","topic":"build","updates":true}`,
			memory.Candidate{Kind: memory.KindFact, Category: memory.CategoryConfig, Subject: "go", Predicate: "version", Content: "Go 1.26", Project: "engram", Topic: "build", Importance: 0.5, Confidence: 0.7, Updates: true}},
		{"cjk subject kept", `{"subject":"飞书 API","predicate":"Uses","content":"项目用飞书 API 发通知","category":"decisions","kind":"project"}`,
			memory.Candidate{Kind: memory.KindContext, Category: memory.CategoryDecision, Subject: "飞书 API", Predicate: "uses", Content: "项目用飞书 API 发通知", Importance: 0.5, Confidence: 0.7}},
		{"number content", `{"subject":"user","predicate":"age","content":30}`,
			memory.Candidate{Kind: memory.KindFact, Category: memory.CategoryConversation, Subject: "user", Predicate: "age", Content: "30", Importance: 0.5, Confidence: 0.7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, problems, err := Parse(`{"facts":[` + tc.item + `]}`)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(got) != 1 || len(problems) != 0 {
				t.Fatalf("got %+v, problems %q", got, problems)
			}
			if got[0] != tc.want {
				t.Errorf("got  %+v\nwant %+v", got[0], tc.want)
			}
		})
	}
}

func TestParseDropsBadItems(t *testing.T) {
	t.Parallel()
	secret := "the long private content of a memory that must not be quoted in full anywhere"
	reply := "{\"facts\":[" + strings.Join([]string{
		tea,
		`{"subject":"user","predicate":"note","content":"` + secret + `"}`,
		`{"subject":"user","predicate":"","content":"` + secret + `"}`,
		`{"subject":" ","predicate":"note","content":"x"}`,
		`{"subject":"user","predicate":"note"}`,
		"{\"subject\":\"user\",\"predicate\":\"note\",\"content\":\"bad \xff byte\"}",
		`"just a string"`,
		tea, // duplicate
	}, ",") + "]}"
	got, problems, err := Parse(reply)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d candidates %+v, want 2", len(got), got)
	}
	wantProblems := []string{"item 2: missing predicate", "item 3: missing subject", "item 4: missing content", "item 5: invalid UTF-8", "item 6: not an object", "item 7: duplicate"}
	if len(problems) != len(wantProblems) {
		t.Fatalf("problems %q, want %d", problems, len(wantProblems))
	}
	for i, want := range wantProblems {
		if !strings.HasPrefix(problems[i], want) {
			t.Errorf("problem %d = %q, want prefix %q", i, problems[i], want)
		}
		if strings.Contains(problems[i], secret[:45]) {
			t.Errorf("problem %d quotes more than %d characters of a memory: %q", i, snippetRunes, problems[i])
		}
	}
}

func TestParseCaps(t *testing.T) {
	t.Parallel()
	var items []string
	for i := range 60 {
		items = append(items, fmt.Sprintf(`{"subject":"s%d","predicate":"p","content":"c"}`, i))
	}
	got, problems, err := Parse(`{"facts":[` + strings.Join(items, ",") + `]}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != maxItems || len(problems) != 1 || !strings.Contains(problems[0], "items 50 to 59") {
		t.Errorf("got %d candidates and problems %q", len(got), problems)
	}

	long := strings.Repeat("长", 600) // 1,800 bytes
	got, _, err = Parse(`[{"subject":"` + strings.Repeat("S", 300) + `","predicate":"` + strings.Repeat("p", 100) + `","content":"` + long + `","project":"` + strings.Repeat("j", 300) + `"}]`)
	if err != nil {
		t.Fatal(err)
	}
	c := got[0]
	for _, f := range []struct {
		name  string
		value string
		limit int
	}{{"content", c.Content, maxContentBytes}, {"subject", c.Subject, maxSubjectBytes}, {"predicate", c.Predicate, maxPredicateBytes}, {"project", c.Project, maxLabelBytes}} {
		if len(f.value) > f.limit || len(f.value) < f.limit-3 || !utf8.ValidString(f.value) {
			t.Errorf("%s is %d bytes (valid UTF-8 %v), cap %d", f.name, len(f.value), utf8.ValidString(f.value), f.limit)
		}
	}
}

// A control character in a reply (NUL in a subject, ESC in a project,
// a bell in the content) costs that character, not the fact.
func TestParseDropsControlCharacters(t *testing.T) {
	t.Parallel()
	reply := `{"facts":[{"subject":"us\u0000er","predicate":"prefers","content":"likes\u0007 tea\nand cake",` +
		`"kind":"preference","category":"config","project":"at\u001b[31mlas","topic":"dr\u0085inks"}]}`
	cands, problems, err := Parse(reply)
	if err != nil || len(cands) != 1 {
		t.Fatalf("Parse: %v, %d candidates, problems %v", err, len(cands), problems)
	}
	c := cands[0]
	if c.Subject != "user" || c.Content != "likes tea and cake" || c.Project != "at[31mlas" || c.Topic != "drinks" {
		t.Fatalf("candidate = %+v", c)
	}
}
