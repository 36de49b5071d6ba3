package textseg

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	porter "github.com/blevesearch/go-porterstemmer"
	"github.com/engramhq/engram/internal/chars"
)

// Term is one weighted unit of a query, in the form the index stores it.
type Term struct {
	// Token is a lowercased, stemmed word, a CJK bigram, or one CJK
	// character (then Prefix: it matches every token that starts with it,
	// which is every occurrence of the character, see Index).
	Token  string
	Prefix bool
	// Surface is the word as the index's own tokenizer must read it in a
	// MATCH (it stems it again: a stem is not always its own stem).
	Surface string
	// Weight says how much the term speaks for what is asked, in (0, 1]:
	// 1 for the words of the last utterance, less for the recent messages
	// before it (the further back, the less), less again for a term the
	// concept lexicon added.
	Weight float64
	// Dictionary: only the dictionaries (dictionary.go) added it, not the
	// text or the hand-written concepts.
	Dictionary bool
}

// Query is what a recall path searches for: weighted terms, and phrases
// that earn a bonus where they occur verbatim but are never required.
type Query struct {
	Terms   []Term   // distinct tokens, heaviest first
	Phrases []string // lowercased: CJK words of 3+ characters, word groups
	// Uninformative: the text had stopwords alone ("what about that?"),
	// which are the terms; they match nearly everything, so a store lists
	// their matches newest first instead of ranking them.
	Uninformative bool
	// AsksWhen: the last utterance asks when something happened or how
	// long it took (AsksWhen); what says when is likelier the answer.
	AsksWhen bool
	// AsksMany: the last utterance asks for several things ("what
	// activities…", "which books…", "how many times…"), whose evidence is
	// usually spread over conversations (AsksMany).
	AsksMany bool
}

// Empty reports whether q has nothing to search for.
func (q Query) Empty() bool { return len(q.Terms) == 0 }

// The weights of the recent messages: the one just before the last
// utterance counts contextWeight, each earlier one contextDecay as much as
// the next, never below contextFloor. A lexicon expansion counts
// expandWeight of the term it came from.
const (
	contextWeight = 0.75
	contextDecay  = 0.75
	contextFloor  = 0.2
	expandWeight  = 0.6
	// verbWeight is what a one-character verb's bigram with the 了 after
	// it (赔了, 丢了) weighs beside the words around it: the only term that
	// finds the verb, and a weak one (了 follows every verb).
	verbWeight = 0.5
	// looseWeight is what a bigram across a function word (looseBigrams)
	// weighs beside the words around it.
	looseWeight = 0.5

	// positionDiscount is what the first words of an utterance weigh less
	// than its last ones.
	positionDiscount = 0.15
	// sceneWeight is what the sentences of a long utterance that neither
	// ask nor end it weigh.
	sceneWeight = 0.55
	// maxQueryTerms bounds what one query carries into the stores. The
	// terms are sorted heaviest first before the cut, so what goes is the
	// oldest context, never the last utterance; the stores keep the most
	// informative of these by the user's own statistics (Select).
	maxQueryTerms = 256
)

