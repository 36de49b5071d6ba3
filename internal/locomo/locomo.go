package locomo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/quiet"
)

// Dataset is a loaded LoCoMo file.
type Dataset struct {
	Conversations []Conversation
	// Fixes lists every evidence id Load did not keep as written, so that a
	// benchmark report can say what was changed.
	Fixes []EvidenceFix
	Stats Stats
}

// Conversation is one LoCoMo sample: two speakers talking over many sessions,
// and the questions asked about it.
type Conversation struct {
	ID       string // sample_id, e.g. "conv-26"
	SpeakerA string
	SpeakerB string
	Sessions []Session // in session order
	QA       []QA
}

// Session is one sitting of a conversation.
type Session struct {
	N     int
	Time  time.Time // from "1:56 pm on 8 May, 2023", in UTC
	Turns []Turn
}

// Turn is one message of a session.
type Turn struct {
	DiaID       string // normalised, "D1:3"
	Speaker     string
	Text        string
	BlipCaption string // caption of a shared image, if any
	Session     int
	Index       int // position in the session, 0-based
}

// QA is one benchmark question.
type QA struct {
	Question string
	// Answer is the gold answer as text (a few are numbers in the file).
	// Adversarial questions (category 5) usually have none: the right
	// response is that the conversation does not say.
	Answer string
	// AdversarialAnswer is the wrong answer category 5 questions bait.
	AdversarialAnswer string
	Evidence          []string // normalised dia ids of the turns that hold the answer
	Category          int      // 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial
}

// EvidenceFix records one evidence string of the file that Load did not
// keep verbatim.
type EvidenceFix struct {
	Conversation string
	Question     int    // index into Conversation.QA
	Raw          string // as written in the file
	Kept         []string
	Dropped      []string // parts that are not dia ids, or name no turn
	Duplicate    bool     // Raw repeats an id the question already lists
}

// Stats counts what Load read and what it changed.
type Stats struct {
	Conversations int
	Sessions      int
	Turns         int
	Questions     int
	PerCategory   map[int]int // questions per category
	EvidenceIDs   int         // evidence ids kept, over all questions
	// Rewritten counts evidence strings that were not a canonical dia id
	// and yielded at least one id that was kept.
	Rewritten int
	// Dropped counts evidence ids (after splitting) that were unparsable
	// or name no turn of their conversation.
	Dropped    int
	Duplicates int // evidence ids listed twice for one question, kept once
	NoEvidence int // questions left without evidence
}

// Category names, as in the official LoCoMo evaluation code.
var categoryNames = map[int]string{
	1: "multi-hop",
	2: "temporal",
	3: "open-domain",
	4: "single-hop",
	5: "adversarial",
}

// CategoryName returns the name of a QA category, or "category N".
func CategoryName(c int) string {
	if n, ok := categoryNames[c]; ok {
		return n
	}
	return "category " + strconv.Itoa(c)
}

// TurnText is the text engram indexes for a turn: what was said, plus the
// caption of any image shared with it, which often carries the answer.
func (c Conversation) TurnText(t Turn) string {
	if t.BlipCaption == "" {
		return t.Text
	}
	return t.Text + " [image: " + t.BlipCaption + "]"
}

// Turns returns every turn of the conversation in order.
func (c Conversation) Turns() []Turn {
	var ts []Turn
	for _, s := range c.Sessions {
		ts = append(ts, s.Turns...)
	}
	return ts
}

// Turn finds a turn by its dia id, written in any form NormaliseDiaID accepts.
func (c Conversation) Turn(diaID string) (Turn, bool) {
	id, err := NormaliseDiaID(diaID)
	if err != nil {
		return Turn{}, false
	}
	for _, s := range c.Sessions {
		for _, t := range s.Turns {
			if t.DiaID == id {
				return t, true
			}
		}
	}
	return Turn{}, false
}

// sessionTimeLayout matches "1:56 pm on 8 May, 2023".
const sessionTimeLayout = "3:04 pm on 2 January, 2006"

// ParseSessionTime parses a session_N_date_time value, in UTC (the file
// names no zone).
func ParseSessionTime(s string) (time.Time, error) {
	t, err := time.ParseInLocation(sessionTimeLayout, strings.TrimSpace(s), time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse session time %q: %w", s, err)
	}
	return t, nil
}

var diaIDPattern = regexp.MustCompile(`^D:?(\d+):(\d+)$`)

