package tokens

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tiktoken-go/tokenizer/codec"
)

// Reference counts from tiktoken's own token ids, as the tokenizer
// module's tests (tokenizer_test.go) list them for each encoding.
func TestExactKnownCounts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		encoding, text string
		want           int
	}{
		{"o200k_base", "hello world", 2},
		{"o200k_base", "hello  world", 3},
		{"o200k_base", "hello   world", 3},
		{"o200k_base", "supercalifragilistic", 6},
		{"o200k_base", "We know what we are, but know not what we may be.", 14},
		{"o200k_base", "'RE", 2},
		{"cl100k_base", "hello world", 2},
		{"cl100k_base", "hello  world", 3},
		{"cl100k_base", "hello   world", 3},
		{"cl100k_base", "supercalifragilistic", 7},
		{"cl100k_base", "We know what we are, but know not what we may be.", 14},
		{"cl100k_base", "'RE", 1},
	}
	for _, tt := range tests {
		t.Run(tt.encoding+"/"+tt.text, func(t *testing.T) {
			c, err := Exact(tt.encoding)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Count(tt.text); got != tt.want {
				t.Fatalf("Count(%q) = %d, want %d", tt.text, got, tt.want)
			}
			if got := c.Name(); got != tt.encoding {
				t.Fatalf("Name() = %q, want %q", got, tt.encoding)
			}
		})
	}
}

// The exact counters must agree with a second, independent implementation:
// Hugging Face's tokenizer for the same encodings, run by count.mjs. The
// one known difference is a bug in the split pattern the tokenizer module
// generates (v0.10.0): a run of whitespace holding line breaks with spaces
// or tabs between them ("\n    \n", a blank line left indented in code) is
// cut at each inner break instead of kept whole as tiktoken keeps it, which
// adds about one token per such blank line. The count may exceed the
// reference by at most that many, never fall below it.
func TestExactMatchesReferenceTokenizers(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"corpus", "calib"} {
		samples := loadCorpus(t, name)
		for _, enc := range []string{"o200k_base", "cl100k_base"} {
			c, _ := Exact(enc)
			exact, over := 0, 0
			for i, s := range samples {
				got, want := c.Count(s.text), s.counts[enc]
				if got == want {
					exact++
					continue
				}
				if blank := indentedBlankLines(s.text); got < want || got > want+blank {
					t.Errorf("%s sample %d (%s): %s count %d, reference %d (%d indented blank lines)", name, i, s.kind, enc, got, want, blank)
				}
				over += got - want
			}
			t.Logf("%s, %s: %d of %d samples exact; %d tokens over in the rest", name, enc, exact, len(samples), over)
		}
	}
}

// indentedBlankLines counts the line breaks that follow spaces or tabs
// which themselves follow a line break within one run of whitespace.
func indentedBlankLines(s string) int {
	n := 0
	sawBreak, sawSpace := false, false
	for _, r := range s {
		switch r {
		case '\n', '\r':
			if sawBreak && sawSpace {
				n++
			}
			sawBreak, sawSpace = true, false
		case ' ', '\t':
			sawSpace = sawBreak
		default:
			sawBreak, sawSpace = false, false
		}
	}
	return n
}

func TestExactUnknownEncoding(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{"p50k_base", "r50k_base", "", "O200K_BASE"} {
		if c, err := Exact(enc); err == nil {
			t.Errorf("Exact(%q) = %s, want an error", enc, c.Name())
		}
	}
}

func TestFor(t *testing.T) {
	t.Parallel()
	tests := []struct{ model, want string }{
		{"gpt-4o", "o200k_base"},
		{"gpt-4o-mini", "o200k_base"},
		{"gpt-4o-2024-08-06", "o200k_base"},
		{"chatgpt-4o-latest", "o200k_base"},
		{"gpt-4.1", "o200k_base"},
		{"gpt-4.1-nano", "o200k_base"},
		{"gpt-4.5-preview", "o200k_base"},
		{"gpt-5", "o200k_base"},
		{"gpt-5-mini", "o200k_base"},
		{"gpt-5.1", "o200k_base"},
		{"o1", "o200k_base"},
		{"o1-preview", "o200k_base"},
		{"o3", "o200k_base"},
		{"o3-mini", "o200k_base"},
		{"o4-mini", "o200k_base"},
		{"gpt-oss-120b", "o200k_base"},
		{"openai/gpt-4o", "o200k_base"},
		{" GPT-4o ", "o200k_base"},
		{"ft:gpt-4o-mini-2024-07-18:acme::abc123", "o200k_base"},
		{"gpt-4", "cl100k_base"},
		{"gpt-4-0613", "cl100k_base"},
		{"gpt-4-turbo", "cl100k_base"},
		{"gpt-4-32k", "cl100k_base"},
		{"gpt-3.5-turbo", "cl100k_base"},
		{"gpt-3.5-turbo-16k", "cl100k_base"},
		{"gpt-35-turbo", "cl100k_base"},
		{"ft:gpt-3.5-turbo-0613:acme::x", "cl100k_base"},
		{"text-embedding-3-small", "cl100k_base"},
		{"text-embedding-3-large", "cl100k_base"},
		{"text-embedding-ada-002", "cl100k_base"},
		{"claude-sonnet-4-5", "estimate:claude"},
		{"claude-3-5-haiku-20241022", "estimate:claude"},
		{"anthropic/claude-opus-4.1", "estimate:claude"},
		{"anthropic.claude-3-5-sonnet-20240620-v1:0", "estimate:claude"},
		{"qwen-max", "estimate:qwen"},
		{"qwen3-235b-a22b", "estimate:qwen"},
		{"Qwen/Qwen2.5-72B-Instruct", "estimate:qwen"},
		{"qwq-32b", "estimate:qwen"},
		{"deepseek-chat", "estimate:deepseek"},
		{"deepseek-reasoner", "estimate:deepseek"},
		{"deepseek-ai/DeepSeek-V3", "estimate:deepseek"},
		{"llama3.1:8b", "estimate:llama"},
		{"meta-llama/Llama-3.3-70B-Instruct", "estimate:llama"},
		{"glm-4-plus", "estimate:glm"},
		{"THUDM/chatglm3-6b", "estimate:glm"},
		{"gpt-4oo", "estimate:generic"}, // not a variant of gpt-4o
		{"o5", "estimate:generic"},
		{"mistral-large", "estimate:generic"},
		{"gemini-2.5-pro", "estimate:generic"},
		{"", "estimate:generic"},
	}
	for _, tt := range tests {
		if got := For(tt.model).Name(); got != tt.want {
			t.Errorf("For(%q) = %s, want %s", tt.model, got, tt.want)
		}
	}
}

