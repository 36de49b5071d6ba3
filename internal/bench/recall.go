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
	"slices"
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
	ID     string          `json:"id"`
	Type   string          `json:"type"`
	Query  string          `json:"query"`
	Recent []RecallMessage `json:"recent_messages"`
	Gold   []string        `json:"gold"`
}

// RecallMessage is one of the messages before a case's question.
type RecallMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
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
		"time": true, "single_char": true, "cross_lingual": true, "multi": true, "window": true}
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

// LoadCrossSets reads the translations of dir's sets (dir/xlang/, one
// file per set under the set's own name, FORMAT.md): each gives a set of
// the same user with the translated cases, in the language they are
// asked in, their types and gold from the cases they translate.
func LoadCrossSets(dir string, sets []*RecallSet) ([]*RecallSet, error) {
	files, err := filepath.Glob(filepath.Join(dir, "xlang", "*.json"))
	if err != nil {
		return nil, err
	}
	var out []*RecallSet
	for _, f := range files {
		i := slices.IndexFunc(sets, func(s *RecallSet) bool { return s.File == filepath.Base(f) })
		if i < 0 {
			return nil, fmt.Errorf("%s: no set %s in %s to translate", f, filepath.Base(f), dir)
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var tr struct {
			Lang  string       `json:"lang"`
			Cases []RecallCase `json:"cases"`
		}
		if err := json.Unmarshal(raw, &tr); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		base := sets[i]
		if tr.Lang == base.Lang || (tr.Lang != "zh" && tr.Lang != "en") {
			return nil, fmt.Errorf("%s: lang %q: want the other language than the set's %q", f, tr.Lang, base.Lang)
		}
		x := *base
		x.Lang, x.Cases = tr.Lang, nil
		var errs []error
		for _, c := range tr.Cases {
			j := slices.IndexFunc(base.Cases, func(o RecallCase) bool { return o.ID == c.ID })
			han := strings.IndexFunc(c.Query, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0
			switch {
			case j < 0:
				errs = append(errs, fmt.Errorf("case %s: not a case of %s", c.ID, base.File))
			case strings.TrimSpace(c.Query) == "" || han != (tr.Lang == "zh"):
				errs = append(errs, fmt.Errorf("case %s: query %q is not written in %s", c.ID, c.Query, tr.Lang))
			default:
				c.Type, c.Gold = base.Cases[j].Type, base.Cases[j].Gold
				x.Cases = append(x.Cases, c)
			}
		}
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, &x)
	}
	return out, nil
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
	// Chance is recall@5 summed over cases for a ranking drawn at random.
	Chance float64
	// Gold and Kept count, for a request with a token budget, the gold
	// items and those the fitted block holds.
	Gold, Kept float64
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

// KeptShare is the share of gold items the fitted block held.
func (r RecallScores) KeptShare() float64 {
	if r.Gold == 0 {
		return 0
	}
	return r.Kept / r.Gold
}

// RecallReport is one split's figures per language, for one way of
// asking.
type RecallReport struct {
	Engram, BM25 map[string]*RecallScores // by language
	// Vectors ranks the memories by their vectors' cosine with the
	// query's alone (with RecallAsk.Vectors): what the semantic path
	// would find without full text.
	Vectors map[string]*RecallScores
}

// RecallStyle is how a case is asked.
type RecallStyle string

const (
	// StyleAgent asks as an agent does: the last utterance as the query,
	// the messages before it as recent_messages.
	StyleAgent RecallStyle = "agent"
	// StyleWhole asks with the whole window, the recent messages then the
	// last utterance, as one query.
	StyleWhole RecallStyle = "whole"
	// StyleLong asks with a long window as one query: the windows of the
	// set's longWindow cases before this one (their recent messages and
	// questions), then this case's. An agent's window often holds the
	// topics before the one asked about; the words of all of them are
	// what a plain BM25 over the window searches with.
	StyleLong RecallStyle = "long"
	// StyleCross asks the cases translated into the other language
	// (<split>/xlang/, FORMAT.md): memories in one language, questions in
	// the other.
	StyleCross RecallStyle = "cross"
)

// RecallAsk says how the cases of a run are asked: the style, and the
// token budget (0: the whole ranking, 200,000 tokens and 50 turns, for
// recall@k; else an agent's budget, whose fitted block is what counts).
type RecallAsk struct {
	Style  RecallStyle
	Budget int
	// Vectors: engram has the test embeddings endpoint; score the
	// vectors alone beside it.
	Vectors bool
}

// longWindow is how many cases before a case StyleLong's window holds.
const longWindow = 4

// question is what case i of s sends as query and recent_messages in a
// style.
func (s *RecallSet) question(i int, style RecallStyle) (string, []RecallMessage) {
	c := s.Cases[i]
	var window []RecallCase
	switch style {
	case StyleWhole:
		window = []RecallCase{c}
	case StyleLong:
		window = s.Cases[max(0, i-longWindow) : i+1]
	default:
		return c.Query, c.Recent
	}
	var parts []string
	for _, w := range window {
		for _, m := range w.Recent {
			parts = append(parts, m.Content)
		}
		parts = append(parts, w.Query)
	}
	return strings.Join(parts, "\n"), nil
}

// EvaluateRecall asks every case through /v1/context and scores it next to
// a plain BM25 over the same user's memories and turns (character bigrams
// for Chinese, lowercased words for English), computed in the same run
// over all the words sent.
//
// A gold id is a memory or a turn; each is looked for among the results of
// its own kind (the memories block, the turns block), at rank k. A memory
// in the core-profile block is in every prompt, so it counts as found, for
// engram and for BM25 alike. With a budget (ask.Budget), what counts is
// whether each gold item is in the block engram fitted to it.
//
// misses, when not nil, gets each case engram misses at 5, with both
// rankings and the signals of engram's memories: for tuning on the dev
// split (-recall-misses), never on the test.
func EvaluateRecall(ctx context.Context, e *Engram, sets []*RecallSet, ask RecallAsk, misses io.Writer) (*RecallReport, error) {
	rep := &RecallReport{Engram: map[string]*RecallScores{}, BM25: map[string]*RecallScores{}, Vectors: map[string]*RecallScores{}}
	for _, s := range sets {
		if rep.Engram[s.Lang] == nil {
			rep.Engram[s.Lang], rep.BM25[s.Lang], rep.Vectors[s.Lang] = &RecallScores{}, &RecallScores{}, &RecallScores{}
		}
		base := newBaseline(s)
		// The cases are asked on the set's own day: engram ranks by age,
		// and "last week" means the week before it.
		if !s.Now.IsZero() {
			e.App.SetRetrievalClock(func() time.Time { return s.Now })
		}
		for i, c := range s.Cases {
			query, recent := s.question(i, ask.Style)
			got, err := askContext(ctx, e, s, query, recent, ask.Budget, misses != nil)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", s.File, c.ID, err)
			}
			// What this question used is reinforced before the next
			// one is asked, as the access log's flush would do between
			// an agent's turns; settled here, every run scores alike.
			if err := e.App.SettleAccess(ctx); err != nil {
				return nil, fmt.Errorf("%s %s: settle accesses: %w", s.File, c.ID, err)
			}
			en := rep.Engram[s.Lang]
			if ask.Budget > 0 {
				for _, g := range c.Gold {
					en.Gold++
					if got.profile[g] || slices.Contains(got.mems, g) || slices.Contains(got.turns, g) {
						en.Kept++
					}
				}
				continue
			}
			a5, a10 := recallAt(c.Gold, got.mems, got.turns, got.profile)
			en.add(c.Type, a5, a10)
			en.addItems(c.Gold, got.mems, got.turns, got.profile)
			en.Chance += s.chanceAt5(c.Gold)
			if ask.Vectors {
				vm := vectorsAlone(s, query)
				v5, v10 := recallAt(c.Gold, vm, nil, got.profile)
				rep.Vectors[s.Lang].add(c.Type, v5, v10)
				rep.Vectors[s.Lang].addItems(c.Gold, vm, nil, got.profile)
			}
			bm, bt := base.rank(query, recent)
			b5, b10 := recallAt(c.Gold, bm, bt, got.profile)
			rep.BM25[s.Lang].add(c.Type, b5, b10)
			rep.BM25[s.Lang].addItems(c.Gold, bm, bt, got.profile)
			if misses != nil && a5 < 1 {
				top := func(l []string) []string { return l[:min(len(l), 8)] }
				fmt.Fprintf(misses, "%s %s %s engram@5 %.2f bm25@5 %.2f gold %v\n  query %q recent %d\n  engram mems %v turns %v\n  bm25   mems %v turns %v\n",
					s.File, c.ID, c.Type, a5, b5, c.Gold, query, len(recent), top(got.mems), top(got.turns), top(bm), top(bt))
				for i, sig := range got.signals[:min(len(got.signals), 8)] {
					fmt.Fprintf(misses, "    %s %v\n", got.mems[i], sig)
				}
			}
		}
	}
	e.App.SetRetrievalClock(time.Now)
	return rep, nil
}

// chanceAt5 is the recall@5 of a ranking drawn at random from the set's
// memories and turns.
func (s *RecallSet) chanceAt5(gold []string) float64 {
	turns := 0
	for _, sess := range s.Sessions {
		turns += len(sess.Turns)
	}
	sum := 0.0
	for _, g := range gold {
		n := len(s.Memories)
		if strings.Contains(g, "#") {
			n = turns
		}
		sum += min(1, 5/float64(max(n, 1)))
	}
	return sum / float64(max(len(gold), 1))
}

// Write prints the report's figures by case type and by block, for
// tuning.
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

// answer is what /v1/context returned, as the sets name items: the
// memories and turns blocks in order (turns as "session#index"), the
// profile block's ids, and with explain each memory's signals.
type answer struct {
	mems, turns []string
	profile     map[string]bool
	signals     []map[string]float64
}

// askContext asks /v1/context as an agent would before its next turn:
// with a budget of tokens, as an agent would (the default turn limit);
// without, for the whole ranking (200,000 tokens, 50 turns).
func askContext(ctx context.Context, e *Engram, s *RecallSet, query string, recent []RecallMessage, budget int, explain bool) (answer, error) {
	ask := map[string]any{"namespace": s.Namespace, "user": s.User, "query": query,
		"recent_messages": recent, "force": true, "explain": explain}
	if budget > 0 {
		ask["budget_tokens"] = budget
	} else {
		ask["turn_limit"], ask["budget_tokens"] = 50, 200000
	}
	body, _ := json.Marshal(ask)
	var a answer
	req, err := http.NewRequestWithContext(ctx, "POST", e.base+"/v1/context", bytes.NewReader(body))
	if err != nil {
		return a, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.hc.Do(req)
	if err != nil {
		return a, err
	}
	defer quiet.Close(resp.Body)
	if resp.StatusCode != 200 {
		raw, _ := io.ReadAll(resp.Body)
		return a, fmt.Errorf("context: %d %s", resp.StatusCode, raw)
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
		return a, err
	}
	a.profile = map[string]bool{}
	for _, p := range out.Blocks.Profile {
		a.profile[strings.TrimPrefix(p.ID, s.User+"-")] = true
	}
	for _, m := range out.Blocks.Memories {
		a.mems = append(a.mems, strings.TrimPrefix(m.ID, s.User+"-"))
		a.signals = append(a.signals, m.Signals)
	}
	for _, t := range out.Blocks.Turns {
		if t.TurnIndex != nil {
			a.turns = append(a.turns, fmt.Sprintf("%s#%d", t.SessionID, *t.TurnIndex))
		}
	}
	return a, nil
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

func (b *baseline) rank(query string, recent []RecallMessage) (mems, turns []string) {
	text := query
	for _, m := range recent {
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

// recallBudgets are the token budgets whose fitted block is scored.
var recallBudgets = []int{1500, 4000}

// runRecall runs one split's recall passes, each in an engram of its own
// (the access log a pass writes must not move the next one's ranking),
// and prints them: engram beside plain BM25 per language and way of
// asking, and the share of gold items a budgeted block keeps.
func runRecall(ctx context.Context, out io.Writer, dir, split string, styles []string, sync string, misses io.Writer) error {
	sets, err := LoadRecallSets(dir)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, s := range styles {
		want[strings.TrimSpace(s)] = true
	}
	pass := func(sets []*RecallSet, ask RecallAsk, misses io.Writer) (*RecallReport, error) {
		e, err := StartQuality(ctx, sync)
		if err != nil {
			return nil, err
		}
		defer e.Close()
		if err := LoadRecall(ctx, e, sets); err != nil {
			return nil, fmt.Errorf("load: %w", err)
		}
		return EvaluateRecall(ctx, e, sets, ask, misses)
	}
	name := map[string]string{"dev": "dev (tuned on)", "test": "test (held out)"}[split]
	if name == "" {
		name = split
	}
	type row struct {
		style  RecallStyle
		label  string
		rep    *RecallReport
		budget map[int]*RecallReport
	}
	var rows []row
	for _, st := range []RecallStyle{StyleAgent, StyleWhole, StyleLong} {
		if !want[string(st)] {
			continue
		}
		r := row{style: st, label: map[RecallStyle]string{StyleAgent: "agent-style", StyleWhole: "whole dialogue",
			StyleLong: fmt.Sprintf("long window (%d cases before it, then it)", longWindow)}[st], budget: map[int]*RecallReport{}}
		m := misses
		if st != StyleAgent {
			m = nil
		}
		if r.rep, err = pass(sets, RecallAsk{Style: st}, m); err != nil {
			return fmt.Errorf("%s: %w", st, err)
		}
		if st == StyleAgent {
			r.rep.Write(out, name)
		}
		if want["budget"] && st != StyleLong {
			for _, b := range recallBudgets {
				if r.budget[b], err = pass(sets, RecallAsk{Style: st, Budget: b}, nil); err != nil {
					return fmt.Errorf("%s at %d tokens: %w", st, b, err)
				}
			}
		}
		rows = append(rows, r)
	}
	var fused *RecallReport
	if want["vectors"] {
		emb := newEmbedServer()
		e, err := startWithVectors(ctx, sync, emb.URL)
		if err != nil {
			emb.Close()
			return err
		}
		err = LoadRecall(ctx, e, sets)
		if err == nil {
			err = waitEmbedded(ctx, e)
		}
		if err == nil {
			fused, err = EvaluateRecall(ctx, e, sets, RecallAsk{Style: StyleAgent, Vectors: true}, nil)
		}
		e.Close()
		emb.Close()
		if err != nil {
			return fmt.Errorf("vectors: %w", err)
		}
	}
	var cross *RecallReport
	if want["cross"] {
		xs, err := LoadCrossSets(dir, sets)
		if err != nil {
			return err
		}
		if len(xs) > 0 {
			if cross, err = pass(xs, RecallAsk{Style: StyleCross}, nil); err != nil {
				return fmt.Errorf("cross: %w", err)
			}
		}
	}
	other := map[string]string{"zh": "en", "en": "zh"}
	for _, lang := range []string{"zh", "en"} {
		fmt.Fprintf(out, "recall %s, asked in %s — engram beside a plain BM25 over every word sent, same run:\n", name, lang)
		fmt.Fprintf(out, "  %-44s %5s  %-15s  %-15s  %6s  %s\n", "asked as", "cases", "engram R@5/R@10", "BM25 R@5/R@10", "×BM25", "gold in block @1500 / @4000")
		line := func(label string, rep *RecallReport, budget map[int]*RecallReport, chance bool) {
			en, bm := rep.Engram[lang], rep.BM25[lang]
			if en == nil {
				return
			}
			e5, e10 := en.mean()
			b5, b10 := bm.mean()
			kept := ""
			if len(budget) > 0 {
				kept = fmt.Sprintf("%.3f / %.3f", budget[1500].Engram[lang].KeptShare(), budget[4000].Engram[lang].KeptShare())
			}
			if chance {
				kept = fmt.Sprintf("(chance R@5 %.3f)", en.Chance/float64(max(en.N, 1)))
			}
			fmt.Fprintf(out, "  %-44s %5d  %.3f / %.3f    %.3f / %.3f    %6.2f  %s\n", label, en.N, e5, e10, b5, b10, e5/math.Max(b5, 1e-9), kept)
		}
		for _, r := range rows {
			line(r.label, r.rep, r.budget, false)
		}
		// The long dialogues (type window) alone: where asking with the
		// whole window differs most from asking with its last utterance.
		for _, r := range rows {
			en, bm := r.rep.Engram[lang], r.rep.BM25[lang]
			if en == nil || en.ByType["window"][0] == 0 || r.style == StyleLong {
				continue
			}
			x, y := en.ByType["window"], bm.ByType["window"]
			fmt.Fprintf(out, "  %-44s %5.0f  %.3f / %.3f    %.3f / %.3f    %6.2f\n", "  long dialogues only, "+r.label, x[0],
				x[1]/x[0], x[2]/x[0], y[1]/y[0], y[2]/y[0], x[1]/math.Max(y[1], 1e-9))
		}
		if cross != nil {
			line(fmt.Sprintf("cross-language (memories and turns in %s)", other[lang]), cross, nil, true)
		}
		if fused != nil && fused.Engram[lang] != nil && len(rows) > 0 && rows[0].style == StyleAgent {
			// Vectors find memories only: the gold memories, R@5 / R@10.
			m := func(r *RecallScores) string {
				x := r.ByBlock["memories"]
				return fmt.Sprintf("%.3f / %.3f", x[1]/x[0], x[2]/x[0])
			}
			fmt.Fprintf(out, "  agent-style, gold memories (%.0f): full text %s | vectors alone %s | fused %s (test embeddings: hashed bag of words)\n",
				fused.Engram[lang].ByBlock["memories"][0], m(rows[0].rep.Engram[lang]), m(fused.Vectors[lang]), m(fused.Engram[lang]))
		}
	}
	return nil
}