// Understand turns what the agent sends into a Query: last is the last
// utterance (the query proper), context the recent messages before it,
// most recent first. Every recall path (memories, turns, episodes, daily
// summaries) searches with the same Query.
//
// Chinese is matched by its bigrams, each a term of its own, so a memory
// that shares part of a long sentence is found; a run is first cut at
// function words (的, 了, 什么, …) so no bigram straddles one, and a
// one-character noun (猫, 车, 药) is a term too. English words are
// lowercased and stemmed as the index stems them; stopwords go. Words the
// concept lexicon knows (like ↔ prefer ↔ 喜欢; ship ↔ deploy ↔ 上线) bring
// their siblings in at a lower weight, so a paraphrase still matches
// without a model.
func Understand(last string, context ...string) Query {
	b := newBuilder()
	// A long utterance is read sentence by sentence: its questions and
	// its last sentence ask; what comes before sets the scene ("work has
	// been crazy this week, … What does Sam have on Saturday?").
	sents := sentences(last)
	if len(sents) == 1 && chars.HasCJK(last) && utf8.RuneCountInString(last) >= longClauses {
		sents = clauses(last)
	}
	for i, sent := range sents {
		w := 1.0
		if i < len(sents)-1 && !isQuestion(sent) {
			w = sceneWeight
		}
		b.add(sent, w)
	}
	w := contextWeight
	for _, c := range context {
		b.add(c, w)
		w = max(w*contextDecay, contextFloor)
	}
	if len(b.terms) == len(b.verbs)+len(b.loose) {
		// Stopwords alone ("what about that?", and "好了吗", whose only
		// term would be the verb bigram 好了): search them rather than
		// nothing; the caller knows such a query is not informative.
		b.keepStop = true
		b.terms, b.verbs, b.loose, b.phr = nil, nil, nil, nil
		clear(b.index)
		clear(b.phrases)
		b.add(last, 1)
		q := b.query()
		q.Uninformative = true
		return q
	}
	b.expand()
	q := b.query()
	q.AsksWhen = AsksWhen(last)
	q.AsksMany = AsksMany(last)
	return q
}

// Feedback reads found (what one recall path found) as a query of the
// words q does not already have: a light cue for another path. The
// memories a question finds are distilled from the turns that said them,
// and name what those turns talk about in the words they used, which the
// question often does not.
func (q Query) Feedback(found ...string) Query {
	b := newBuilder()
	for _, t := range found {
		b.add(t, 1)
	}
	fb := b.query()
	fb.Phrases = nil
	fb.Terms = slices.DeleteFunc(fb.Terms, func(t Term) bool {
		return slices.ContainsFunc(q.Terms, func(o Term) bool { return o.Token == t.Token })
	})
	return fb
}

func newBuilder() queryBuilder {
	return queryBuilder{index: map[string]int{}, phrases: map[string]bool{}, verbs: map[string]bool{}, loose: map[string]bool{}}
}

type queryBuilder struct {
	// terms are the terms read, in first-seen order (for a stable sort),
	// and index finds a token's: one map, not one per field of a term
	// (a dialogue's terms are hundreds, each looked up several times).
	terms   []Term
	index   map[string]int
	phrases map[string]bool
	phr     []string
	// sources are the words as read (not stemmed), with their weight, for
	// the lexicon.
	sources []weighted
	// keepStop reads stopwords as terms.
	keepStop bool
	// verbs are the verb bigrams added (term.verb): alone they make no
	// informative query.
	verbs map[string]bool
	// loose are the bigrams across a function word (loose): alone
	// they make no informative query either.
	loose map[string]bool
	// adding is set while expand adds the dictionaries' words: a term
	// only they add is Term.Dictionary.
	adding bool
}

type weighted struct {
	word string
	w    float64
	// next: the next source is the word after this one in the same
	// utterance, so the two may be a phrase the dictionary knows ("blood
	// pressure").
	next bool
}

func (b *queryBuilder) term(p piece, prefix bool, w float64) {
	if p.token == "" {
		return
	}
	// A word read as one is no loose bigram, whichever came first.
	delete(b.loose, p.token)
	if i, ok := b.index[p.token]; ok {
		t := &b.terms[i]
		t.Weight = max(t.Weight, w)
		t.Dictionary = t.Dictionary && b.adding
		return
	}
	b.index[p.token] = len(b.terms)
	b.terms = append(b.terms, Term{Token: p.token, Prefix: prefix, Surface: p.surface, Weight: w, Dictionary: b.adding})
}

func (b *queryBuilder) phrase(p string) {
	if !b.phrases[p] {
		b.phrases[p] = true
		b.phr = append(b.phr, p)
	}
}

