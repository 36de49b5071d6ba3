package bench

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// Without the LoCoMo file, make bench-locomo stops at once and says how to
// get it, rather than after the benchmarks before it or with a bare "no
// such file".
func TestLoCoMoMissing(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	code := Main([]string{"-only", "locomo,llm", "-locomo", filepath.Join(t.TempDir(), "locomo10.json")}, &out)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{"not shipped", "curl -fLo testdata/locomo/locomo10.json https://", "LOCOMO="} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
