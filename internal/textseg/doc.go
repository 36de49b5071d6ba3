// Package textseg makes SQLite FTS5 full-text search work for Chinese,
// Japanese and Korean as well as English, and turns whatever a user types
// into a query that is searched as text.
//
// FTS5's unicode61 tokenizer does not split Han text: 我住在北京市朝阳区 is one
// token, so a search for 北京 never finds it. textseg splits CJK in Go before
// the text reaches SQLite, the same way when storing and when searching:
//
//   - Tokenizer is the tokenize= argument of every FTS5 table (porter,
//     unicode61, remove_diacritics 2; see its doc for why).
//   - Index turns text into what is stored: each run of CJK characters
//     becomes its overlapping character bigrams plus its last character
//     (北京市 → "北京 京市 市"); other words are left to unicode61.
//   - Match turns user text into a MATCH expression: every term a quoted
//     string, OR-ed, a CJK word as the phrase of its bigrams, a single CJK
//     character as a prefix query, stopwords dropped.
//   - Terms returns the normalized terms Match searches for.
//   - Partition, IndexIn and MatchIn do the same inside a partition (one
//     user): every token is written with the partition's prefix, so a
//     query reads only that partition's posting lists and BM25 counts
//     only its text. engram's tables are all partitioned this way.
//   - Understand reads what an agent sends (the last utterance and its
//     recent messages) into a Query of weighted terms, the one reading
//     every recall path searches with: CJK bigrams each a term, phrases a
//     bonus, one-character nouns as prefix terms, stemmed words, the
//     words the lexicons link them to at a lower weight (dictionary.go:
//     CC-CEDICT's Chinese near-synonyms and zh↔en bridges, WordNet's
//     English synonyms; lexicon.go: a short hand-written list), and no
//     cap that drops the end; it also marks a question that asks when
//     (AsksWhen), whose answer is likelier a turn that says when
//     (MentionsTime). MatchTerms turns its terms into a MATCH
//     that finds candidates; Tokens reads a document as the index holds
//     it, and Scorer ranks candidates by BM25 in Go with statistics the
//     caller takes from one user's own data (Select keeps the most
//     informative terms by them). Go's porter stemmer agrees with SQLite's
//     on the index's vocabulary (TestTokensAgreeWithFTS5).
//
// # Why bigrams and not a dictionary
//
// Dictionary segmentation (jieba and its Go port gse) gives fewer, more
// meaningful tokens but costs a large dictionary in memory, seconds at
// start-up and far slower segmentation, and it misses substrings it cut
// differently (北京 inside a document it segmented as 北京市). Bigrams cost
// nothing, find every substring of two or more characters, and need no data.
// Measured with the nested, separate module dictbench (a measurement tool
// only, not part of engram) on 4 MB of documents built from the seed design
// documents, on the 2-core shared development machine (timings varied by up
// to 2x between runs with the machine's load):
//
//	cd internal/textseg/dictbench && go run . -seeds ../../../../shared/seeds -mb 4
//
//	                               bigrams (Index)   gse v0.80.3, dictionary "zh"
//	dictionary load                none              3.1-5.7 s
//	live heap after load (GC'd)    0                 +196 MB ("zh_s" alone: +128 MB)
//	segmentation                   62-115 MB/s       0.7-1.2 MB/s (Cut with HMM)
//	allocation per 4 MB            8 MB              801 MB
//	FTS5 tokens stored             710,769           515,941 (1.38x fewer)
//	FTS5 index (f_data + f_idx)    2.22 MB           1.54 MB (1.44x smaller)
//	300 substring queries, 2-4 Han characters, judged by strings.Contains:
//	  recall                       100%              93.7% (CutSearch: 98.9%)
//	  precision, phrase only       100%              100%
//	  precision, Match             82.4%             -
//	  precision of the 10 best     100%              100%
//
// BenchmarkIndex (go test -bench Index ./internal/textseg/) gives 175-185 MB/s
// on Chinese text with one allocation, and about 2 GB/s on English text,
// which is returned without allocating. Match's lower precision is by
// design: a query of three or more CJK characters also ORs its bigrams, so
// that a long question without spaces still finds rows sharing part of it;
// BM25 ranks those below exact matches, as the precision of the ten best
// shows. The seed documents are small, so the corpus repeats their lines and
// has few distinct terms; on more varied text the bigram index grows faster
// than the word index, though the token counts above, not the vocabulary,
// dominate its size.
//
// # Why partitions are in the tokens
//
// With a partition column ANDed to the query, FTS5 still reads and scores
// every posting of every query term in the whole table before the AND drops
// other users' rows: on 1M turns of 1,000 users, a query of common words
// took 95 ms at p95 for a user holding 1,000 turns. With the partition in
// every token, each user has posting lists of their own (/v1/context over
// 100k memories and 1M turns: p95 102 ms before, about 5 ms after, with
// the other read-path changes of the same work); see Partition for
// why the prefix is digits (the porter stemmer) and why a collision is
// harmless. The cost is 13 bytes a token before FTS5's prefix compression.
//
// # What it must never do
//
// Let user text reach MATCH unquoted: AND, OR, NOT, NEAR, column filters,
// '*', '^', parentheses and stray quotes are all searched as words or
// dropped. Depend on anything but the standard library, or segment by a
// dictionary: Index runs on every ingested turn, in every binary. (The
// expansion tables, lexicon/, are read once, on a query's first use:
// about 20 MB of heap and a fraction of a second; indexing never reads
// them.) Be used on one side only: a table filled by Index must be
// searched with Match and created with Tokenizer, or searches silently miss;
// a table filled by IndexIn is searched with MatchIn and the same partition.
//
// Text is not Unicode-normalized (that needs golang.org/x/text): a composed
// が and a decomposed か+U+3099 do not match each other; simplified and
// traditional characters (东/東) are different characters. Other scripts
// written without spaces (Thai, Lao, Khmer, Myanmar) are left to unicode61,
// which keeps a whole run as one token.
//
// # Concurrency
//
// All functions are pure and safe for concurrent use; the package has no
// mutable state.
//
// # Testing
//
// Tests run Index and Match against a real in-memory SQLite FTS5 table
// (modernc.org/sqlite, test-only): words found inside Chinese sentences,
// stemming, mixed script, no matches across separate characters, hostile
// queries that must run and find their text, and checks that FTS5 keeps every
// CJK rune and every bigram token exactly as Index wrote it. FuzzMatch and
// FuzzIndex (seed corpora in testdata/fuzz) check that any input gives an
// expression FTS5 accepts and that a row holding the same text is found;
// FuzzMatchIn also that another partition's row holding it is not. Every
// token FTS5 stores from IndexIn carries the partition, and MatchIn finds
// what Match finds over the partition's rows alone.
// TestImportsOnlyStandardLibrary keeps the package free of dependencies.
package textseg
