package ruleextract

import (
	"testing"

	"github.com/engramhq/engram/internal/memory"
)

// An update is recognised in both languages: what the second sentence
// says replaces what the first said, so one of its candidates updates
// and shares the slot (memory.Slot) of one of the first's, which it
// supersedes.
func TestUpdatesShareTheSlotOfWhatTheyReplace(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, before, after string }{
		// Moves.
		{"en moved", "I live in Lisbon.", "I moved to Porto last week."},
		{"en relocated", "I'm based in Berlin.", "I relocated to Munich."},
		{"zh 搬到", "我住在上海。", "我搬到北京了。"},
		{"zh 搬去", "我住在杭州", "我去年搬去了深圳"},
		// Changed habits and preferences.
		{"en switched to", "I really like coffee.", "I switched to tea now."},
		{"en switched from", "I drink coffee every morning.", "I've switched from coffee to green tea."},
		{"en instead of", "I drink coffee every morning.", "I drink tea instead of coffee now."},
		{"en no longer", "I love coffee.", "I no longer drink coffee."},
		{"en stopped", "I drink coffee every morning.", "I stopped drinking coffee."},
		{"en anymore", "I really like beer.", "I don't drink beer anymore."},
		{"zh 改喝", "我平时喜欢喝咖啡。", "我现在改喝茶了。"},
		{"zh 换成", "我每天早上喝咖啡。", "我已经换成喝茶了。"},
		{"zh 不再", "我喜欢喝咖啡", "我不再喝咖啡了。"},
		{"zh 现在不…了，改…", "我每天都喝咖啡", "我现在不喝咖啡了，改喝茶。"},
		{"zh 改吃", "我每天中午吃牛肉面", "我最近改吃素了。"},
		// Services migrated, tools retired.
		{"en moved to, the old one retired", "We use Jenkins for CI.", "Our CI has moved to GitHub Actions, the old Jenkins is retired."},
		{"en X moved to Y", "We use Jenkins for CI.", "Jenkins has moved to GitHub Actions."},
		{"en decommissioned", "Our main database is MySQL.", "The old MySQL cluster was decommissioned last week."},
		{"en retired", "We use Heroku.", "We retired Heroku in March."},
		{"en no longer use", "We use Heroku.", "We no longer use Heroku."},
		{"zh 迁移到，旧的下线", "我们用 Jenkins 做 CI。", "CI 已经迁移到 GitHub Actions 了，旧的 Jenkins 已经下线。"},
		{"zh 停用", "我们用 Jenkins 做 CI。", "我们的 CI 迁移到 GitHub Actions 了，Jenkins 已停用。"},
		{"zh X 迁移到 Y", "我们用 Jenkins 做 CI。", "Jenkins 已经迁移到 GitHub Actions 了。"},
		{"zh 从…迁移到", "我们用 MySQL。", "我们的数据库从 MySQL 迁移到了 PostgreSQL。"},
		{"zh 不用了", "我用 VS Code 写代码", "我改用 Cursor 了，VS Code 不用了。"},
		{"zh 不再用", "我们用 Vim", "我现在不再用 Vim 了"},
		// Upgrades.
		{"en upgraded", "We use Python 3.10 for the backend.", "We upgraded to Python 3.12."},
		{"zh 升级到", "我们用的是 Python 3.10", "我们升级到 Python 3.12 了"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := Extract(Input{Role: "user", Content: c.before})
			after := Extract(Input{Role: "user", Content: c.after})
			for _, u := range after {
				if !u.Updates {
					continue
				}
				for _, b := range before {
					if memory.Slot(b.Subject, b.Predicate, b.Topic) == memory.Slot(u.Subject, u.Predicate, u.Topic) && b.Content != u.Content {
						if u.Confidence < memory.ConfidenceActive {
							t.Fatalf("%q updates %q but would wait for confirmation (confidence %.2f)", u.Content, b.Content, u.Confidence)
						}
						return
					}
				}
			}
			t.Fatalf("no update of what was said before\nbefore:%s\nafter:%s", formatSlots(before), formatSlots(after))
		})
	}
}

// What only sounds like an update is none: a plan, a question, a
// supposition, someone else's change, a negated retirement.
func TestNotUpdates(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"I'm thinking of switching to tea.",
		"Should I switch to tea?",
		"We're moving to GitHub Actions next month.",
		"The old Jenkins is not retired yet.",
		"I switched to the next chapter.",
		"My wife switched to tea.",
		"我打算改喝茶。",
		"要不要换成喝茶？",
		"我老婆现在改喝茶了。",
		"Jenkins 还没下线。",
		"如果 Jenkins 停用了怎么办？",
	} {
		for _, c := range Extract(Input{Role: "user", Content: s}) {
			if c.Updates {
				t.Errorf("%q: %s/%s %q updates", s, c.Subject, c.Predicate, c.Content)
			}
		}
	}
}

func formatSlots(cands []memory.Candidate) string {
	out := ""
	for _, c := range cands {
		out += "\n\t" + c.Subject + "/" + c.Predicate + " topic=" + c.Topic + " " + c.Content
		if c.Updates {
			out += " (updates)"
		}
	}
	return out
}
