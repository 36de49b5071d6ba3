package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/quiet"
)

// RecallSet is one user of a hand-written recall set (testdata/recall,
// FORMAT.md there): what engram would have stored, the sessions, and the
// questions an agent asks with the ids that answer them.
type RecallSet struct {
	File      string    `json:"-"`
	Namespace string    `json:"namespace"`
	User      string    `json:"user"`
	Lang      string    `json:"lang"`
	Now       time.Time `json:"now"`
	Memories  []struct {
		ID         string    `json:"id"`
		Kind       string    `json:"kind"`
		Category   string    `json:"category"`
		Subject    string    `json:"subject"`
		Predicate  string    `json:"predicate"`
		Content    string    `json:"content"`
		Importance float64   `json:"importance"`
		Time       time.Time `json:"time"`
	} `json:"memories"`
	Sessions []struct {
		ID    string    `json:"id"`
		Time  time.Time `json:"time"`
		Turns []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"turns"`
	} `json:"sessions"`
	Cases []RecallCase `json:"cases"`
}

// RecallCase is one question.
type RecallCase struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Query  string `json:"query"`
	Recent []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"recent_messages"`
	Gold []string `json:"gold"`
}

// LoadRecallSets reads every *.json of dir.
func LoadRecallSets(dir string) ([]*RecallSet, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no recall sets in %s", dir)
	}
	sort.Strings(files)
	var out []*RecallSet
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var s RecallSet
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		s.File = filepath.Base(f)
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, &s)
	}
	return out, nil
}

var (
	caseTypes = map[string]bool{"direct": true, "paraphrase": true, "dialogue": true, "long": true, "emotional": true,
		"time": true, "single_char": true, "cross_lingual": true, "multi": true}
	memoryKinds = map[string]bool{"fact": true, "preference": true, "rule": true, "skill": true, "error": true,
		"context": true, "identity": true}
	memoryCategories = map[string]bool{"identity": true, "config": true, "credential": true, "decision": true,
		"solution": true, "event": true, "conversation": true, "temp": true, "debug": true}
)

// check holds a set to what FORMAT.md promises: enough memories and turns,
// kinds and categories engram accepts, every gold id a memory or a turn
// that exists, every time before the set's now. A slip in a file written
// by hand would otherwise show only as a lower score, or as an ingest
// error that names an event rather than the file's line.
func (s *RecallSet) check() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if s.Namespace == "" || s.User == "" || (s.Lang != "zh" && s.Lang != "en") {
		bad("namespace, user and lang (zh or en) are required")
	}
	if len(s.Memories) < 50 {
		bad("%d memories, want ≥ 50", len(s.Memories))
	}
	turns := map[string]bool{}
	for _, sess := range s.Sessions {
		for i := range sess.Turns {
			turns[fmt.Sprintf("%s#%d", sess.ID, i)] = true
		}
		if !sess.Time.Before(s.Now) {
			bad("session %s at %v, not before now %v", sess.ID, sess.Time, s.Now)
		}
	}
	if len(s.Sessions) < 6 || len(turns) < 80 {
		bad("%d sessions, %d turns; want ≥ 6 and ≥ 80", len(s.Sessions), len(turns))
	}
	mems := map[string]bool{}
	for _, m := range s.Memories {
		if mems[m.ID] {
			bad("memory %s twice", m.ID)
		}
		mems[m.ID] = true
		if !memoryKinds[m.Kind] || !memoryCategories[m.Category] {
			bad("memory %s: kind %q, category %q (FORMAT.md lists both)", m.ID, m.Kind, m.Category)
		}
		if m.Time.IsZero() || !m.Time.Before(s.Now.Add(time.Second)) {
			bad("memory %s at %v, not before now %v", m.ID, m.Time, s.Now)
		}
	}
	for _, c := range s.Cases {
		if !caseTypes[c.Type] || strings.TrimSpace(c.Query) == "" || len(c.Gold) == 0 {
			bad("case %s: type %q, query %q, gold %v", c.ID, c.Type, c.Query, c.Gold)
		}
		for _, g := range c.Gold {
			if !mems[g] && !turns[g] {
				bad("case %s: gold %s is neither a memory nor a turn of the set", c.ID, g)
			}
		}
	}
	return errors.Join(errs...)
}

// memoryID is the id a set's memory is stored under: memory ids are one
// namespace's, and two users of a namespace may both have an "m01".
func (s *RecallSet) memoryID(id string) string { return s.User + "-" + id }

