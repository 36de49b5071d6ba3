package bench

import (
	"math/rand/v2"
	"strings"
)

// corpus makes reproducible conversational text in English and Chinese
// with a Zipfian vocabulary, so that posting lists have the skew real text
// has (a few very common words, a long tail).
type corpus struct {
	rng   *rand.Rand
	zipfE *rand.Zipf
	zipfC *rand.Zipf
	en    []string
	zh    []string
}

var commonEnglish = strings.Fields(`the be to of and a in that have I it for not on with he as you do at this but his
by from they we say her she or an will my one all would there their what so up out if about who get which go me when
make can like time no just him know take people into year your good some could them see other than then now look
only come its over think also back after use two how our work first well way even new want because any these give day
most us deploy service database python golang release meeting customer invoice kubernetes docker migration schema
coffee travel weekend project budget design review bug fix test latency memory cache queue stream index search query
server client token model prompt agent session user assistant schedule deadline launch report metric dashboard alert`)

func newCorpus(seed uint64) *corpus {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c := &corpus{rng: rng}
	c.en = append(c.en, commonEnglish...)
	for i := 0; len(c.en) < 20000; i++ {
		c.en = append(c.en, syllables(rng, 2+rng.IntN(3)))
	}
	for len(c.zh) < 8000 {
		c.zh = append(c.zh, string([]rune{rune(0x4E00 + rng.IntN(3500)), rune(0x4E00 + rng.IntN(3500))}))
	}
	c.zipfE = rand.NewZipf(rng, 1.1, 2, uint64(len(c.en)-1))
	c.zipfC = rand.NewZipf(rng, 1.1, 2, uint64(len(c.zh)-1))
	return c
}

func syllables(rng *rand.Rand, n int) string {
	const cons, vow = "bcdfghklmnprstvz", "aeiou"
	var b strings.Builder
	for range n {
		b.WriteByte(cons[rng.IntN(len(cons))])
		b.WriteByte(vow[rng.IntN(len(vow))])
	}
	return b.String()
}

// sentence is a turn's text: mostly English, a fifth Chinese.
func (c *corpus) sentence() string {
	if c.rng.IntN(5) == 0 {
		n := 8 + c.rng.IntN(20)
		var b strings.Builder
		for range n {
			b.WriteString(c.zh[c.zipfC.Uint64()])
		}
		b.WriteString("。")
		return b.String()
	}
	n := 8 + c.rng.IntN(25)
	words := make([]string, n)
	for i := range words {
		words[i] = c.en[c.zipfE.Uint64()]
	}
	return strings.Join(words, " ") + "."
}

// query is what a user might search: one to three words of either language.
func (c *corpus) query() string {
	if c.rng.IntN(5) == 0 {
		return c.zh[c.zipfC.Uint64()%2000]
	}
	n := 1 + c.rng.IntN(3)
	words := make([]string, n)
	for i := range words {
		words[i] = c.en[c.zipfE.Uint64()%5000]
	}
	return strings.Join(words, " ")
}
