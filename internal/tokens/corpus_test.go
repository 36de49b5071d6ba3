package tokens

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A corpus is a text file of samples, each introduced by a line
// "=== kind", and a .counts.tsv beside it with each sample's token count
// under the real tokenizer of every family, made by
// testdata/refcount/count.mjs (see its README). The counts are the
// reference the estimates are fitted to and judged by.
//
//	corpus.txt  59 samples written for these tests, held out: never fitted
//	calib.txt   the seed design documents, DESIGN.md and STYLE.md cut into
//	            1 KB samples: the calibration set TestCalibrate fits to
type sample struct {
	kind   string
	text   string
	counts map[string]int // by column: o200k_base, cl100k_base, qwen3, ...
}

// columns are the tokenizers count.mjs counts with, and the family of
// estimates each one calibrates.
var columns = []struct{ column, family string }{
	{"o200k_base", "o200k_base"},
	{"cl100k_base", "cl100k_base"},
	{"qwen3", "qwen"},
	{"deepseek_v3", "deepseek"},
	{"llama3", "llama"},
	{"claude_legacy", "claude"},
}

var header = regexp.MustCompile(`^=== (\S+)$`)

// parseCorpus splits exactly as parse in count.mjs does.
func parseCorpus(text string) []sample {
	var out []sample
	var lines []string
	kind := ""
	flush := func() {
		if kind != "" {
			out = append(out, sample{kind: kind, text: strings.TrimSuffix(strings.Join(lines, "\n"), "\n")})
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if m := header.FindStringSubmatch(line); m != nil {
			flush()
			kind, lines = m[1], nil
		} else if kind != "" {
			lines = append(lines, line)
		}
	}
	flush()
	return out
}

func loadCorpus(t testing.TB, name string) []sample {
	t.Helper()
	text, err := os.ReadFile("testdata/" + name + ".txt")
	if err != nil {
		t.Fatalf("read corpus: %v", err)
	}
	tsv, err := os.ReadFile("testdata/" + name + ".counts.tsv")
	if err != nil {
		t.Fatalf("read corpus counts: %v", err)
	}
	samples := parseCorpus(string(text))
	rows := strings.Split(strings.TrimSpace(string(tsv)), "\n")
	if got, want := len(rows)-1, len(samples); got != want {
		t.Fatalf("%s.counts.tsv has %d rows, %s.txt %d samples: rerun count.mjs", name, got, name, want)
	}
	cols := strings.Split(rows[0], "\t")
	for i, row := range rows[1:] {
		fields := strings.Split(row, "\t")
		if len(fields) != len(cols) {
			t.Fatalf("%s.counts.tsv row %d: %d fields, want %d", name, i+1, len(fields), len(cols))
		}
		s := &samples[i]
		if got, want := fields[1], s.kind; got != want {
			t.Fatalf("%s sample %d: counts are for kind %q, text is %q: rerun count.mjs", name, i, got, want)
		}
		if got, want := fields[2], strconv.Itoa(len(s.text)); got != want {
			t.Fatalf("%s sample %d: counts are for %s bytes, text has %s: rerun count.mjs", name, i, got, want)
		}
		s.counts = make(map[string]int)
		for j := 3; j < len(cols); j++ {
			n, err := strconv.Atoi(fields[j])
			if err != nil {
				t.Fatalf("%s.counts.tsv row %d column %s: %v", name, i+1, cols[j], err)
			}
			s.counts[cols[j]] = n
		}
	}
	return samples
}

// errorStats sums up how far c's counts are from the reference column.
type errorStats struct {
	total    float64 // sum of counts / sum of reference - 1
	meanAbs  float64 // mean of |count/reference - 1| over samples
	worst    float64 // the largest |count/reference - 1|
	worstIdx int
}

func measureError(c Counter, samples []sample, column string) errorStats {
	var st errorStats
	var sum, ref float64
	for i, s := range samples {
		want := float64(s.counts[column])
		got := float64(c.Count(s.text))
		sum += got
		ref += want
		e := got/want - 1
		if e < 0 {
			e = -e
		}
		st.meanAbs += e
		if e > st.worst {
			st.worst, st.worstIdx = e, i
		}
	}
	st.total = sum/ref - 1
	st.meanAbs /= float64(len(samples))
	return st
}
