package ruleextract

import (
	"testing"

	"github.com/engramhq/engram/internal/memory"
)

// What a speaker does not stand behind, or did not say of themselves, is
// not a memory; each case here yielded one before the rule that drops it.
func TestNotStatedAsFact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     []want
	}{
		{"hedged", "I think we're on Node 18, but I'm not sure.", nil},
		{"hedged zh", "我们好像用的是 Node 18，不太确定。", nil},
		{"sarcastic", "Oh sure, I just love debugging YAML at 2am.", nil},
		{"a supposition inside a question", "Assuming we used Kafka, would ordering be guaranteed?", nil},
		{"a supposition inside a question zh", "假设我们用 Kafka，顺序能保证吗？", nil},
		{"text to translate", "Translate to German: I like cheese and I live in Vienna.", nil},
		{"an example message", "Example user message for the test fixture: my name is Bob and I'm 30.", nil},
		{"text to translate zh", "翻译成英文：我住在上海，喜欢喝茶。", nil},
		{"a named colleague", "Sarah on the data team uses DuckDB for everything.", nil},
		{"a reported preference", "Ravi said he prefers tabs over spaces.", nil},
		{"he and she", "She uses Emacs and lives in Oslo.", nil},
		{"our CTO", "Our CTO prefers Kubernetes.", nil},
		{"a one-off don't", "Don't run the migration yet, I'm still reviewing it.", nil},
		{"a one-off don't forget", "Don't forget to close the DB connection in that function.", nil},
		{"a one-off 别", "别删这个文件，我还要用。", nil},
		{"the simple past is a past state", "The old service used MySQL 5.7.", nil},
		{"a pick among options", "I like the second option better.", nil},
		{"a stay, not a home", "I'm staying in Berlin this week for a conference.", nil},
		{"a stay, not a home zh", "我这周在上海出差。", nil},
		{"remember as recall", "Remember the bug from yesterday, it's back.", nil},
		{"an imperative", "Use Python 3.12 for this script.", nil},
		{"don't do that", "Don't do that.", nil},
		{"don't change anything else", "Don't change anything else.", nil},
		{"many teams", "Many teams use Kafka for this.", nil},
		{"an inline quotation", `The customer says: "We use Oracle 19c and we're based in Munich, please support us." Can you draft an answer?`, nil},
		{"a quotation without a colon", `My old teacher liked to say "I live in Vienna and love Perl" as a joke.`, nil},
		{"reported words zh", "客户说：我们用 Oracle 19c，公司在慕尼黑。", nil},
		{"forwarded words", "Forwarding what Priya wrote in Slack: she lives in Pune and she uses Linear for tickets.", nil},
		{"my students", "I mostly use Jupyter. My students use Scratch.", []want{{PredUses, "jupyter", "Jupyter"}}},
		{"she after and", "I use Vim and she uses Emacs.", []want{{PredUses, "vim", "Vim"}}},
		{"one mention, one fact", "数据库已经升级到 PostgreSQL 16 了。", []want{{PredVersion, "postgres", "已升级到 PostgreSQL 16"}}},
		{"a don't that restates a preference", "我喜欢简洁的回答，不要太啰嗦。", []want{{PredLikes, "user", "简洁的回答"}}},
		{"a don't that restates a preference en", "I like short answers, don't ramble.", []want{{PredLikes, "user", "short answers"}}},
		{"a demonym is not a name", "I'm Korean-American and I live in LA.", []want{{PredLocation, "user", "LA"}}},
		{"a preference for the matter at hand", "I'd rather not use Java for this.", nil},
		{"was written in", "Our old monolith was written in PHP 5.", nil},
		{"a migration under way", "We're migrating the frontend from Angular to React this quarter.", []want{{PredPlan, "project", "migrating the frontend from Angular to React"}}},
		{"what follows a condition", "If we had more budget, we'd use Datadog.", nil},
		{"a move under way", "The team is moving to Rust slowly.", nil},
		{"everyone here", "Everyone here uses Go.", nil},
		{"the daughter's liking", "我女儿今年六岁，喜欢画画。", nil},
		{"a guess zh", "看起来你们用的是 Django 4.2。", nil},
		{"my wife and her move", "My wife moved to Lyon.", nil},
		{"an errand", "I'm going to lunch, keep going with the refactor", nil},
		{"a step in this conversation", "I'll review it tomorrow morning", nil},
		// Still facts and rules.
		{"a migration done", "I just finished migrating the frontend from Angular to React.", []want{{PredUses, "angular", "no longer uses Angular"}, {PredUses, "react", "uses React"}}},
		{"a habitual condition makes a rule", "Whenever you touch SQL, add a migration.", []want{{PredRule, "user", "Whenever you touch SQL, add a migration"}}},
		{"runs on", "Our CI runs on GitHub Actions.", []want{{PredUses, "github-actions", "GitHub Actions"}}},
		{"a standing rule after a preference", "I like short answers. Never use emojis.", []want{{PredLikes, "user", "short answers"}, {PredRule, "user", "Never use emojis"}}},
		{"a quoted name stays", `We call the cluster "prod" and we use Go 1.22.`, []want{{PredVersion, "go", "Go 1.22"}}},
		{"a present perfect is in use", "We've used Postgres for years.", []want{{PredUses, "postgres", "Postgres"}}},
		{"a preference among kinds", "I prefer the terminal over IDEs.", []want{{PredPrefers, "user", "terminal over IDEs"}}},
		{"a home", "I'm based in Zurich.", []want{{PredLocation, "user", "Zurich"}}},
		{"remember that", "Remember that the prod database is read-only on weekends.", []want{{PredNote, "user", "read-only on weekends"}}},
		{"a standing don't", "Don't use semicolons in TypeScript.", []want{{PredRule, "user", "semicolons"}}},
		{"a labelled rule is kept", "Rule: never push directly to main; open a pull request.", []want{{PredRule, "user", "open a pull request"}}},
		{"remember: is not a text task", "Please remember: the staging server is staging.example.com.", []want{{PredNote, "user", "staging.example.com"}}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkWants(t, Extract(Input{Role: "user", Content: tc.in}), tc.want) })
	}
}

