package tokens

import (
	"unicode"
	"unicode/utf8"
)

// Estimate counts tokens without a vocabulary: it sorts the text into a few
// classes of runs (Han characters, English words by length, digit runs,
// punctuation runs, line breaks, ...) and adds a fitted weight for each.
// It is fast, allocation-free, and within the error that doc.go gives for
// each family. Non-empty text counts at least 1 token, so the zero Estimate
// counts any non-empty text as 1.
//
// Weights are in thousandths of a token, so that a Han character can cost
// 0.7 tokens without floating point; the total is rounded to the nearest
// token. Presets come from For; the fields are exported so that a
// deployment can supply weights fitted to a tokenizer of its own (see
// TestCalibrate for how the presets were fitted).
type Estimate struct {
	// Family names what the weights approximate; Name returns
	// "estimate:" + Family.
	Family string

	Han        int    // per Han character (CJK ideograph)
	KanaHangul int    // per kana or Hangul character
	CJKPunct   int    // per full-width, CJK or typographic punctuation mark (，。“”—…)
	Word       [4]int // per word of Latin letters, by length: 1–2, 3–5, 6–8, 9+
	NonASCII   int    // extra, per non-ASCII letter or mark inside a word (é, ж)
	DigitGroup int    // per group of up to three digits in a run of ASCII digits
	Digit      int    // per ASCII digit
	SpaceDigit int    // per run of digits after a space, which BPE pre-tokenizers leave on its own
	PunctRun   int    // per run of ASCII punctuation
	PunctChar  int    // per ASCII punctuation character
	SpaceRun   int    // per run of two or more spaces or tabs (indentation, alignment)
	LineBreak  int    // per run of whitespace holding a line break
	Symbol     int    // per other rune in the Basic Multilingual Plane (box drawing, arrows, ⚠)
	Astral     int    // per rune beyond it (emoji, rare Han) and per invalid byte
}

var _ Counter = Estimate{}

// Name reports the family the weights approximate.
func (e Estimate) Name() string { return "estimate:" + e.Family }

// Count estimates the number of tokens in s.
func (e Estimate) Count(s string) int {
	if s == "" {
		return 0
	}
	f := measure(s)
	v, w := f.vector(), e.weights()
	milli := 0
	for i := range v {
		milli += v[i] * w[i]
	}
	return max(1, (milli+500)/1000)
}

const nFeatures = 17

// weights and vector list the weights and the counts they weigh in the
// same order.
func (e *Estimate) weights() [nFeatures]int {
	return [nFeatures]int{e.Han, e.KanaHangul, e.CJKPunct,
		e.Word[0], e.Word[1], e.Word[2], e.Word[3], e.NonASCII,
		e.DigitGroup, e.Digit, e.SpaceDigit, e.PunctRun, e.PunctChar, e.SpaceRun, e.LineBreak, e.Symbol, e.Astral}
}

func (f *features) vector() [nFeatures]int {
	return [nFeatures]int{f.han, f.kanaHangul, f.cjkPunct,
		f.words[0], f.words[1], f.words[2], f.words[3], f.nonASCII,
		f.digitGroups, f.digits, f.spaceDigits, f.punctRuns, f.punctChars, f.spaceRuns, f.lineBreaks, f.symbols, f.astral}
}

// features are the counts Estimate weighs; TestCalibrate fits the weights
// to the same vector Count adds up.
type features struct {
	han, kanaHangul, cjkPunct int
	words                     [4]int
	nonASCII                  int
	digitGroups, digits       int
	spaceDigits               int
	punctRuns, punctChars     int
	spaceRuns, lineBreaks     int
	symbols, astral           int
}

// ASCII classes, looked up in a table: most text engram counts is ASCII.
const (
	clOther = iota // control characters: cost nothing
	clLower
	clUpper
	clDigit
	clSpace // space, tab
	clBreak // \n, \r, \v, \f
	clPunct
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range utf8.RuneSelf {
		switch {
		case c >= 'a' && c <= 'z':
			t[c] = clLower
		case c >= 'A' && c <= 'Z':
			t[c] = clUpper
		case c >= '0' && c <= '9':
			t[c] = clDigit
		case c == ' ' || c == '\t':
			t[c] = clSpace
		case c == '\n' || c == '\r' || c == '\v' || c == '\f':
			t[c] = clBreak
		case c > ' ' && c < 0x7f:
			t[c] = clPunct
		}
	}
	return t
}()

