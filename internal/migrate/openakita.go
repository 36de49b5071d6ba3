package migrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/quiet"
)

// OpenAkita migrates an OpenAkita data directory (seeds 003 and 000 §9.1):
// memories.json into memories, conversation_history/*.jsonl into turns.
// Each is looked for in dir and in dir/memory. See the package doc for the
// mapping. It returns an error only when dir cannot be read or emit
// fails; everything else is a problem in the report.
func OpenAkita(dir string, opt Options, emit func(event.Event) error) (*Report, error) {
	r, err := newRun("openakita", dir, opt, emit)
	if err != nil {
		return nil, err
	}
	roots := []string{dir, filepath.Join(dir, "memory")}
	for _, root := range roots {
		if err := r.memoriesJSON(filepath.Join(root, "memories.json")); err != nil {
			return r.rep, err
		}
	}
	next := map[string]int{} // each session's next turn index, across files
	for _, root := range roots {
		hist := filepath.Join(root, "conversation_history")
		entries, err := os.ReadDir(hist)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return r.rep, fmt.Errorf("migrate openakita: %w", err)
		}
		for _, e := range entries { // ReadDir sorts by name
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			if err := r.history(filepath.Join(hist, e.Name()), next); err != nil {
				return r.rep, err
			}
		}
	}
	return r.rep, nil
}

// akitaMemory is one record of memories.json. Fields engram does not keep
// (access_count, decay_rate, source, …) are ignored.
type akitaMemory struct {
	ID              json.RawMessage `json:"id"`
	Content         *string         `json:"content"`
	Type            string          `json:"type"`
	Priority        string          `json:"priority"`
	Importance      *float64        `json:"importance"`
	ImportanceScore *float64        `json:"importance_score"`
	CreatedAt       json.RawMessage `json:"created_at"`
	Subject         string          `json:"subject"`
	Predicate       string          `json:"predicate"`
	SupersededBy    json.RawMessage `json:"superseded_by"`
}

// akitaKinds maps a memory type, lower-cased, to a kind and the predicate
// a record without one gets. Every predicate is a set (memory.SingleValued
// is false), so migrated memories add to each other.
var akitaKinds = map[string]struct{ kind, predicate string }{
	"fact":          {events.KindFact, "note"},
	"preference":    {events.KindPreference, "prefers"},
	"persona_trait": {events.KindPreference, "prefers"},
	"skill":         {events.KindSkill, "skill"},
	"error":         {events.KindError, "lesson"},
	"rule":          {events.KindRule, "rule"},
	"context":       {events.KindContext, "context"},
}

// akitaCategory maps a priority, lower-cased, to a decay category and a
// tier; PERMANENT is the core profile and never fades.
func akitaCategory(priority, kind string) (category string, tier int, ok bool) {
	switch priority {
	case "permanent":
		if kind == events.KindFact || kind == events.KindContext {
			return events.CategoryIdentity, events.TierCore, true
		}
		return events.CategoryConfig, events.TierCore, true
	case "long_term", "":
		return events.CategoryDecision, events.TierKnowledge, true
	case "short_term":
		return events.CategoryEvent, events.TierKnowledge, true
	case "transient":
		return events.CategoryTemp, events.TierKnowledge, true
	}
	return "", 0, false
}

// akitaSubjects are subjects that mean the user.
var akitaSubjects = map[string]bool{"用户": true, "user": true, "the user": true, "我": true}

// memoriesJSON turns each record of a memories.json into a memory.added.
func (r *run) memoriesJSON(path string) error {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	file := r.rel(path)
	if err != nil {
		r.skip(file, 0, "cannot read: %v", err)
		return nil
	}
	r.rep.Files++
	info, err := os.Stat(path)
	if err != nil {
		r.skip(file, 0, "cannot read: %v", err)
		return nil
	}
	if len(bytes.TrimSpace(b)) == 0 {
		r.problem(file, 0, "empty file")
		return nil
	}
	fileTime := modTime(info)
	lineAt := lineCounter(b)
	return eachRecord(b, func(i int, offset int64, raw json.RawMessage, err error) error {
		line := 0 // a problem of the whole file
		if offset >= 0 {
			line = lineAt(offset)
		}
		if err != nil {
			r.skip(file, line, "%s", err)
			return nil
		}
		return r.akitaMemory(file, line, i, raw, fileTime)
	})
}

