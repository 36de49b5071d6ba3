package tokens

import "strings"

// Counter counts the tokens a model family's tokenizer makes of a text.
// Implementations are safe for concurrent use.
type Counter interface {
	Count(s string) int
	// Name is the encoding ("o200k_base") or the estimate
	// ("estimate:qwen") the counter uses, for logs and metrics.
	Name() string
}

// openAIPrefixes follows tiktoken's model table (tiktoken/model.py):
// names are matched, in order, after any "provider/" and fine-tuning
// "ft:" prefix is cut off; an entry matches the name itself or the name
// followed by "-" or ":" (a dated, sized or fine-tuned variant:
// gpt-4o-mini, gpt-4-0613, ft:gpt-4o:org::id). gpt-oss is here because
// its o200k_harmony encoding only adds special tokens to o200k_base.
var openAIPrefixes = []struct {
	name string
	bpe  *bpe
}{
	{"gpt-5", o200k}, // gpt-5, gpt-5-mini, gpt-5.1 (see matchModel)
	{"gpt-4.5", o200k},
	{"gpt-4.1", o200k},
	{"gpt-4o", o200k},
	{"chatgpt-4o", o200k},
	{"gpt-oss", o200k},
	{"o1", o200k},
	{"o3", o200k},
	{"o4-mini", o200k},
	{"gpt-4", cl100k}, // gpt-4, gpt-4-turbo, gpt-4-32k
	{"gpt-3.5-turbo", cl100k},
	{"gpt-35-turbo", cl100k}, // Azure deployment names
	{"gpt-3.5", cl100k},
	{"text-embedding-3", cl100k}, // -small, -large
	{"text-embedding-ada-002", cl100k},
	{"davinci-002", cl100k},
	{"babbage-002", cl100k},
}

// families maps the other model families, by a word the model's name
// contains, to the estimate fitted to their tokenizers. Checked in order.
var families = []struct {
	contains string
	family   string
}{
	{"claude", "claude"},
	{"deepseek", "deepseek"},
	{"qwen", "qwen"},
	{"qwq", "qwen"}, // QwQ is Qwen's reasoning model, same tokenizer
	{"llama", "llama"},
	{"glm", "glm"},
}

// For returns the counter for a model name as an API or a config names it
// ("gpt-4o-mini", "openai/gpt-4.1", "Qwen/Qwen3-32B", "claude-sonnet-4-5").
// OpenAI models get tiktoken's exact count; Claude, Qwen, DeepSeek, Llama
// and GLM models get an estimate fitted to their family's tokenizer (see
// doc.go for each one's measured error); any other name gets the generic
// estimate, which errs towards counting more than most tokenizers do.
func For(model string) Counter {
	name := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	name = strings.TrimPrefix(name, "ft:")
	for _, p := range openAIPrefixes {
		if matchModel(name, p.name) {
			return p.bpe
		}
	}
	for _, f := range families {
		if strings.Contains(name, f.contains) {
			return estimates[f.family]
		}
	}
	return estimates["generic"]
}

// matchModel reports whether name is model or one of its variants:
// model followed by "-" or ":" (gpt-4o-mini, o3-pro, gpt-4o:acme), or, for
// gpt-5, "." and a minor version (gpt-5.1). "gpt-4" does not match
// "gpt-4o".
func matchModel(name, model string) bool {
	rest, ok := strings.CutPrefix(name, model)
	if !ok {
		return false
	}
	if rest == "" || rest[0] == '-' || rest[0] == ':' {
		return true
	}
	return model == "gpt-5" && rest[0] == '.'
}
