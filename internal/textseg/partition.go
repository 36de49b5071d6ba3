package textseg

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"
)

// Partition returns the token prefix of partition key (engram keys one per
// namespace and user): twelve decimal digits from a hash of key.
//
// A contentless FTS5 table keeps one posting list per token for the whole
// table. With a partition column ANDed to the query, FTS5 still reads and
// scores every posting of every query term across all partitions before the
// AND drops the others' rows, so a query's cost grows with the whole table
// and BM25's document frequencies count other partitions' text. Written
// into every token instead (IndexIn, MatchIn), the partition splits each
// posting list: a query reads only its own partition's postings, and a
// term's document frequency is its partition's.
//
// Digits, because the tokenizer's porter stemmer reads a word's measure
// and vowels from its start, and leading consonants change neither: with a
// prefix of digits, which it treats as consonants, a word stems as it would
// alone (words of one or two letters, which porter leaves alone, are now
// long enough to stem: "is" and "i" become one token). Decimal digits have
// no case to fold either. A fixed length makes tokens of different
// partitions distinct. 40 bits of hash may collide once in a million
// partitions; two partitions that collide share posting lists, which costs
// speed and skews ranking but is no leak, as long as the caller still
// filters rows by the partition's own columns.
func Partition(key string) string {
	h := sha256.Sum256([]byte(key))
	return fmt.Sprintf("%012d", binary.BigEndian.Uint64(h[:8])%1_000_000_000_000)
}

// IndexIn is Index with every token in partition part: it returns the
// tokens FTS5 would read from Index(text), each prefixed with part and
// separated by single spaces. Search it with MatchIn and the same part.
func IndexIn(part, text string) string {
	return inPartition(part, Index(text))
}

// MatchIn is Match for a column filled by IndexIn with partition part: the
// same expression, with every token of every phrase prefixed. It finds only
// rows indexed in part.
func MatchIn(part, query string) string {
	return match(part, query)
}

// inPartition prefixes every token of s with part. s is Index output or a
// phrase Match builds from it, in which every byte at or above 0x80
// belongs to a word rune (Index turned the others into spaces), so a token
// is a run of ASCII letters and digits and such bytes, as unicode61 reads
// it; everything else separates tokens.
func inPartition(part, s string) string {
	if part == "" {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/4*(len(part)+1))
	for i := 0; i < len(s); {
		if !isTokenByte(s[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isTokenByte(s[j]) {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(part)
		b.WriteString(s[i:j])
		i = j
	}
	return b.String()
}

func isTokenByte(c byte) bool {
	return c >= 0x80 || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