func (r *run) akitaMemory(file string, line, index int, raw json.RawMessage, fileTime time.Time) error {
	var m akitaMemory
	if err := unmarshalRecord(raw, &m); err != nil {
		r.skip(file, line, "not a memory record: %s", err)
		return nil
	}
	locator := fmt.Sprintf("#%d", index)
	if id := recordID(m.ID); id != "" {
		locator = "id:" + id
	}
	if m.Content == nil || strings.TrimSpace(*m.Content) == "" {
		r.skip(file, line, "no content")
		return nil
	}
	content := strings.TrimSpace(*m.Content)
	if len(content) > events.MaxMemoryContentBytes {
		r.skip(file, line, "content is %d bytes; a memory's limit is %d", len(content), events.MaxMemoryContentBytes)
		return nil
	}
	if s := bytes.TrimSpace(m.SupersededBy); len(s) > 0 && string(s) != "null" && string(s) != `""` {
		r.skip(file, line, "superseded by %s: history, not a current memory", excerpt(recordID(m.SupersededBy)))
		return nil
	}
	typ := strings.ToLower(strings.TrimSpace(m.Type))
	if typ == "" {
		typ = "fact"
	}
	k, ok := akitaKinds[typ]
	if !ok {
		r.skip(file, line, "unknown type %s", excerpt(m.Type))
		return nil
	}
	category, tier, ok := akitaCategory(strings.ToLower(strings.TrimSpace(m.Priority)), k.kind)
	if !ok {
		r.skip(file, line, "unknown priority %s", excerpt(m.Priority))
		return nil
	}
	importance := 0.5
	switch {
	case m.ImportanceScore != nil:
		importance = *m.ImportanceScore
	case m.Importance != nil:
		importance = *m.Importance
	}
	if importance < 0 || importance > 1 || math.IsNaN(importance) {
		r.skip(file, line, "importance %g is not from 0 to 1", importance)
		return nil
	}
	subject := strings.TrimSpace(m.Subject)
	if subject == "" || akitaSubjects[strings.ToLower(subject)] {
		subject = "user"
	}
	predicate := strings.TrimSpace(m.Predicate)
	if predicate == "" {
		predicate = k.predicate
	}
	t, ok := parseTime(m.CreatedAt)
	if !ok {
		if len(bytes.TrimSpace(m.CreatedAt)) > 0 && string(bytes.TrimSpace(m.CreatedAt)) != "null" {
			r.problem(file, line, "created_at %s not understood; the file's time is used", excerpt(rawText(m.CreatedAt)))
		}
		t = fileTime
	}
	data := events.MemoryAdded{
		Tier:       tier,
		Kind:       k.kind,
		Category:   category,
		Subject:    subject,
		Predicate:  predicate,
		Content:    content,
		Importance: importance,
		Confidence: 1,
	}
	return r.publish(file, line, events.TypeMemoryAdded, r.id(file, locator, string(raw)), t, data)
}

// unmarshalRecord decodes a record, saying what is wrong in JSON's terms
// rather than Go's, and without quoting the record.
func unmarshalRecord(raw []byte, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] != '{' {
		return fmt.Errorf("%s, not an object", jsonKind(raw))
	}
	err := json.Unmarshal(raw, v)
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te):
		return fmt.Errorf("%s is a %s", excerpt(te.Field), te.Value)
	case errors.As(err, &se):
		return fmt.Errorf("invalid JSON at byte %d: %s", se.Offset, redact(se.Error()))
	}
	return errors.New(redact(err.Error()))
}

// jsonKind names the JSON type of a value by its first byte.
func jsonKind(raw []byte) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// rawText is a JSON value as text: a string's contents, else the JSON.
func rawText(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// recordID reads a record's id, a string or a number, as text.
func recordID(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return strings.TrimSpace(s)
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String()
	}
	return ""
}

// eachRecord calls fn with each element of a JSON array, or of the
// "memories" array of an object, and the offset it starts at. A syntax
// error ends the walk: fn gets it once, with where it happened (offset -1
// for the whole file).
func eachRecord(b []byte, fn func(i int, offset int64, raw json.RawMessage, err error) error) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	notRecords := errors.New(`neither an array nor an object with "memories"`)
	fail := func(err error) error {
		off := dec.InputOffset()
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			off = se.Offset
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			off, err = int64(len(b)), errors.New("unexpected end of JSON")
		}
		return fn(0, off, nil, fmt.Errorf("invalid JSON: %s; the rest of the file is left out", redact(err.Error())))
	}
	tok, err := dec.Token()
	if err != nil {
		return fail(err)
	}
	switch tok {
	case json.Delim('['):
	case json.Delim('{'):
		found := false
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return fail(err)
			}
			if key == "memories" {
				if tok, err := dec.Token(); err != nil {
					return fail(err)
				} else if tok != json.Delim('[') {
					return fn(0, dec.InputOffset(), nil, errors.New(`"memories" is not an array`))
				}
				found = true
				break
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(err)
			}
		}
		if !found {
			return fn(0, -1, nil, notRecords)
		}
	default:
		return fn(0, -1, nil, notRecords)
	}
	for i := 0; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fail(err)
		}
		if err := fn(i, dec.InputOffset()-int64(len(raw)), raw, nil); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return fail(err)
	}
	return nil
}