// measure makes one pass over s. Word boundaries follow the pre-tokenizers
// of the BPE tokenizers closely enough: a word is a run of letters that
// also ends where a capital follows a small letter (QueryContext is two
// words, as o200k splits it); digits, punctuation and whitespace each form
// their own runs.
func measure(s string) features {
	var f features
	word, digits, punct, spaces := 0, 0, 0, 0
	inBreak := false
	prevLower := false
	prevSpace := false // the rune before was a space or a tab
	endWord := func() {
		switch {
		case word == 0:
		case word <= 2:
			f.words[0]++
		case word <= 5:
			f.words[1]++
		case word <= 8:
			f.words[2]++
		default:
			f.words[3]++
		}
		word = 0
		prevLower = false
	}
	endDigits := func() {
		f.digitGroups += (digits + 2) / 3
		f.digits += digits
		digits = 0
	}
	endPunct := func() {
		if punct > 0 {
			f.punctRuns++
			f.punctChars += punct
			punct = 0
		}
	}
	endSpace := func() {
		if spaces >= 2 {
			f.spaceRuns++
		}
		spaces = 0
		inBreak = false
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			cl := asciiClass[c]
			if cl != clLower && cl != clUpper && word > 0 {
				endWord()
			}
			if cl != clDigit && digits > 0 {
				endDigits()
			}
			if cl != clPunct && punct > 0 {
				endPunct()
			}
			if cl != clSpace && cl != clBreak && (spaces > 0 || inBreak) {
				endSpace()
			}
			switch cl {
			case clLower:
				word++
				prevLower = true
			case clUpper:
				if prevLower {
					endWord()
				}
				word++
			case clDigit:
				if digits == 0 && prevSpace {
					f.spaceDigits++
				}
				digits++
			case clPunct:
				punct++
			case clSpace:
				spaces++
			case clBreak:
				if !inBreak {
					f.lineBreaks++
					inBreak = true
				}
				spaces = 0 // indentation is counted after the last break
			}
			prevSpace = cl == clSpace
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if digits > 0 {
			endDigits()
		}
		if punct > 0 {
			endPunct()
		}
		if spaces > 0 || inBreak {
			endSpace()
		}
		switch {
		case featHan(r):
			endWord()
			f.han++
		case featKanaHangul(r):
			endWord()
			f.kanaHangul++
		case featCJKPunct(r):
			endWord()
			f.cjkPunct++
		case r == utf8.RuneError && size == 1, r > 0xFFFF:
			endWord()
			f.astral++
		case unicode.IsLetter(r) || unicode.Is(unicode.Mn, r):
			// A non-ASCII letter continues a word (München, café) and
			// costs extra: BPE vocabularies hold fewer such pieces.
			word++
			prevLower = unicode.IsLower(r)
			f.nonASCII++
		case unicode.IsSpace(r):
			endWord()
			spaces++
		default:
			endWord()
			f.symbols++
		}
		prevSpace = unicode.IsSpace(r)
	}
	endWord()
	endDigits()
	endPunct()
	endSpace()
	return f
}

// The estimate's rune classes are byte ranges, not chars.IsHan and
// chars.IsCJK: the weights in estimates.go were fitted on these ranges
// (kana punctuation such as ・ counts with kana, 々 with CJK punctuation),
// and a class that changed would need a refit to mean the same cost.

func featHan(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || // CJK Unified Ideographs
		r >= 0x3400 && r <= 0x4DBF || // Extension A
		r >= 0xF900 && r <= 0xFAFF // Compatibility Ideographs
}

func featKanaHangul(r rune) bool {
	return r >= 0x3040 && r <= 0x30FF || // Hiragana, Katakana
		r >= 0x31F0 && r <= 0x31FF || // Katakana Phonetic Extensions
		r >= 0xAC00 && r <= 0xD7AF || // Hangul syllables
		r >= 0x1100 && r <= 0x11FF || r >= 0x3130 && r <= 0x318F // Hangul Jamo
}

func featCJKPunct(r rune) bool {
	return r >= 0x3000 && r <= 0x303F || // CJK Symbols and Punctuation: 、。「」《》
		r >= 0xFF00 && r <= 0xFFEF || // Halfwidth and Fullwidth Forms: ，！？（）
		r >= 0x2010 && r <= 0x205E // General Punctuation: — “ ” … ‘ ’
}