// LoadRecall ingests every set through the HTTP API: each memory as a
// memory.added event with its own id, each turn as turn.recorded, at the
// times the set gives.
func LoadRecall(ctx context.Context, e *Engram, sets []*RecallSet) error {
	var top uint64
	for _, s := range sets {
		var raws []json.RawMessage
		add := func(id, typ, subject string, at time.Time, data any) error {
			ev := map[string]any{"specversion": "1.0", "id": s.File + "/" + id, "source": "recall-bench", "type": typ,
				"namespace": s.Namespace, "user": s.User, "time": at.UTC().Format(time.RFC3339), "data": data}
			if subject != "" {
				ev["subject"] = subject
			}
			raw, err := json.Marshal(ev)
			raws = append(raws, raw)
			return err
		}
		for _, m := range s.Memories {
			d := events.MemoryAdded{MemoryID: s.memoryID(m.ID), Kind: m.Kind, Category: m.Category, Subject: m.Subject,
				Predicate: m.Predicate, Content: m.Content, Importance: m.Importance, Confidence: 1}
			if err := add("m/"+m.ID, events.TypeMemoryAdded, "", m.Time, d); err != nil {
				return err
			}
		}
		for _, sess := range s.Sessions {
			for i, t := range sess.Turns {
				d := events.TurnRecorded{SessionID: sess.ID, TurnIndex: i, Role: t.Role, Content: t.Content}
				if err := add(fmt.Sprintf("t/%s/%d", sess.ID, i), events.TypeTurnRecorded, sess.ID, sess.Time.Add(time.Duration(i)*time.Minute), d); err != nil {
					return err
				}
			}
		}
		for i := 0; i < len(raws); i += 500 {
			body, _ := json.Marshal(raws[i:min(i+500, len(raws))])
			seq, err := e.Post(ctx, "application/cloudevents-batch+json", body)
			if err != nil {
				return fmt.Errorf("load %s: %w", s.File, err)
			}
			top = max(top, seq)
		}
	}
	return e.WaitProjected(ctx, top)
}

// RecallScores are recall@k averaged over cases.
type RecallScores struct {
	N      int
	At5    float64
	At10   float64
	ByType map[string][3]float64 // type → cases, recall@5 sum, recall@10 sum
	// ByBlock counts gold items by the block they are looked for in
	// ("memories", "turns"): items, found at 5, found at 10.
	ByBlock map[string][3]float64
}

// addItems counts the gold items of one case by block.
func (r *RecallScores) addItems(gold, mems, turns []string, profile map[string]bool) {
	if r.ByBlock == nil {
		r.ByBlock = map[string][3]float64{}
	}
	for _, g := range gold {
		block := "memories"
		if strings.Contains(g, "#") {
			block = "turns"
		}
		at5, at10 := recallAt([]string{g}, mems, turns, profile)
		b := r.ByBlock[block]
		r.ByBlock[block] = [3]float64{b[0] + 1, b[1] + at5, b[2] + at10}
	}
}

func (r *RecallScores) add(typ string, at5, at10 float64) {
	if r.ByType == nil {
		r.ByType = map[string][3]float64{}
	}
	r.N++
	r.At5 += at5
	r.At10 += at10
	t := r.ByType[typ]
	r.ByType[typ] = [3]float64{t[0] + 1, t[1] + at5, t[2] + at10}
}

func (r RecallScores) mean() (float64, float64) {
	if r.N == 0 {
		return 0, 0
	}
	return r.At5 / float64(r.N), r.At10 / float64(r.N)
}

// RecallReport is one split's figures per language.
type RecallReport struct {
	Engram, BM25 map[string]*RecallScores // by language
}