// lineCounter returns a function from a byte offset in b to its line
// number, for offsets asked in increasing order (and at any time 0).
func lineCounter(b []byte) func(offset int64) int {
	at, line := int64(0), 1
	return func(offset int64) int {
		if offset < at {
			at, line = 0, 1
		}
		offset = min(offset, int64(len(b)))
		line += bytes.Count(b[at:offset], []byte{'\n'})
		at = offset
		return line
	}
}

// akitaMessage is one line of a conversation_history JSONL file.
type akitaMessage struct {
	Role        string          `json:"role"`
	Content     json.RawMessage `json:"content"`
	Timestamp   json.RawMessage `json:"timestamp"`
	SessionID   string          `json:"session_id"`
	Channel     string          `json:"channel"`
	ToolCalls   []akitaToolCall `json:"tool_calls"`
	ToolResults []akitaResult   `json:"tool_results"`
}

// akitaToolCall is a tool call as Anthropic ({id, name, input}) or OpenAI
// ({id, function: {name, arguments}}) writes it.
type akitaToolCall struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
	Function *struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type akitaResult struct {
	ToolUseID  string          `json:"tool_use_id"`
	ToolCallID string          `json:"tool_call_id"`
	Content    json.RawMessage `json:"content"`
	IsError    bool            `json:"is_error"`
}

// akitaBlock is one block of a message whose content is a list.
type akitaBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

var akitaRoles = map[string]string{
	"user": events.RoleUser, "human": events.RoleUser,
	"assistant": events.RoleAssistant, "ai": events.RoleAssistant, "bot": events.RoleAssistant, "model": events.RoleAssistant,
	"system": events.RoleSystem,
	"tool":   events.RoleTool, "function": events.RoleTool,
}

// history turns each line of a conversation JSONL file into a turn.
func (r *run) history(path string, next map[string]int) error {
	file := r.rel(path)
	f, err := os.Open(path)
	if err != nil {
		r.skip(file, 0, "cannot read: %v", err)
		return nil
	}
	defer quiet.Close(f) // only read
	info, err := f.Stat()
	if err != nil {
		r.skip(file, 0, "cannot read: %v", err)
		return nil
	}
	r.rep.Files++
	fileSession := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	last := modTime(info)
	empty := true
	var emitErr error
	err = eachLine(f, func(l line) error {
		if l.tooLong > 0 {
			empty = false
			next[fileSession]++
			r.skip(file, l.n, "line is %d bytes; no event from it fits the %d-byte limit", l.tooLong, events.DefaultMaxEventBytes)
			return nil
		}
		text := bytes.TrimSpace(l.text)
		if len(text) == 0 {
			return nil
		}
		empty = false
		// A skipped line keeps its place in its session, so that a re-run
		// after it is fixed gives it the index its neighbours left for it.
		turn, t, ok := r.akitaTurn(file, l.n, text, fileSession)
		turn.TurnIndex = next[turn.SessionID]
		next[turn.SessionID]++
		if !ok {
			return nil
		}
		if !t.IsZero() {
			last = t
		}
		emitErr = r.publish(file, l.n, events.TypeTurnRecorded, r.id(file, fmt.Sprint(l.n), string(text)), last, turn)
		return emitErr
	})
	switch {
	case emitErr != nil:
		return emitErr
	case err != nil:
		r.skip(file, 0, "cannot read: %v", err)
	case empty:
		r.problem(file, 0, "empty file")
	}
	return nil
}