// sentences cuts text after each sentence end (. ? ! 。 ？ ！ and line
// breaks); text without one is one sentence.
func sentences(text string) []string {
	return cutAfter(text, func(i int, r rune) bool {
		switch r {
		case '.':
			// A full stop inside a word (node.js, 3.12) is no end.
			return i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n'
		case '?', '!', '\n', '。', '？', '！':
			return true
		}
		return false
	})
}

// longClauses is the length from which a one-sentence utterance is read
// clause by clause: people type a long question as one run of clauses
// joined by commas, its ask at the end.
const longClauses = 50

// clauses cuts text after each comma or semicolon.
func clauses(text string) []string {
	return cutAfter(text, func(_ int, r rune) bool { return strings.ContainsRune(",，;；", r) })
}

// cutAfter cuts text after each rune for which ends is true (i is the
// rune's byte offset) and returns the pieces trimmed, empty ones left out.
func cutAfter(text string, ends func(i int, r rune) bool) []string {
	var out []string
	start := 0
	for i, r := range text {
		if ends(i, r) {
			if s := strings.TrimSpace(text[start : i+utf8.RuneLen(r)]); s != "" {
				out = append(out, s)
			}
			start = i + utf8.RuneLen(r)
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

func isQuestion(s string) bool {
	return strings.ContainsAny(s, "?？") || strings.ContainsAny(s, "吗呢")
}

// add reads one utterance at weight w.
func (b *queryBuilder) add(text string, w float64) {
	s := splitter{dropStop: !b.keepStop, verbs: !b.keepStop, seen: map[string]bool{}, unbounded: true}
	s.scan(text)
	prevWord := false
	for i, t := range s.terms {
		// Within an utterance the end weighs a little more: the cue of a
		// long question is usually its last clause.
		w := w * (1 - positionDiscount*float64(len(s.terms)-1-i)/float64(len(s.terms)))
		if t.verb {
			b.term(piece{t.text, t.text}, false, w*verbWeight)
			b.verbs[t.text] = true
			continue
		}
		if t.cjk {
			prevWord = false
			b.cjk(t.text, w)
			continue
		}
		words := strings.Fields(t.key)
		n := 0
		for _, word := range words {
			if (isStopword(word) || queryFraming[word]) && !b.keepStop {
				prevWord = false
				continue
			}
			n++
			if prevWord {
				b.sources[len(b.sources)-1].next = true
			}
			prevWord = true
			b.sources = append(b.sources, weighted{word: word, w: w})
			for _, p := range pieces(word) {
				b.term(p, false, w)
			}
		}
		if n > 0 && len(words) > 1 && w > contextWeight {
			b.phrase(t.key)
		}
	}
	if !b.keepStop {
		b.looseBigrams(s.runs, w)
	}
}

// looseNever are the characters no loose bigram holds: pronouns and
// demonstratives frame a request ("我发给你的那张…", "我们去…") and share
// that frame with every other request, not what it is about.
const looseNever = "我你他她它们这那"

// particles start no loose bigram: what follows 的, 了 or the 么 of 什么
// is the next word (的几, 了一, 么关), seldom one with it, while what
// precedes them often is (买的, 目的, 好的).
const particles = "的了吗呢吧啊呀嘛么"

// looseBigrams adds, at looseWeight, the bigrams of CJK runs (read
// whole) that reading cut at a function word (票买的几点 → 买的): the
// words around a function word are often a word of their own (买的是,
// 目的地, 好的), and a memory that shares nothing else with the query is
// found by them, as a plain bigram search finds it. No bigram of a
// function word itself (上次, 一下, 有没有, 为什么) is one.
func (b *queryBuilder) looseBigrams(runs []string, w float64) {
	for _, run := range runs {
		for _, bg := range bigrams(run) {
			if _, ok := b.index[bg]; (ok && !b.loose[bg]) || !isLoose(bg) {
				continue
			}
			b.term(piece{bg, bg}, false, w*looseWeight) // the heaviest reading stays
			b.loose[bg] = true
		}
	}
}

// stopBigrams are the bigrams inside the function words (有没有 → 有没,
// 没有), which no loose bigram may be.
var stopBigrams = func() map[string]bool {
	set := map[string]bool{}
	for _, w := range cjkStop {
		for _, bg := range bigrams(w) {
			set[bg] = true
		}
	}
	return set
}()

// isLoose reports whether a bigram across a function word may be a term.
func isLoose(bg string) bool {
	if strings.ContainsAny(bg, looseNever) || stopBigrams[bg] {
		return false
	}
	first, _ := utf8.DecodeRuneInString(bg)
	return !strings.ContainsRune(particles, first)
}

// cjk adds a CJK word (a run cut at function words).
func (b *queryBuilder) cjk(word string, w float64) {
	b.sources = append(b.sources, weighted{word: word, w: w})
	n := utf8.RuneCountInString(word)
	if n == 1 {
		if singleNouns[word] {
			b.term(piece{word, word}, true, w)
		}
		return
	}
	for _, bg := range bigrams(word) {
		b.term(piece{bg, bg}, false, w)
	}
	// A one-character noun inside a longer word (那张猫, 买了车) is searched
	// on its own as well: its bigrams with the characters around it are
	// rarely the ones stored.
	for _, r := range word {
		if c := string(r); singleNouns[c] {
			b.term(piece{c, c}, true, w)
		}
	}
	if n >= 3 && w > contextWeight {
		b.phrase(word)
	}
}

// expand adds, for the last utterance and the message just before it,
// the words the lexicons link each of its words to, at a lower weight:
// the hand-written concepts (lexicon.go) at expandWeight of the word's
// weight, the dictionaries' (dictionary.go) at dictWeight — Chinese
// near-synonyms, the word in the other language, English synonyms.
func (b *queryBuilder) expand() {
	l := usedLexicons()
	var d *dictionary
	if l.CEDICT || l.WordNet {
		d = dict()
	}
	sources := b.sources
	for i, s := range sources {
		if s.w < contextWeight {
			continue
		}
		if l.Hand {
			for _, sib := range conceptSiblings(s.word) {
				b.sibling(sib, s.w*expandWeight, false)
			}
		}
		if d == nil {
			continue
		}
		words := []string{s.word}
		if chars.HasCJK(s.word) {
			words = d.wordsIn(s.word)
		} else if s.next {
			words = append(words, s.word+" "+sources[i+1].word)
		}
		b.adding = true
		for _, word := range words {
			zh, en := d.siblings(word, l)
			for _, sib := range zh[:min(len(zh), maxDictSiblings)] {
				b.sibling(sib, s.w*dictWeight, false)
			}
			for _, sib := range en[:min(len(en), maxDictSiblings)] {
				b.sibling(sib, s.w*dictWeight, chars.HasCJK(word))
			}
		}
		b.adding = false
	}
}

// dictWeight is what a word the dictionaries link to weighs, as a share of
// the word it came from; maxDictSiblings bounds the links of one word of
// each kind (Chinese, English).
const (
	dictWeight      = 0.5
	maxDictSiblings = 8
)

// sibling adds a word a lexicon linked to at weight w: a Chinese word as
// its bigrams (a one-character noun as a prefix term), an English one as
// its stemmed words. An English word that translates a Chinese one
// (bridge) is a prefix term on its stem when the stem is long enough to
// say what it is: the gloss says "allergic", the memory "allergy".
func (b *queryBuilder) sibling(sib string, w float64, bridge bool) {
	if !chars.HasCJK(sib) {
		for _, p := range pieces(sib) {
			if isStopword(p.surface) || queryFraming[p.surface] {
				continue // a gloss's "in", "last": no word of the question's
			}
			if bridge && len(p.token) >= minBridgeStem {
				// The stem is its own surface: the index's tokenizer
				// stems a prefix query's text before it looks it up.
				b.term(piece{p.token, p.token}, true, w)
				continue
			}
			b.term(p, false, w)
		}
		return
	}
	if utf8.RuneCountInString(sib) == 1 {
		b.term(piece{sib, sib}, true, w)
		return
	}
	for _, bg := range bigrams(sib) {
		b.term(piece{bg, bg}, false, w)
	}
}

// minBridgeStem is the shortest stem a bridge searches as a prefix.
const minBridgeStem = 6

func (b *queryBuilder) query() Query {
	terms := b.terms
	slices.SortStableFunc(terms, func(x, y Term) int { return cmp.Compare(y.Weight, x.Weight) })
	if len(terms) > maxQueryTerms {
		terms = terms[:maxQueryTerms]
	}
	q := Query{Phrases: b.phr}
	if len(terms) > 0 {
		q.Terms = slices.Clip(terms) // the builder is done with them
	}
	return q
}

// piece is one token of text: as written (lowercased) and as scored.
type piece struct{ surface, token string }

// Tokens returns the tokens of text as the full-text index holds them,
// without a partition: CJK bigrams and each run's last character, and
// lowercased words, stemmed (porter, as the index's tokenizer stems them).
// Scoring in Go reads documents through it, so a term and a document agree.
func Tokens(text string) []string {
	ps := pieces(text)
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.token
	}
	return out
}

func pieces(text string) []piece {
	s := Index(text)
	var out []piece
	for i := 0; i < len(s); {
		if !isTokenByte(s[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isTokenByte(s[j]) {
			j++
		}
		lower := strings.ToLower(s[i:j])
		out = append(out, piece{lower, normalizeToken(lower)})
		i = j
	}
	return out
}

// normalizeToken stems a lowercased word token; CJK tokens pass as they
// are.
func normalizeToken(lower string) string {
	if len(lower) < 3 {
		return lower
	}
	for i := 0; i < len(lower); i++ {
		if c := lower[i]; c < 'a' || c > 'z' {
			return lower
		}
	}
	if st, ok := stems.Load(lower); ok {
		return st.(string)
	}
	st := porter.StemString(lower)
	// A word's stem never changes: remember it, within a bound (a flood
	// of new words costs stemming again, never memory).
	if stemCount.Add(1) <= maxStems {
		stems.Store(lower, st)
	}
	return st
}

// stems caches porter stems: scoring reads the same words in every
// candidate of every query.
var (
	stems     sync.Map
	stemCount atomic.Int64
)

const maxStems = 200_000

// MatchTerms returns the FTS5 MATCH expression that finds, within
// partition part, every row holding at least one of terms: each token
// quoted, a one-character CJK term as a prefix query, OR-ed. "" when terms
// is empty.
func MatchTerms(part string, terms []Term) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" OR ")
		}
		text := t.Surface
		if text == "" {
			text = t.Token
		}
		b.WriteString(quote(inPartition(part, text)))
		if t.Prefix {
			b.WriteByte('*')
		}
	}
	return b.String()
}

// manyRe finds a question for several things: what or which with the
// words after it ("what activities", "which two books", "what kinds of"),
// "how many", "in what ways".
var manyRe = regexp.MustCompile(`(?i)\b(?:what|which)((?:\s+[\w']+){1,3})|\b(how many|in what ways)\b`)

// AsksMany reports whether text asks for several things (Query.AsksMany):
// a plural noun follows what or which before any verb does.
func AsksMany(text string) bool {
	for _, m := range manyRe.FindAllStringSubmatch(text, -1) {
		if m[2] != "" {
			return true
		}
		for _, w := range strings.Fields(strings.ToLower(m[1])) {
			if questionVerbs[w] {
				break
			}
			// A word in -ss or -us is no plural ("class", "bus").
			if strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "'s") {
				return true
			}
		}
	}
	return false
}

// questionVerbs end the noun phrase after what or which.
var questionVerbs = wordSet(`is was are were do does did has have had can could will would should may might must`)