// EvaluateRecall asks every case through /v1/context and scores it next to
// a plain BM25 over the same user's memories and turns (character bigrams
// for Chinese, lowercased words for English), computed in the same run.
//
// A gold id is a memory or a turn; each is looked for among the results of
// its own kind (the memories block, the turns block), at rank k. A memory
// in the core-profile block is in every prompt, so it counts as found, for
// engram and for BM25 alike.
//
// misses, when not nil, gets each case engram misses at 5, with both
// rankings and the signals of engram's memories: for tuning on the dev
// split (-recall-misses), never on the test.
func EvaluateRecall(ctx context.Context, e *Engram, sets []*RecallSet, misses io.Writer) (*RecallReport, error) {
	rep := &RecallReport{Engram: map[string]*RecallScores{}, BM25: map[string]*RecallScores{}}
	for _, s := range sets {
		if rep.Engram[s.Lang] == nil {
			rep.Engram[s.Lang], rep.BM25[s.Lang] = &RecallScores{}, &RecallScores{}
		}
		base := newBaseline(s)
		// The cases are asked on the set's own day: engram ranks by age,
		// and "last week" means the week before it.
		if !s.Now.IsZero() {
			e.App.SetRetrievalClock(func() time.Time { return s.Now })
		}
		for _, c := range s.Cases {
			mems, turns, profile, signals, err := askContext(ctx, e, s, c, misses != nil)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", s.File, c.ID, err)
			}
			// What this question used is reinforced before the next
			// one is asked, as the access log's flush would do between
			// an agent's turns; settled here, every run scores alike.
			if err := e.App.SettleAccess(ctx); err != nil {
				return nil, fmt.Errorf("%s %s: settle accesses: %w", s.File, c.ID, err)
			}
			a5, a10 := recallAt(c.Gold, mems, turns, profile)
			rep.Engram[s.Lang].add(c.Type, a5, a10)
			rep.Engram[s.Lang].addItems(c.Gold, mems, turns, profile)
			bm, bt := base.rank(c)
			b5, b10 := recallAt(c.Gold, bm, bt, profile)
			rep.BM25[s.Lang].add(c.Type, b5, b10)
			rep.BM25[s.Lang].addItems(c.Gold, bm, bt, profile)
			if misses != nil && a5 < 1 {
				top := func(l []string) []string { return l[:min(len(l), 8)] }
				fmt.Fprintf(misses, "%s %s %s engram@5 %.2f bm25@5 %.2f gold %v\n  query %q recent %d\n  engram mems %v turns %v\n  bm25   mems %v turns %v\n",
					s.File, c.ID, c.Type, a5, b5, c.Gold, c.Query, len(c.Recent), top(mems), top(turns), top(bm), top(bt))
				for i, sig := range signals[:min(len(signals), 8)] {
					fmt.Fprintf(misses, "    %s %v\n", mems[i], sig)
				}
			}
		}
	}
	e.App.SetRetrievalClock(time.Now)
	return rep, nil
}

// Write prints the report.
func (r *RecallReport) Write(w io.Writer, split string) {
	for _, lang := range []string{"zh", "en"} {
		en, bm := r.Engram[lang], r.BM25[lang]
		if en == nil {
			continue
		}
		e5, e10 := en.mean()
		b5, b10 := bm.mean()
		fmt.Fprintf(w, "recall %s %s (%d cases): engram recall@5=%.3f recall@10=%.3f | BM25 recall@5=%.3f recall@10=%.3f | ratio@5 %.2f\n",
			split, lang, en.N, e5, e10, b5, b10, e5/math.Max(b5, 1e-9))
		var types []string
		for t := range en.ByType {
			types = append(types, t)
		}
		sort.Strings(types)
		for _, t := range types {
			x, y := en.ByType[t], bm.ByType[t]
			fmt.Fprintf(w, "  %-13s n=%3.0f  engram %.2f / %.2f   bm25 %.2f / %.2f\n", t, x[0], x[1]/x[0], x[2]/x[0], y[1]/y[0], y[2]/y[0])
		}
		for _, b := range []string{"memories", "turns"} {
			x, y := en.ByBlock[b], bm.ByBlock[b]
			if x[0] > 0 {
				fmt.Fprintf(w, "  gold %-8s n=%3.0f  engram %.2f / %.2f   bm25 %.2f / %.2f\n", b, x[0], x[1]/x[0], x[2]/x[0], y[1]/y[0], y[2]/y[0])
			}
		}
	}
}