// akitaTurn reads one message. ok is false when it was skipped (with a
// problem), and then the turn holds only its session, as far as it is
// known; t is zero when the message has no usable timestamp.
func (r *run) akitaTurn(file string, n int, text []byte, fileSession string) (turn events.TurnRecorded, t time.Time, ok bool) {
	turn.SessionID = fileSession
	var m akitaMessage
	if err := unmarshalRecord(text, &m); err != nil {
		r.skip(file, n, "not a message: %s", err)
		return turn, t, false
	}
	if s := strings.TrimSpace(m.SessionID); s != "" {
		turn.SessionID = s
	}
	role, known := akitaRoles[strings.ToLower(strings.TrimSpace(m.Role))]
	if !known {
		if m.Role == "" {
			r.skip(file, n, "no role")
		} else {
			r.skip(file, n, "unknown role %s", excerpt(m.Role))
		}
		return turn, t, false
	}
	turn.Role = role
	if c := strings.TrimSpace(m.Channel); validID(c, events.MaxIDBytes) {
		turn.Channel = c
	}
	if !validID(turn.SessionID, events.MaxIDBytes) {
		r.skip(file, n, "session %s is not a valid identifier", excerpt(turn.SessionID))
		return turn, t, false
	}
	content, blocks, err := akitaContent(m.Content)
	if err != nil {
		r.skip(file, n, "content: %s", err)
		return turn, t, false
	}
	turn.Content = content
	var other []string
	for _, b := range blocks {
		switch b.Type {
		case "tool_use":
			turn.ToolCalls = append(turn.ToolCalls, events.ToolCall{ID: b.ID, Name: b.Name, Input: b.Input})
		case "tool_result":
			text, _, err := akitaContent(b.Content)
			if err != nil {
				other = append(other, "tool_result")
				continue
			}
			turn.ToolResults = append(turn.ToolResults, events.ToolResult{ToolCallID: b.ToolUseID, Content: text, IsError: b.IsError})
		case "text":
		default:
			other = append(other, b.Type)
		}
	}
	for _, c := range m.ToolCalls {
		call := events.ToolCall{ID: c.ID, Name: c.Name, Input: c.Input}
		if c.Function != nil {
			call.Name = c.Function.Name
			call.Input = arguments(c.Function.Arguments)
		}
		turn.ToolCalls = append(turn.ToolCalls, call)
	}
	for _, res := range m.ToolResults {
		text, _, err := akitaContent(res.Content)
		if err != nil {
			other = append(other, "tool_result")
			continue
		}
		id := res.ToolUseID
		if id == "" {
			id = res.ToolCallID
		}
		turn.ToolResults = append(turn.ToolResults, events.ToolResult{ToolCallID: id, Content: text, IsError: res.IsError})
	}
	turn.ToolCalls = r.cleanCalls(file, n, turn.ToolCalls)
	for i := range turn.ToolResults {
		if id := turn.ToolResults[i].ToolCallID; id != "" && !validID(id, events.MaxIDBytes) {
			turn.ToolResults[i].ToolCallID = ""
		}
	}
	if len(other) > 0 {
		sort.Strings(other)
		r.problem(file, n, "content blocks left out: %s", excerpt(strings.Join(other, ", ")))
	}
	if turn.Content == "" && len(turn.ToolCalls) == 0 && len(turn.ToolResults) == 0 {
		r.skip(file, n, "empty message")
		return turn, t, false
	}
	t, _ = parseTime(m.Timestamp)
	return turn, t, true
}

// cleanCalls drops the ids engram would refuse and the calls with no
// name, which engram cannot keep: the rest of the turn is worth more than
// failing it.
func (r *run) cleanCalls(file string, n int, calls []events.ToolCall) []events.ToolCall {
	var out []events.ToolCall
	for i, c := range calls {
		if !validID(c.Name, events.MaxIDBytes) {
			r.problem(file, n, "tool call %d has no valid name; left out", i+1)
			continue
		}
		if c.ID != "" && !validID(c.ID, events.MaxIDBytes) {
			c.ID = ""
		}
		if len(bytes.TrimSpace(c.Input)) == 0 {
			c.Input = nil
		}
		out = append(out, c)
	}
	return out
}

// arguments turns OpenAI's arguments, a JSON string holding JSON, into the
// JSON it holds; anything else is kept as it is.
func arguments(raw json.RawMessage) json.RawMessage {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil && json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	return raw
}

// akitaContent reads content that is a string, null, or a list of blocks
// whose text blocks it joins.
func akitaContent(raw json.RawMessage) (string, []akitaBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil, nil
	}
	var blocks []akitaBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", nil, errors.New("neither text nor a list of blocks")
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" && b.Text != "" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n"), blocks, nil
}
