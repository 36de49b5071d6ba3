package textseg

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
)

// The dictionary tables (lexicon/README.md: what they hold, where from,
// under what licence, and how lexgen makes them). From CC-CEDICT: each
// short English gloss with the Chinese words it glosses, which links
// Chinese near-synonyms (医生, 大夫: "doctor") and bridges the two
// languages (猫粮 ↔ "cat food"). From WordNet: each English word with
// the synonyms of its most frequent sense (resign: vacate, renounce).
//
//go:embed lexicon/cedict.tsv.gz lexicon/wordnet.tsv.gz
var lexiconFiles embed.FS

// Lexicons says which sources query expansion reads.
type Lexicons struct {
	CEDICT, WordNet, Hand bool
}

// AllLexicons is every source: what engram runs with.
var AllLexicons = Lexicons{CEDICT: true, WordNet: true, Hand: true}

var lexicons atomic.Pointer[Lexicons]

// SetLexicons chooses the sources query expansion reads (AllLexicons by
// default). It is for measuring what each adds (engram-bench -lexicons);
// a query already being read may see either choice.
func SetLexicons(l Lexicons) { lexicons.Store(&l) }

func usedLexicons() Lexicons {
	if l := lexicons.Load(); l != nil {
		return *l
	}
	return AllLexicons
}

// dictionary is the tables read into memory, once, on first use (about
// 50,000 glosses and 9,000 English words: tens of milliseconds).
type dictionary struct {
	glosses []string   // group i's gloss
	groups  [][]string // group i's Chinese words
	byWord  map[string][]int32
	// byGloss finds a group by its gloss as Tokens reads it (stemmed
	// words joined by a space).
	byGloss map[string]int32
	// synonyms are an English word's synonyms, by the word's stem.
	synonyms map[string][]string
}

var dict = sync.OnceValue(func() *dictionary {
	d, err := loadDictionary()
	if err != nil {
		// The tables are embedded and checked by a test: they cannot be
		// unreadable in a built binary.
		panic(err)
	}
	return d
})

// LoadLexicons reads the dictionary tables now rather than on the first
// query that needs them (a tenth of a second of CPU; a query meanwhile
// waits for them).
func LoadLexicons() { dict() }

func loadDictionary() (*dictionary, error) {
	d := &dictionary{byWord: map[string][]int32{}, byGloss: map[string]int32{}, synonyms: map[string][]string{}}
	err := eachLine("lexicon/cedict.tsv.gz", func(key, stem, vals string) {
		i := int32(len(d.groups))
		words := strings.Fields(vals)
		d.glosses = append(d.glosses, key)
		d.groups = append(d.groups, words)
		for _, w := range words {
			d.byWord[w] = append(d.byWord[w], i)
		}
		d.byGloss[stem] = i
	})
	if err != nil {
		return nil, err
	}
	err = eachLine("lexicon/wordnet.tsv.gz", func(key, stem, vals string) {
		for _, w := range strings.Fields(vals) {
			if w != key && !slices.Contains(d.synonyms[stem], w) {
				d.synonyms[stem] = append(d.synonyms[stem], w)
			}
		}
	})
	return d, err
}

// eachLine calls f with the three fields of each line of a gzipped table:
// a key, the key as Tokens reads it (lexgen writes it, so loading stems
// nothing), and its values; comments, starting with #, are left out.
func eachLine(name string, f func(key, stem, vals string)) error {
	raw, err := lexiconFiles.ReadFile(name)
	if err != nil {
		return err
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		key, rest, ok := strings.Cut(line, "\t")
		stem, vals, ok2 := strings.Cut(rest, "\t")
		if !ok || !ok2 {
			return fmt.Errorf("%s: %q has not three fields", name, line)
		}
		f(key, stem, vals)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return zr.Close()
}

// maxDictRunes is the longest Chinese word the tables hold.
const maxDictRunes = 4

// wordsIn returns the dictionary's words inside a Chinese run, longest
// first at each place, leaving out a word inside a longer one found (猫粮
// holds 猫, which says less). A one-character word counts only when it is
// a noun read on its own (singleNouns) and the run is that character.
func (d *dictionary) wordsIn(run string) []string {
	rs := []rune(run)
	if len(rs) == 1 {
		if singleNouns[run] && len(d.byWord[run]) > 0 {
			return []string{run}
		}
		return nil
	}
	var out []string
	covered := 0 // rs[:covered] is inside a word found
	for i := range rs {
		for n := min(maxDictRunes, len(rs)-i); n >= 2; n-- {
			w := string(rs[i : i+n])
			if _, ok := d.byWord[w]; ok {
				if i+n > covered {
					out = append(out, w)
					covered = i + n
				}
				break
			}
		}
	}
	return out
}

// dictSiblings returns what the dictionary links a word to: for a Chinese
// word, the Chinese words that share a gloss with it and the glosses
// themselves (English); for English (one word, or two as a phrase), the
// Chinese words its gloss names and, from WordNet, its synonyms.
func (d *dictionary) siblings(word string, l Lexicons) (zh, en []string) {
	if chars.HasCJK(word) {
		if !l.CEDICT || d.functionWord(word) {
			return nil, nil
		}
		for _, g := range d.byWord[word] {
			for _, w := range d.groups[g] {
				if w != word && !slices.Contains(zh, w) && usableCJK(w) {
					zh = append(zh, w)
				}
			}
			en = append(en, d.glosses[g])
		}
		return zh, en
	}
	key := strings.Join(Tokens(word), " ")
	if l.CEDICT {
		if g, ok := d.byGloss[key]; ok {
			for _, w := range d.groups[g] {
				if usableCJK(w) {
					zh = append(zh, w)
				}
			}
		}
	}
	if l.WordNet && !strings.Contains(key, " ") {
		en = append(en, d.synonyms[key]...)
	}
	return zh, en
}

// functionWord reports whether the dictionary equates a Chinese word
// with a function word (上回 with 上次): it frames a question rather than
// says what it is about, and is not expanded.
func (d *dictionary) functionWord(word string) bool {
	for _, g := range d.byWord[word] {
		for _, w := range d.groups[g] {
			if slices.Contains(cjkStop, w) {
				return true
			}
		}
	}
	return false
}

// usableCJK: a one-character word is searched only when it is a noun read
// on its own (singleNouns); any other single character would match half
// of everything.
func usableCJK(w string) bool {
	return utf8.RuneCountInString(w) > 1 || singleNouns[w]
}