func recallAt(gold, mems, turns []string, profile map[string]bool) (float64, float64) {
	if len(gold) == 0 {
		return 0, 0
	}
	var at5, at10 float64
	for _, g := range gold {
		list := mems
		if strings.Contains(g, "#") {
			list = turns
		}
		r := indexOf(list, g)
		switch {
		case profile[g] || (r >= 0 && r < 5):
			at5++
			at10++
		case r >= 0 && r < 10:
			at10++
		}
	}
	return at5 / float64(len(gold)), at10 / float64(len(gold))
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// askContext asks /v1/context as an agent would before its next turn and
// returns the memories and turns blocks in order (turns as "session#index")
// and the profile block's ids; with explain, each memory's signals too.
func askContext(ctx context.Context, e *Engram, s *RecallSet, c RecallCase, explain bool) (mems, turns []string, profile map[string]bool, signals []map[string]float64, err error) {
	body, _ := json.Marshal(map[string]any{"namespace": s.Namespace, "user": s.User, "query": c.Query,
		"recent_messages": c.Recent, "force": true, "turn_limit": 50, "budget_tokens": 200000, "explain": explain})
	req, err := http.NewRequestWithContext(ctx, "POST", e.base+"/v1/context", bytes.NewReader(body))
	if err != nil {
		return nil, nil, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.hc.Do(req)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	defer quiet.Close(resp.Body)
	if resp.StatusCode != 200 {
		raw, _ := io.ReadAll(resp.Body)
		return nil, nil, nil, nil, fmt.Errorf("context: %d %s", resp.StatusCode, raw)
	}
	var out struct {
		Blocks struct {
			Profile, Memories []struct {
				ID      string             `json:"id"`
				Signals map[string]float64 `json:"signals"`
			}
			Turns []struct {
				SessionID string `json:"session_id"`
				TurnIndex *int   `json:"turn_index"`
			} `json:"turns"`
		} `json:"blocks"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, nil, nil, nil, err
	}
	profile = map[string]bool{}
	for _, p := range out.Blocks.Profile {
		profile[strings.TrimPrefix(p.ID, s.User+"-")] = true
	}
	for _, m := range out.Blocks.Memories {
		mems = append(mems, strings.TrimPrefix(m.ID, s.User+"-"))
		signals = append(signals, m.Signals)
	}
	for _, t := range out.Blocks.Turns {
		if t.TurnIndex != nil {
			turns = append(turns, fmt.Sprintf("%s#%d", t.SessionID, *t.TurnIndex))
		}
	}
	return mems, turns, profile, signals, nil
}

// baseline is plain BM25 (k1 1.2, b 0.75) over one user's memories and
// turns, each a collection of its own: character bigrams for Chinese text,
// lowercased words otherwise. The query is the last utterance with the
// recent messages, as an agent that passes its dialogue would send it.
type baseline struct {
	mems, turns bm25Index
}

type bm25Index struct {
	ids  []string
	docs []map[string]int
	lens []int
	df   map[string]int
	avg  float64
}

func newBaseline(s *RecallSet) *baseline {
	b := &baseline{}
	for _, m := range s.Memories {
		b.mems.add(m.ID, m.Content)
	}
	for _, sess := range s.Sessions {
		for i, t := range sess.Turns {
			b.turns.add(fmt.Sprintf("%s#%d", sess.ID, i), t.Content)
		}
	}
	b.mems.finish()
	b.turns.finish()
	return b
}

func (x *bm25Index) add(id, text string) {
	toks := plainTokens(text)
	tf := map[string]int{}
	for _, t := range toks {
		tf[t]++
	}
	x.ids = append(x.ids, id)
	x.docs = append(x.docs, tf)
	x.lens = append(x.lens, len(toks))
}

func (x *bm25Index) finish() {
	x.df = map[string]int{}
	total := 0
	for i, d := range x.docs {
		for t := range d {
			x.df[t]++
		}
		total += x.lens[i]
	}
	if len(x.docs) > 0 {
		x.avg = float64(total) / float64(len(x.docs))
	}
}

func (x *bm25Index) rank(query []string) []string {
	n := float64(len(x.docs))
	type scored struct {
		i int
		s float64
	}
	var out []scored
	for i, d := range x.docs {
		s := 0.0
		for _, t := range query {
			f := float64(d[t])
			if f == 0 {
				continue
			}
			df := float64(x.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			s += idf * f * 2.2 / (f + 1.2*(0.25+0.75*float64(x.lens[i])/x.avg))
		}
		if s > 0 {
			out = append(out, scored{i, s})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].s > out[b].s })
	ids := make([]string, len(out))
	for k, o := range out {
		ids[k] = x.ids[o.i]
	}
	return ids
}

func (b *baseline) rank(c RecallCase) (mems, turns []string) {
	text := c.Query
	for _, m := range c.Recent {
		text += "\n" + m.Content
	}
	q := plainTokens(text)
	return b.mems.rank(q), b.turns.rank(q)
}

// plainTokens is the baseline's tokenizer: lowercased words, and every
// pair of adjacent Han characters.
func plainTokens(text string) []string {
	var out []string
	var word []rune
	var prevHan rune
	flush := func() {
		if len(word) > 0 {
			out = append(out, strings.ToLower(string(word)))
			word = word[:0]
		}
	}
	for _, r := range text {
		if chars.IsHan(r) {
			flush()
			if prevHan != 0 {
				out = append(out, string([]rune{prevHan, r}))
			}
			prevHan = r
			continue
		}
		prevHan = 0
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			word = append(word, r)
		} else {
			flush()
		}
	}
	flush()
	return out
}