func TestCountEmptyAndBlank(t *testing.T) {
	t.Parallel()
	for _, c := range allCounters() {
		if got := c.Count(""); got != 0 {
			t.Errorf("%s: Count(\"\") = %d, want 0", c.Name(), got)
		}
		if got := c.Count(" "); got != 1 {
			t.Errorf("%s: Count(\" \") = %d, want 1", c.Name(), got)
		}
	}
}

func allCounters() []Counter {
	cs := []Counter{o200k, cl100k}
	for _, e := range estimates {
		cs = append(cs, e)
	}
	return cs
}

// The first Count builds the rank table once however many goroutines race
// to it; run with -race. A fresh bpe has its own once and codec; the rank
// map inside the codec package is shared, guarded by the module's own once.
func TestConcurrentFirstUse(t *testing.T) {
	t.Parallel()
	samples := loadCorpus(t, "corpus")
	for _, fresh := range []*bpe{
		newBPE("o200k_base", codec.NewO200kBase, Estimate{}),
		newBPE("cl100k_base", codec.NewCl100kBase, Estimate{}),
	} {
		t.Run(fresh.name, func(t *testing.T) {
			const workers = 8
			var wg sync.WaitGroup
			errs := make(chan string, workers*len(samples))
			for w := range workers {
				wg.Go(func() {
					for i := range samples {
						s := samples[(i+w)%len(samples)]
						if got, want := fresh.Count(s.text), s.counts[fresh.name]; got != want {
							errs <- fmt.Sprintf("sample %d: Count = %d, want %d", (i+w)%len(samples), got, want)
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Error(e)
			}
		})
	}
}

// The estimates against each family's real tokenizer on the held-out
// corpus, which was never fitted to. The bounds are loose on purpose (the
// measured errors are in doc.go); they catch a broken feature or a preset
// pasted into the wrong family, not a point of drift.
func TestEstimateError(t *testing.T) {
	t.Parallel()
	held := loadCorpus(t, "corpus")
	var kinds []string
	seen := make(map[string]bool)
	for _, s := range held {
		if !seen[s.kind] {
			seen[s.kind] = true
			kinds = append(kinds, s.kind)
		}
	}
	for _, c := range columns {
		e := estimates[c.family]
		st := measureError(e, held, c.column)
		var byKind strings.Builder
		for _, k := range kinds {
			var sub []sample
			for _, s := range held {
				if s.kind == k {
					sub = append(sub, s)
				}
			}
			fmt.Fprintf(&byKind, " %s %+.0f%%", k, 100*measureError(e, sub, c.column).total)
		}
		t.Logf("%-22s vs %-13s total %+5.1f%%, mean |e| %4.1f%%, worst %3.0f%% (sample %d); by kind:%s",
			e.Name(), c.column, 100*st.total, 100*st.meanAbs, 100*st.worst, st.worstIdx, byKind.String())
		if st.total < -0.10 || st.total > 0.10 {
			t.Errorf("%s: total off by %+.1f%%, want within ±10%%", e.Name(), 100*st.total)
		}
		if st.meanAbs > 0.20 {
			t.Errorf("%s: mean |error| per sample %.1f%%, want at most 20%%", e.Name(), 100*st.meanAbs)
		}

		g := measureError(estimates["generic"], held, c.column)
		t.Logf("%-22s vs %-13s total %+5.1f%%, mean |e| %4.1f%%", "estimate:generic", c.column, 100*g.total, 100*g.meanAbs)
		if g.total < -0.05 || g.total > 0.45 {
			t.Errorf("generic: total off by %+.1f%% against %s, want between -5%% and +45%%", 100*g.total, c.column)
		}
	}
}

// What a Han character costs in each family, from the held-out corpus's
// Chinese samples (punctuation included): the figure doc.go quotes.
func TestHanRatio(t *testing.T) {
	t.Parallel()
	var han int
	tokens := make(map[string]int)
	for _, s := range loadCorpus(t, "corpus") {
		if s.kind != "zh" {
			continue
		}
		f := measure(s.text)
		han += f.han
		for _, c := range columns {
			tokens[c.column] += s.counts[c.column]
		}
	}
	for _, c := range columns {
		r := float64(tokens[c.column]) / float64(han)
		t.Logf("%-13s %.2f tokens per Han character", c.column, r)
		if r < 0.4 || r > 1.6 {
			t.Errorf("%s: %.2f tokens per Han character; the corpus or its counts look wrong", c.column, r)
		}
	}
}

func TestEstimateDoesNotAllocate(t *testing.T) {
	// Not parallel: AllocsPerRun counts the whole process's allocations.
	s := strings.Join([]string{"我叫李明，在杭州工作。", "My name is Sarah — I work at a startup (since 2024-03-14).",
		"    return fmt.Errorf(\"put %s: %w\", id, err)\n\n", "Привет 🎉 ┌──┐ café"}, "\n")
	e := estimates["qwen"]
	if n := testing.AllocsPerRun(100, func() { e.Count(s) }); n != 0 {
		t.Fatalf("Estimate.Count allocates %.0f times per call, want 0", n)
	}
}

// Every class of text must cost something in every preset, or a budget
// could be filled with text the estimate calls free (a fit may drive a
// weight to zero when another feature absorbs its cost, as a Chinese comma
// mostly merges with the character after it). Per-digit and space-before-
// digit costs may be zero: the digit group carries them.
func TestPresetWeightsFloor(t *testing.T) {
	t.Parallel()
	optional := map[int]bool{9: true, 10: true} // Digit, SpaceDigit
	for name, e := range estimates {
		for i, w := range e.weights() {
			if !optional[i] && w < minWeight {
				t.Errorf("%s: weight %d is %d, want at least %d", name, i, w, minWeight)
			}
		}
	}
}

func BenchmarkCount(b *testing.B) {
	s := mixed2KB(b)
	for _, c := range []Counter{o200k, cl100k, estimates["qwen"], estimates["generic"]} {
		b.Run(c.Name(), func(b *testing.B) {
			c.Count("warm up")
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				c.Count(s)
			}
		})
	}
}

// mixed2KB is 2 KB of the held-out corpus, cut at a rune, taking Chinese,
// English, mixed and code samples in turn.
func mixed2KB(tb testing.TB) string {
	tb.Helper()
	byKind := make(map[string][]string)
	for _, s := range loadCorpus(tb, "corpus") {
		byKind[s.kind] = append(byKind[s.kind], s.text)
	}
	var all strings.Builder
	for i := 0; all.Len() < 2048; i++ {
		for _, k := range []string{"zh", "en", "mixed", "code"} {
			all.WriteString(byKind[k][i%len(byKind[k])] + "\n")
		}
	}
	s, n := all.String(), 2048
	for s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func TestBreakRunCut(t *testing.T) {
	t.Parallel()
	run := strings.Repeat("\n ", maxBreakRun) // 2 × maxBreakRun bytes
	tests := []struct {
		s    string
		want int
	}{
		{"", 0},
		{"hello world", 11},
		{strings.Repeat(" ", 3*maxBreakRun) + "x", 3*maxBreakRun + 1}, // spaces alone are linear: no cut
		{run, maxBreakRun},
		{"ab" + run, 2 + maxBreakRun},
		{strings.Repeat(" ", maxBreakRun) + "\n" + run, maxBreakRun + 1}, // the break makes the run long
		{strings.Repeat("a\n ", 3*maxBreakRun), 3 * 3 * maxBreakRun},     // short runs
	}
	for _, tt := range tests {
		if got := breakRunCut(tt.s); got != tt.want {
			t.Errorf("breakRunCut(%d bytes starting %q) = %d, want %d", len(tt.s), tt.s[:min(len(tt.s), 8)], got, tt.want)
		}
	}
}

// A long whitespace run with line breaks reaches the codec in parts of at
// most maxBreakRun bytes; the codec would take quadratic time on it whole.
func TestLongBreakRunCountedInParts(t *testing.T) {
	t.Parallel()
	s := "start" + strings.Repeat("\n \t", 20*maxBreakRun) + "end"
	o200k.Count("load the codec")
	want := 0
	for rest := s; rest != ""; {
		part := rest[:breakRunCut(rest)]
		if len(part) > maxBreakRun+len("start") {
			t.Fatalf("part of %d bytes, want at most %d", len(part), maxBreakRun+len("start"))
		}
		n, err := o200k.codec.Count(part)
		if err != nil {
			t.Fatal(err)
		}
		want += n
		rest = rest[len(part):]
	}
	if got := o200k.Count(s); got != want {
		t.Fatalf("Count = %d, want the sum over parts %d", got, want)
	}
}
