package episode

import (
	"time"
)

// Sessions as agents record them: OpenAI-style (results in tool turns,
// named by id) and Anthropic-style (results in the next user turn), in
// English and Chinese.

var t0 = time.Date(2025, 3, 2, 9, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

// enFixDeploy: a failing tool, a fix, a final success, then a plan.
func enFixDeploy() Input {
	return Input{
		SessionID: "sess-en-1",
		Source:    SourceSessionEnd,
		Memories:  []string{"mem_b", "mem_a", "mem_b"},
		Turns: []Turn{
			{Index: 1, Role: "user", Content: "Hi!", Time: at(0), Project: "engram"},
			{Index: 2, Role: "assistant", Content: "Hello! What can I do for you?", Time: at(0), Project: "engram"},
			{Index: 3, Role: "user", Content: "The login test in internal/auth is failing since this morning. Can you fix it and deploy to staging? We run Go 1.26 and the token code lives in `jwt.go`.", Time: at(1), Project: "engram"},
			{Index: 4, Role: "assistant", Content: "Let me run the auth tests first.", Time: at(1), Project: "engram",
				ToolCalls: []ToolCall{{ID: "c1", Name: "bash", Input: `{"command":"go test ./internal/auth/...","timeout":120}`}}},
			{Index: 5, Role: "tool", Time: at(2), Project: "engram",
				ToolResults: []ToolResult{{ToolCallID: "c1", IsError: true, Content: "--- FAIL: TestLogin (0.01s)\n    jwt_test.go:42: token expired: exp 1700000000 is before now\nFAIL\nFAIL\tgithub.com/engramhq/engram/internal/auth\t0.312s"}}},
			{Index: 6, Role: "assistant", Content: "The token expiry is computed in seconds but compared in milliseconds. I'll fix the comparison in internal/auth/jwt.go.", Time: at(3), Project: "engram",
				ToolCalls: []ToolCall{
					{ID: "c2", Name: "read_file", Input: `{"path":"internal/auth/jwt.go"}`},
					{ID: "c3", Name: "edit_file", Input: `{"path":"internal/auth/jwt.go","old":"exp*1000 < now","new":"exp < now.Unix()"}`},
				}},
			{Index: 7, Role: "tool", Time: at(3), Project: "engram", ToolResults: []ToolResult{
				{ToolCallID: "c3", Content: "edited internal/auth/jwt.go: 1 replacement"},
				{ToolCallID: "c2", Content: "package auth\n\nimport \"time\"\n\nfunc valid(exp int64, now time.Time) bool {\n\treturn exp*1000 < now.UnixMilli()\n}"},
			}},
			{Index: 8, Role: "assistant", Content: "Running the tests again.", Time: at(4), Project: "engram",
				ToolCalls: []ToolCall{{ID: "c4", Name: "bash", Input: `{"command":"go test ./internal/auth/..."}`}}},
			{Index: 9, Role: "tool", Time: at(4), Project: "engram", ToolResults: []ToolResult{{ToolCallID: "c4", Content: "ok  \tgithub.com/engramhq/engram/internal/auth\t0.298s"}}},
			{Index: 10, Role: "assistant", Content: "Tests pass. We decided to deploy with the staging workflow instead of a manual push.", Time: at(5), Project: "engram",
				ToolCalls: []ToolCall{{ID: "c5", Name: "http_request", Input: `{"method":"POST","url":"https://ci.example.com/api/deploy?env=staging","body":{"ref":"main"}}`}}},
			{Index: 11, Role: "tool", Time: at(6), Project: "engram", ToolResults: []ToolResult{{ToolCallID: "c5", Content: `{"status":"deployed","env":"staging"}`}}},
			{Index: 12, Role: "assistant", Content: "Done: the fix is deployed to staging and all tests pass. Next, I will add a regression test for token expiry.", Time: at(7), Project: "engram"},
			{Index: 13, Role: "user", Content: "Thanks!", Time: at(8), Project: "engram"},
		},
	}
}

// zhFixDeploy: the same story in Chinese, Anthropic-style.
func zhFixDeploy() Input {
	return Input{
		SessionID: "sess-zh-1",
		Source:    SourceSessionEnd,
		Turns: []Turn{
			{Index: 0, Role: "user", Content: "你好", Time: at(0), Project: "星河"},
			{Index: 1, Role: "user", Content: "帮我把「订单服务」的数据库迁移修好，现在 migrate 一直报错。我们用的是 PostgreSQL 16，配置在 deploy/db.yaml 里。", Time: at(1), Project: "星河"},
			{Index: 2, Role: "assistant", Content: "我先跑一下迁移看看报什么错。", Time: at(1), Project: "星河",
				ToolCalls: []ToolCall{{ID: "toolu_1", Name: "shell", Input: `{"cmd":"make migrate","cwd":"/srv/orders"}`}}},
			{Index: 3, Role: "user", Time: at(2), Project: "星河",
				ToolResults: []ToolResult{{ToolCallID: "toolu_1", IsError: true, Content: "ERROR: relation \"orders_v2\" already exists\nmigration 0042 failed"}}},
			{Index: 4, Role: "assistant", Content: "迁移 0042 重复创建了表 orders_v2。我决定改用 `CREATE TABLE IF NOT EXISTS`，然后重新执行。", Time: at(3), Project: "星河",
				ToolCalls: []ToolCall{
					{ID: "toolu_2", Name: "edit", Input: `{"file_path":"migrations/0042_orders_v2.sql","replace":"CREATE TABLE IF NOT EXISTS orders_v2"}`},
					{ID: "toolu_3", Name: "shell", Input: `{"cmd":"make migrate","cwd":"/srv/orders"}`},
				}},
			{Index: 5, Role: "user", Time: at(4), Project: "星河", ToolResults: []ToolResult{
				{ToolCallID: "toolu_2", Content: "已修改 1 处"},
				{ToolCallID: "toolu_3", Content: "migration 0042 applied\nmigration 0043 applied"},
			}},
			{Index: 6, Role: "assistant", Content: "已经修复，迁移全部执行成功。接下来我会在 CI 里加一个迁移检查。", Time: at(5), Project: "星河"},
			{Index: 7, Role: "user", Content: "好的，谢谢", Time: at(6), Project: "星河"},
		},
	}
}

// enAbandoned: the user calls it off after a failure.
func enAbandoned() Input {
	return Input{
		SessionID: "sess-en-2",
		Source:    SourceSessionEnd,
		Turns: []Turn{
			{Index: 1, Role: "user", Content: "Please migrate the analytics store from SQLite to PostgreSQL 16 on db.internal.example.org.", Time: at(10), Project: "atlas"},
			{Index: 2, Role: "assistant", Content: "I'll dump the SQLite database first.", Time: at(10), Project: "atlas",
				ToolCalls: []ToolCall{{Name: "bash", Input: "sqlite3 data/analytics.db .dump > /tmp/analytics.sql"}}},
			{Index: 3, Role: "tool", Content: "Error: database is locked", Time: at(11), Project: "atlas"},
			{Index: 4, Role: "assistant", Content: "The database is locked by the running service. Should I stop the service and retry?", Time: at(11), Project: "atlas"},
			{Index: 5, Role: "user", Content: "Never mind, forget it. It's not worth the downtime right now.", Time: at(12), Project: "atlas"},
			{Index: 6, Role: "assistant", Content: "Understood, I've left everything as it was.", Time: at(12), Project: "atlas"},
		},
	}
}

// zhAbandoned: 用户放弃。
func zhAbandoned() Input {
	return Input{
		SessionID: "sess-zh-2",
		Turns: []Turn{
			{Index: 1, Role: "user", Content: "能不能把《用户手册》翻译成英文？", Time: at(20)},
			{Index: 2, Role: "assistant", Content: "可以，我先读取文档。", Time: at(20),
				ToolCalls: []ToolCall{{ID: "r1", Name: "read_file", Input: `{"path":"docs/manual.md"}`}}},
			{Index: 3, Role: "tool", Time: at(21), ToolResults: []ToolResult{{ToolCallID: "r1", Content: "# 用户手册\n\n本手册介绍……"}}},
			{Index: 4, Role: "assistant", Content: "文档共 120 页，预计需要较长时间，要分章节翻译吗？", Time: at(21)},
			{Index: 5, Role: "user", Content: "算了，不用了。", Time: at(22)},
		},
	}
}

// enQA: a question answered, no tools.
func enQA() Input {
	return Input{
		SessionID: "sess-en-3",
		Turns: []Turn{
			{Index: 1, Role: "user", Content: "What's the difference between NATS JetStream and Kafka for a small team?", Time: at(30)},
			{Index: 2, Role: "assistant", Content: "JetStream is built into the NATS server, so there is one small binary to run and no ZooKeeper. Kafka has a larger ecosystem (Kafka Connect, ksqlDB) but needs more operations work. For a small team JetStream is usually simpler.", Time: at(31)},
			{Index: 3, Role: "user", Content: "Does JetStream support exactly-once delivery?", Time: at(32)},
			{Index: 4, Role: "assistant", Content: "Yes, within limits: publish deduplication with Nats-Msg-Id plus double acks on the consumer side give exactly-once processing.", Time: at(33)},
		},
	}
}

// zhQA: 问答，没有工具。
func zhQA() Input {
	return Input{
		SessionID: "sess-zh-3",
		Turns: []Turn{
			{Index: 1, Role: "user", Content: "Python 3.12 里 “f-string” 有什么新变化？", Time: at(40)},
			{Index: 2, Role: "assistant", Content: "Python 3.12 放宽了 f-string 的语法限制：引号可以重复使用，表达式里可以有反斜杠和注释，也可以跨行书写。", Time: at(41)},
			{Index: 3, Role: "user", Content: "那性能呢？", Time: at(42)},
			{Index: 4, Role: "assistant", Content: "新的解析器基于 PEG 语法，解析速度基本没有变化，运行时性能也一样。", Time: at(43)},
		},
	}
}

// enFailed: the last tool call fails and nothing succeeds after it.
func enFailed() Input {
	return Input{
		SessionID: "sess-en-4",
		Turns: []Turn{
			{Index: 1, Role: "user", Content: "Deploy the web app to production.", Time: at(50), Project: "engram"},
			{Index: 2, Role: "assistant", ToolCalls: []ToolCall{{ID: "d1", Name: "bash", Input: `{"command":"kubectl apply -f deploy/web.yaml"}`}}, Time: at(50)},
			{Index: 3, Role: "tool", ToolResults: []ToolResult{{ToolCallID: "d1", IsError: true, Content: "error: You must be logged in to the server (Unauthorized)"}}, Time: at(51)},
			{Index: 4, Role: "assistant", Content: "Let me refresh the credentials and retry.", ToolCalls: []ToolCall{{ID: "d2", Name: "bash", Input: `{"command":"kubectl apply -f deploy/web.yaml"}`}}, Time: at(52)},
			{Index: 5, Role: "tool", ToolResults: []ToolResult{{ToolCallID: "d2", IsError: true, Content: "error: You must be logged in to the server (Unauthorized)"}}, Time: at(53)},
		},
	}
}

// zhCompression: turns leaving the window, with the agent's own summary.
func zhCompression() Input {
	return Input{
		SessionID: "sess-zh-4",
		Source:    SourceCompression,
		Summary:   "用户在排查 Redis 连接超时。已确认是连接池太小（10），准备调到 50 并观察。",
		Memories:  []string{"mem_1"},
		Turns: []Turn{
			{Index: 7, Role: "user", Content: "线上 Redis 老是超时，帮我看看", Time: at(60), Project: "星河"},
			{Index: 8, Role: "assistant", Content: "我查一下连接池配置。", ToolCalls: []ToolCall{{ID: "g1", Name: "grep", Input: `{"pattern":"PoolSize","path":"config/"}`}}, Time: at(61), Project: "星河"},
			{Index: 9, Role: "tool", ToolResults: []ToolResult{{ToolCallID: "g1", Content: "config/redis.go:12: PoolSize: 10,"}}, Time: at(61), Project: "星河"},
		},
	}
}

var goldenSessions = []struct {
	name string
	in   func() Input
}{
	{"en_fix_deploy", enFixDeploy},
	{"zh_fix_deploy", zhFixDeploy},
	{"en_abandoned", enAbandoned},
	{"zh_abandoned", zhAbandoned},
	{"en_qa", enQA},
	{"zh_qa", zhQA},
	{"en_failed", enFailed},
	{"zh_compression", zhCompression},
}
