package llmextract

import (
	"fmt"
	"strings"
	"time"
)

// typicalTurns is a 20-turn working session of the kind engram batches
// for one extraction: a developer and a coding agent, in English and
// Chinese, with tool calls whose inputs and results are far larger than
// anything worth remembering.
func typicalTurns() []Turn {
	start := time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)
	code := strings.Repeat("    invoice = Invoice.objects.get(stripe_id=event.data.object.id)\n    invoice.mark_paid()\n", 40)
	testLog := strings.Repeat("tests/billing/test_invoices.py::test_case PASSED\n", 40) +
		"FAILED tests/billing/test_webhooks.py::test_retry - AssertionError: expected 3 calls, got 1\n1 failed, 41 passed in 3.2s"
	deployLog := strings.Repeat("step: building layer sha256:4f9a… done\n", 50) + "Deployed billing@1.14.2 to staging"
	turns := []Turn{
		{Role: "user", Content: "Hi! I'm working on the billing service today. We moved it from Flask to FastAPI last month, and I want to add retries to the Stripe webhook handler."},
		{Role: "assistant", Content: "Sure. Let me look at the current handler first.",
			ToolCalls:   []ToolCall{{Name: "read_file", Input: `{"path":"services/billing/webhooks.py"}`}},
			ToolResults: []ToolResult{{Content: code}}},
		{Role: "assistant", Content: "The handler calls stripe.Webhook.construct_event and then updates the invoice synchronously. I suggest moving the update into a background task and retrying it with exponential backoff. Want me to do that?"},
		{Role: "user", Content: "Yes, but please don't add new dependencies. We already use the backoff package in the payments service, use that."},
		{Role: "assistant", Content: "Got it, I'll use backoff.",
			ToolCalls:   []ToolCall{{Name: "edit_file", Input: `{"path":"services/billing/webhooks.py","old":"` + strings.Repeat("x", 400) + `","new":"` + strings.Repeat("y", 600) + `"}`}},
			ToolResults: []ToolResult{{Content: "ok"}}},
		{Role: "assistant",
			ToolCalls:   []ToolCall{{Name: "bash", Input: `{"command":"pytest tests/billing -q"}`}},
			ToolResults: []ToolResult{{Content: testLog, IsError: true}}},
		{Role: "assistant", Content: "One test fails because the mock raises a non-retryable error. I'll mark StripeConnectionError as retryable."},
		{Role: "user", Content: "好的。另外提醒一下，我们测试环境的数据库是 Postgres 15，别用 16 才有的语法。"},
		{Role: "assistant", Content: "明白，测试环境用的是 PostgreSQL 15，我会避免使用 16 才有的特性。"},
		{Role: "assistant",
			ToolCalls:   []ToolCall{{Name: "bash", Input: `{"command":"pytest tests/billing -q"}`}},
			ToolResults: []ToolResult{{Content: strings.Repeat(".", 42) + "\n42 passed in 3.4s"}}},
		{Role: "user", Content: "Nice. By the way, I prefer small commits with conventional commit messages."},
		{Role: "assistant", Content: "Noted. I'll split this into two commits: feat(billing): retry stripe webhook updates, and test(billing): cover the retry path.",
			ToolCalls:   []ToolCall{{Name: "bash", Input: `{"command":"git add -p && git commit -m 'feat(billing): retry stripe webhook updates'"}`}},
			ToolResults: []ToolResult{{Content: "[feature/webhook-retry 3f2c1a9] feat(billing): retry stripe webhook updates\n 2 files changed, 48 insertions(+), 9 deletions(-)"}}},
		{Role: "user", Content: "我下周要去深圳出差，周三到周五不在线，有事发邮件给我。"},
		{Role: "assistant", Content: "好的，我记下了：你下周三到周五在深圳出差，期间有事通过邮件联系。"},
		{Role: "user", Content: "Also, staging deploys go through `make deploy-staging`. Never push directly to the staging branch."},
		{Role: "assistant", Content: "Understood: staging deploys only through make deploy-staging."},
		{Role: "assistant",
			ToolCalls:   []ToolCall{{Name: "bash", Input: `{"command":"make deploy-staging SERVICE=billing"}`}},
			ToolResults: []ToolResult{{Content: deployLog}}},
		{Role: "user", Content: "thanks!"},
		{Role: "assistant", Content: "You're welcome! Anything else on the billing service?"},
		{Role: "user", Content: "No, that's all for today. 明天继续看发票导出的 bug。"},
	}
	for i := range turns {
		turns[i].Index = 100 + i
		turns[i].Time = start.Add(time.Duration(i) * 40 * time.Second)
	}
	return turns
}

// typicalReply is what a good model answers to typicalTurns.
func typicalReply() string {
	facts := []string{
		`{"subject":"billing","predicate":"uses","content":"The billing service runs on FastAPI (moved from Flask last month).","kind":"fact","category":"config","project":"billing","importance":0.7,"confidence":0.9}`,
		`{"subject":"user","predicate":"rule","content":"Don't add new dependencies; use the backoff package for retries.","kind":"rule","category":"config","project":"billing","importance":0.9,"confidence":0.9}`,
		`{"subject":"postgres","predicate":"version","content":"测试环境的数据库是 Postgres 15，不能用 16 才有的语法。","kind":"fact","category":"config","importance":0.8,"confidence":0.9}`,
		`{"subject":"user","predicate":"prefers","content":"Prefers small commits with conventional commit messages.","kind":"preference","category":"config","importance":0.7,"confidence":0.9}`,
		`{"subject":"user","predicate":"trip","content":"用户下周三到周五在深圳出差，不在线，有事发邮件。","kind":"context","category":"event","importance":0.5,"confidence":0.9}`,
		`{"subject":"user","predicate":"rule","content":"Staging deploys go through make deploy-staging; never push to the staging branch.","kind":"rule","category":"config","importance":0.9,"confidence":0.9}`,
		`{"subject":"billing","predicate":"version","content":"billing 1.14.2 is deployed to staging.","kind":"fact","category":"event","project":"billing","importance":0.4,"confidence":0.8}`,
	}
	return fmt.Sprintf(`{"facts":[%s]}`, strings.Join(facts, ","))
}
