package bench

import (
	"github.com/engramhq/engram/internal/secrets"
	secretcorpus "github.com/engramhq/engram/internal/secrets/corpus"
)

// Secrets measures engram's masker on the secret corpus: precision and
// recall, and what it missed or masked wrongly. gitleaks' default rule set
// (v8.30.1), run on the same corpus by the same measure, reached precision
// 1.000 and recall 0.602: it has no rule for keys in prose, passwords,
// connection strings or Chinese, and it would add about 200 modules.
func Secrets() secretcorpus.Score {
	var m secrets.Masker
	return secretcorpus.Evaluate(func(s string) string { out, _ := m.Mask(s); return out })
}