// A team's plan is the project's whatever its verb, and a decision is the
// decision alone: the tool it names is not in use yet.
func TestPlansAndDecisionsAreNotDone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []want
	}{
		{"Next week we'll drop support for Python 3.8.", []want{{PredPlan, "project", "drop support for Python 3.8"}}},
		{"I plan to start learning Rust next month.", []want{{PredPlan, "user", "learning Rust"}}},
		{"We decided to use Postgres instead of MySQL.", []want{{PredDecision, "project", "use Postgres instead of MySQL"}}},
		{"决定下季度把日志系统从 ELK 换到 Loki。", []want{{PredDecision, "project", "换到 Loki"}}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got := Extract(Input{Role: "user", Content: tc.in})
			checkWants(t, got, tc.want)
			for _, c := range got {
				if c.Kind != memory.KindContext {
					t.Errorf("%s/%s %q: a plan or decision is not a %s", c.Subject, c.Predicate, c.Content, c.Kind)
				}
			}
		})
	}
}

// Facts said in ways the rules once missed; each yielded nothing, or less,
// before.
func TestStatedFacts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []want
	}{
		{"I grew up in Manila.", []want{{PredHometown, "user", "Manila"}}},
		{"I'm from Lagos originally but I've lived in London for ten years.", []want{{PredHometown, "user", "Lagos"}, {PredLocation, "user", "London"}}},
		{"I don't use Vim anymore.", []want{{PredUses, "vim", "no longer uses Vim"}}},
		{"We don't use Redis anymore", []want{{PredUses, "redis", "no longer uses Redis"}}},
		{"Nope, we switched off Jenkins last month.", []want{{PredUses, "jenkins", "no longer uses Jenkins"}}},
		{"We tried Bun but went back to Node.", []want{{PredUses, "node", "Node"}}},
		{"I switched from Chrome to Firefox last year.", []want{{PredUses, "chrome", "no longer uses Chrome"}, {PredUses, "firefox", "uses Firefox"}}},
		{"Hey! I'm Lena, backend dev at Zalando.", []want{{PredName, "user", "Lena"}, {PredOccupation, "user", "backend dev"}, {PredEmployer, "user", "Zalando"}}},
		{"I work as a DevOps engineer at a bank in Dubai.", []want{{PredOccupation, "user", "DevOps engineer"}}},
		{"Quick background: I'm Omar.", []want{{PredName, "user", "Omar"}}},
		{"Wait, I meant Python 3.11, not 3.10.", []want{{PredVersion, "python", "Python 3.11"}}},
		{"Small correction: I'm based in Dublin, not Cork.", []want{{PredLocation, "user", "Dublin"}}},
		{"Oops, I meant I work at Stripe, not Square.", []want{{PredEmployer, "user", "Stripe"}}},
		{"I'm 45 and semi-retired.", []want{{PredAge, "user", "45"}}},
		{"I'm a freelance translator based in Montreal.", []want{{PredOccupation, "user", "freelance translator"}, {PredLocation, "user", "Montreal"}}},
		{"I've been a nurse for twelve years.", []want{{PredOccupation, "user", "nurse"}}},
		{"Everyone calls me DJ.", []want{{PredNickname, "user", "DJ"}}},
		{"always use f-strings, never % formatting", []want{{PredRule, "user", "always use f-strings, never % formatting"}}},
		{"can you remember that I'm on a Windows machine at work?", []want{{PredNote, "user", "Windows machine at work"}}},
		{"每次改数据库结构，都要写迁移脚本。", []want{{PredRule, "user", "每次改数据库结构，都要写迁移脚本"}}},
		{"Hello! Marcus here, SRE at Datadog.", []want{{PredName, "user", "Marcus"}, {PredOccupation, "user", "SRE"}, {PredEmployer, "user", "Datadog"}}},
		{"Me and my wife just moved to Lyon.", []want{{PredLocation, "user", "Lyon"}}},
		{"My wife and I moved to Lyon.", []want{{PredLocation, "user", "Lyon"}}},
		{"Heads up: the repo pins Node 18 in .nvmrc.", []want{{PredVersion, "node", "Node 18"}}},
		{"I'm going to learn Terraform this summer.", []want{{PredPlan, "user", "learn Terraform"}}},
		{"We use GitHub for code, Linear for issues and Notion for docs.", []want{{PredUses, "github", "GitHub"}, {PredUses, "linear", "Linear"}, {PredUses, "notion", "Notion"}}},
		{"the CI uses GitHub Actions, config is in .github/workflows/ci.yml", []want{{PredUses, "github-actions", "GitHub Actions"}, {PredPath, "config", ".github/workflows/ci.yml"}}},
	} {
		t.Run(tc.in, func(t *testing.T) { checkWants(t, Extract(Input{Role: "user", Content: tc.in}), tc.want) })
	}
}

// An assistant's intentions and guesses are not facts about the setup.
func TestAssistantIntentions(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"I'll use pnpm since the repo has a pnpm-lock.yaml.",
		"Looks like you're on macOS; I'll adjust the paths.",
	} {
		t.Run(in, func(t *testing.T) { checkWants(t, Extract(Input{Role: "assistant", Content: in}), nil) })
	}
	checkWants(t, Extract(Input{Role: "assistant", Content: "The build uses Gradle 8.5."}), []want{{PredVersion, "gradle", "Gradle 8.5"}})
}