// NormaliseDiaID returns the canonical form "D<session>:<turn>" of one dia
// id, accepting the slips found in the file: a colon after the D
// ("D:11:26") and leading zeros ("D30:05").
func NormaliseDiaID(s string) (string, error) {
	m := diaIDPattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", fmt.Errorf("dia id %q: not of the form D<session>:<turn>", s)
	}
	session, err1 := strconv.Atoi(m[1])
	turn, err2 := strconv.Atoi(m[2])
	if err := errors.Join(err1, err2); err != nil {
		return "", fmt.Errorf("dia id %q: %w", s, err)
	}
	if session < 1 || turn < 1 {
		return "", fmt.Errorf("dia id %q: session and turn count from 1", s)
	}
	return "D" + strconv.Itoa(session) + ":" + strconv.Itoa(turn), nil
}

// SplitEvidence turns one evidence string of the file into canonical dia
// ids. Some strings hold several ids ("D8:6; D9:17", "D9:1 D4:4 D4:6");
// parts that are not dia ids come back in bad.
func SplitEvidence(raw string) (ids, bad []string) {
	parts := strings.FieldsFunc(raw, func(r rune) bool {
		return r == ';' || r == ',' || r == ' ' || r == '\t' || r == '\n'
	})
	for _, p := range parts {
		id, err := NormaliseDiaID(p)
		if err != nil {
			bad = append(bad, p)
			continue
		}
		ids = append(ids, id)
	}
	if len(parts) == 0 {
		bad = append(bad, raw)
	}
	return ids, bad
}

// Load reads a LoCoMo file such as locomo10.json.
func Load(path string) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load locomo: %w", err)
	}
	defer quiet.Close(f) // only read
	ds, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("load locomo %s: %w", path, err)
	}
	return ds, nil
}

type rawSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []rawQA                    `json:"qa"`
}

type rawQA struct {
	Question          string          `json:"question"`
	Answer            json.RawMessage `json:"answer"`
	AdversarialAnswer json.RawMessage `json:"adversarial_answer"`
	Evidence          []string        `json:"evidence"`
	Category          int             `json:"category"`
}

type rawTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// Parse reads a LoCoMo file from r. See Load.
func Parse(r io.Reader) (*Dataset, error) {
	var raw []rawSample
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if len(raw) == 0 {
		return nil, errors.New("no conversations")
	}
	ds := &Dataset{Stats: Stats{PerCategory: map[int]int{}}}
	seen := map[string]bool{}
	for i, rs := range raw {
		if rs.SampleID == "" {
			return nil, fmt.Errorf("conversation %d: no sample_id", i)
		}
		if seen[rs.SampleID] {
			return nil, fmt.Errorf("conversation %d: sample_id %q repeated", i, rs.SampleID)
		}
		seen[rs.SampleID] = true
		conv, err := parseConversation(rs, ds)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rs.SampleID, err)
		}
		ds.Conversations = append(ds.Conversations, conv)
	}
	ds.Stats.Conversations = len(ds.Conversations)
	return ds, nil
}

func parseConversation(rs rawSample, ds *Dataset) (Conversation, error) {
	conv := Conversation{ID: rs.SampleID}
	if rs.Conversation == nil {
		return conv, errors.New("no conversation")
	}
	if err := decodeString(rs.Conversation, "speaker_a", &conv.SpeakerA); err != nil {
		return conv, err
	}
	if err := decodeString(rs.Conversation, "speaker_b", &conv.SpeakerB); err != nil {
		return conv, err
	}
	// Some files carry date_time keys for sessions that were cut; only
	// session_N lists make a session.
	var ns []int
	for k := range rs.Conversation {
		if m := sessionKey.FindStringSubmatch(k); m != nil {
			n, err := strconv.Atoi(m[1])
			if err != nil || n < 1 {
				return conv, fmt.Errorf("bad session key %q", k)
			}
			ns = append(ns, n)
		}
	}
	if len(ns) == 0 {
		return conv, errors.New("no sessions")
	}
	sort.Ints(ns)
	ids := map[string]bool{}
	for _, n := range ns {
		s, err := parseSession(rs.Conversation, n, conv, ids)
		if err != nil {
			return conv, fmt.Errorf("session %d: %w", n, err)
		}
		conv.Sessions = append(conv.Sessions, s)
		ds.Stats.Sessions++
		ds.Stats.Turns += len(s.Turns)
	}
	for qi, rq := range rs.QA {
		q, err := parseQA(rq, conv.ID, qi, ids, ds)
		if err != nil {
			return conv, fmt.Errorf("question %d: %w", qi, err)
		}
		conv.QA = append(conv.QA, q)
	}
	return conv, nil
}

