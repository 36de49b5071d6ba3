package retrieval

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/textseg"
)

// Attachments (seed 000 §4.4): "上次我发给你的那张猫的照片给我一下" is
// answered with the file whose own description shows a cat, not with
// every file of every turn the question's words reached. An attachment is
// found through its turn (the turn's full text holds its name,
// description and transcription), then scored on its own text: the share
// of the question's own words (textseg weight askedWeight and more) it
// holds. Words that only name a kind of file ("照片", "pdf") do not make
// an attachment a match — every photo is a photo — but among matches they
// favour files of that kind. The agent describes what it sends
// (description, transcription); engram never looks inside a file.

// maxAttachments is how many attachments a context block lists.
const maxAttachments = 5

// kindBonus is what an attachment of the kind of file the question asks
// for ("那张照片": an image) gains over one of another kind.
const kindBonus = 0.1

// fileKinds are the words that ask for a kind of file, and the MIME type
// prefixes of that kind ("" for any file).
var fileKinds = []struct {
	words []string
	mimes []string
}{
	{[]string{"图片", "照片", "相片", "截图", "图", "picture", "photo", "image", "screenshot", "pic"}, []string{"image/"}},
	{[]string{"视频", "录像", "video", "clip"}, []string{"video/"}},
	{[]string{"语音", "录音", "voice", "audio", "recording"}, []string{"audio/"}},
	{[]string{"文件", "附件", "文档", "pdf", "file", "attachment", "document", "doc"}, []string{"application/", "text/"}},
}

// fileWordTokens are the tokens of every word in fileKinds.
var fileWordTokens = func() map[string]bool {
	out := map[string]bool{}
	for _, k := range fileKinds {
		for _, w := range k.words {
			for _, t := range textseg.Tokens(w) {
				out[t] = true
			}
			// The question's reading of the word too ("照片" asks with
			// "照" as well).
			for _, t := range askedTerms(textseg.Understand(w)) {
				out[t.Token] = true
			}
		}
	}
	return out
}()

// attachment is one file a turn carried, as the agent described it.
type attachment struct {
	Name, Mime, Path, URL, Direction, Description, Transcription string
}

// text is what an attachment is found by.
func (a attachment) text() string {
	return strings.Join([]string{a.Name, a.Description, a.Transcription}, "\n")
}

// turnAttachments reads a turn's attachments (the JSON the agent sent).
func turnAttachments(t memory.TurnHit) ([]attachment, error) {
	if t.Attachments == "" {
		return nil, nil
	}
	var atts []attachment
	if err := json.Unmarshal([]byte(t.Attachments), &atts); err != nil {
		return nil, fmt.Errorf("attachments of turn %s: %w", t.Key, err)
	}
	return atts, nil
}

// scoredAttachment is an attachment of a recalled turn with its score.
type scoredAttachment struct {
	attachment
	turn  memory.TurnHit
	index int // within its turn
	match float64
	kind  float64
}

func (s scoredAttachment) score() float64 { return s.match + s.kind }

// id names an attachment: its turn's id and its place in the turn.
func (s scoredAttachment) id() string { return fmt.Sprintf("%s/a%d", s.turn.Key, s.index) }

// content is an attachment's line: its name, then what it shows or says.
func (s scoredAttachment) content() string {
	return strings.TrimSpace(s.Name + ": " + strings.TrimSpace(s.Description+" "+s.Transcription))
}

// rankAttachments scores the attachments of turns for q, best first,
// leaving out those that hold none of the question's own words; the newer
// first among equals. A turn whose attachments cannot be read is passed
// over, and the first such error returned with what the others gave.
func rankAttachments(q textseg.Query, query string, turns []ScoredTurn) ([]scoredAttachment, error) {
	asked := askedTerms(q)
	if len(asked) == 0 {
		return nil, nil
	}
	mimes := askedKinds(query)
	var out []scoredAttachment
	var first error
	for _, t := range turns {
		atts, err := turnAttachments(t.TurnHit)
		if err != nil && first == nil {
			first = err
		}
		for i, a := range atts {
			match := attachmentMatch(asked, a.text())
			if match == 0 {
				continue
			}
			s := scoredAttachment{attachment: a, turn: t.TurnHit, index: i, match: match}
			if slices.ContainsFunc(mimes, func(m string) bool { return strings.HasPrefix(strings.ToLower(a.Mime), m) }) {
				s.kind = kindBonus
			}
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].score() != out[j].score() {
			return out[i].score() > out[j].score()
		}
		return out[i].turn.Time.After(out[j].turn.Time)
	})
	return out, first
}

// askedTerms are q's terms of the last utterance (weight askedWeight and
// more): what the question itself says, not the lexicon's siblings of it
// ("猫" lends "狗" a lesser weight) nor the recent messages.
func askedTerms(q textseg.Query) []textseg.Term {
	var out []textseg.Term
	for _, t := range q.Terms {
		if t.Weight >= askedWeight {
			out = append(out, t)
		}
	}
	return out
}

// attachmentMatch is the share of the asked terms' weight text holds, 0
// when it holds none but the words that name a kind of file.
func attachmentMatch(asked []textseg.Term, text string) float64 {
	toks := textseg.Tokens(text)
	var all, held float64
	telling := false
	for _, t := range asked {
		all += t.Weight
		if slices.ContainsFunc(toks, func(tok string) bool {
			return tok == t.Token || (t.Prefix && strings.HasPrefix(tok, t.Token))
		}) {
			held += t.Weight
			telling = telling || !fileWordTokens[t.Token]
		}
	}
	if !telling || all == 0 {
		return 0
	}
	return held / all
}

// askedKinds are the MIME prefixes of the kinds of file query asks for.
func askedKinds(query string) []string {
	lq := strings.ToLower(query)
	var out []string
	for _, k := range fileKinds {
		if slices.ContainsFunc(k.words, func(w string) bool { return strings.Contains(lq, w) }) {
			out = append(out, k.mimes...)
		}
	}
	return out
}

// attachmentItem is an attachment as an entry of the block.
func attachmentItem(s scoredAttachment, explain bool) Item {
	where := s.Path
	if where == "" {
		where = s.URL
	}
	dir := s.Direction
	if dir == "" {
		dir = "inbound"
	}
	it := Item{ID: s.id(), Kind: "attachment", Content: s.content(), Score: s.score(), SessionID: s.turn.SessionID,
		Time: s.turn.Time, Provenance: fmt.Sprintf("attachment of turn %s · %s · %s · %s", s.turn.Key, dir, s.Mime, where)}
	if explain {
		it.Signals = map[string]float64{"match": s.match, "kind": s.kind, "score": s.score()}
	}
	return it
}