func decodeString(m map[string]json.RawMessage, key string, dst *string) error {
	v, ok := m[key]
	if !ok {
		return fmt.Errorf("no %s", key)
	}
	if err := json.Unmarshal(v, dst); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

func parseSession(m map[string]json.RawMessage, n int, conv Conversation, ids map[string]bool) (Session, error) {
	s := Session{N: n}
	var when string
	if err := decodeString(m, fmt.Sprintf("session_%d_date_time", n), &when); err != nil {
		return s, err
	}
	t, err := ParseSessionTime(when)
	if err != nil {
		return s, err
	}
	s.Time = t
	var turns []rawTurn
	if err := json.Unmarshal(m[fmt.Sprintf("session_%d", n)], &turns); err != nil {
		return s, fmt.Errorf("decode turns: %w", err)
	}
	for i, rt := range turns {
		id, err := NormaliseDiaID(rt.DiaID)
		if err != nil {
			return s, fmt.Errorf("turn %d: %w", i, err)
		}
		if !strings.HasPrefix(id, fmt.Sprintf("D%d:", n)) {
			return s, fmt.Errorf("turn %d: dia id %s belongs to another session", i, id)
		}
		if ids[id] {
			return s, fmt.Errorf("turn %d: dia id %s repeated", i, id)
		}
		ids[id] = true
		if rt.Speaker != conv.SpeakerA && rt.Speaker != conv.SpeakerB {
			return s, fmt.Errorf("turn %s: speaker %q is neither %q nor %q", id, rt.Speaker, conv.SpeakerA, conv.SpeakerB)
		}
		s.Turns = append(s.Turns, Turn{
			DiaID:       id,
			Speaker:     rt.Speaker,
			Text:        rt.Text,
			BlipCaption: rt.BlipCaption,
			Session:     n,
			Index:       i,
		})
	}
	return s, nil
}

func parseQA(rq rawQA, convID string, qi int, ids map[string]bool, ds *Dataset) (QA, error) {
	q := QA{Question: rq.Question, Category: rq.Category}
	if strings.TrimSpace(q.Question) == "" {
		return q, errors.New("empty question")
	}
	if _, ok := categoryNames[q.Category]; !ok {
		return q, fmt.Errorf("unknown category %d", q.Category)
	}
	var err error
	if q.Answer, err = answerText(rq.Answer); err != nil {
		return q, fmt.Errorf("answer: %w", err)
	}
	if q.AdversarialAnswer, err = answerText(rq.AdversarialAnswer); err != nil {
		return q, fmt.Errorf("adversarial_answer: %w", err)
	}
	for _, raw := range rq.Evidence {
		got, bad := SplitEvidence(raw)
		fix := EvidenceFix{Conversation: convID, Question: qi, Raw: raw, Dropped: bad}
		for _, id := range got {
			switch {
			case !ids[id]:
				fix.Dropped = append(fix.Dropped, id)
			case slices.Contains(q.Evidence, id):
				fix.Duplicate = true
				ds.Stats.Duplicates++
			default:
				fix.Kept = append(fix.Kept, id)
				q.Evidence = append(q.Evidence, id)
			}
		}
		ds.Stats.Dropped += len(fix.Dropped)
		verbatim := len(fix.Kept) == 1 && fix.Kept[0] == raw
		if !verbatim && len(fix.Kept) > 0 {
			ds.Stats.Rewritten++
		}
		if !verbatim || len(fix.Dropped) > 0 || fix.Duplicate {
			ds.Fixes = append(ds.Fixes, fix)
		}
	}
	ds.Stats.Questions++
	ds.Stats.PerCategory[q.Category]++
	ds.Stats.EvidenceIDs += len(q.Evidence)
	if len(q.Evidence) == 0 {
		ds.Stats.NoEvidence++
	}
	return q, nil
}

// answerText renders an answer field as text: most are strings, a few are
// bare numbers (years, counts).
func answerText(v json.RawMessage) (string, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return "", nil
	}
	if v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(v, &n); err != nil {
		return "", fmt.Errorf("neither text nor a number: %s", v)
	}
	return n.String(), nil
}
