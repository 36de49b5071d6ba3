package events

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DecodeData strictly decodes and validates the data of a known event type
// (see Types) and returns a pointer to its data type: *TurnRecorded,
// *ContextCompressing, *SessionEnded, *ExtractionRequested,
// *MemoryExtracted, *ExtractionFailed, *MemoryAdded, *MemoryUpdated,
// *MemoryDeleted, *PendingDecision (for all three pending.* types),
// *MemoryImportant, *Episode, *Scratchpad, *ProfileRefreshed,
// *DailySummary, *MemoriesMerged, *MemoriesArchived, *MemoriesAccessed,
// *RetrievalDegraded, *UserForgotten or *MemoryEmbedded. An unknown field,
// a repeated key, data after the JSON value, a wrong JSON type or a broken
// rule is a *FieldError naming the field ("data.turns[2].role"); an
// unknown event type is a *FieldError for "type".
func DecodeData(eventType string, data []byte) (any, error) {
	if !knownType(eventType) {
		return nil, unknownType(eventType)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fieldErr("data", "required")
	}
	return decodeTwice(data, "data", func(r *reader) (any, error) { return decodeData(r, eventType) })
}

func decodeData(r *reader, eventType string) (any, error) {
	path := "data"
	if r.dec == nil {
		path = "" // the scanner names no problem; this saves building paths
	}
	switch eventType {
	case TypeTurnRecorded:
		return decoded(decodeTurn(r, path, false))
	case TypeContextCompressing:
		return decoded(decodeCompressing(r, path))
	case TypeSessionEnded:
		return decoded(decodeSessionEnded(r, path))
	case TypeExtractionRequested:
		return decoded(decodeExtractionRequested(r, path))
	case TypeMemoryExtracted:
		return decoded(decodeMemoryExtracted(r, path))
	case TypeExtractionFailed:
		return decoded(decodeExtractionFailed(r, path))
	case TypeMemoryAdded:
		return decoded(decodeMemoryAdded(r, path))
	case TypeMemoryUpdated:
		return decoded(decodeMemoryUpdated(r, path))
	case TypeMemoryDeleted:
		return decoded(decodeMemoryDeleted(r, path))
	case TypePendingConfirmed, TypePendingIgnored, TypePendingSnoozed:
		return decoded(decodePendingDecision(r, path, eventType))
	case TypeMemoryImportant:
		return decoded(decodeMemoryImportant(r, path))
	case TypeEpisodeBuilt:
		return decoded(decodeEpisode(r, path))
	case TypeScratchpadUpdated:
		return decoded(decodeScratchpad(r, path))
	case TypeProfileRefreshed:
		return decoded(decodeProfileRefreshed(r, path))
	case TypeDailySummarized:
		return decoded(decodeDailySummary(r, path))
	case TypeMemoriesMerged:
		return decoded(decodeMemoriesMerged(r, path))
	case TypeMemoriesArchived:
		return decoded(decodeMemoriesArchived(r, path))
	case TypeMemoriesAccessed:
		return decoded(decodeMemoriesAccessed(r, path))
	case TypeRetrievalDegraded:
		return decoded(decodeRetrievalDegraded(r, path))
	case TypeUserForgotten:
		return decoded(decodeUserForgotten(r, path))
	case TypeMemoryEmbedded:
		return decoded(decodeMemoryEmbedded(r, path))
	case TypeTurnsExpired:
		return decoded(decodeTurnsExpired(r, path))
	}
	return nil, unknownType(eventType)
}

// decoded hands back a pointer to what a decoder read, so that DecodeData
// returns one pointer type per event type.
func decoded[T any](v T, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return &v, nil
}

func knownType(t string) bool { return slices.Contains(types, t) }

func unknownType(t string) error {
	if t == "" {
		return fieldErr("type", "required")
	}
	return fieldErr("type", fmt.Sprintf("%s is not an engram event type (want one of %s)",
		quote(t), strings.Join(types, ", ")))
}

func unknownField(path string) error { return fieldErr(path, "unknown field") }

// decodeTurn reads a turn. An inner turn (inside context.compressing) may
// leave session_id empty; the caller compares it with the outer one.
func decodeTurn(r *reader, path string, inner bool) (TurnRecorded, error) {
	var t TurnRecorded
	hasIndex := false
	err := r.object(path, func(key, p string) (err error) {
		switch key {
		case "session_id":
			t.SessionID, err = r.str(p)
		case "turn_index":
			var n int64
			n, err = r.integer(p, 0, MaxCount)
			t.TurnIndex, hasIndex = int(n), true
		case "role":
			t.Role, err = r.str(p)
		case "content":
			t.Content, err = r.str(p)
		case "tool_calls":
			err = r.array(p, func(_ int, p string) error {
				c, err := decodeToolCall(r, p)
				t.ToolCalls = append(t.ToolCalls, c)
				return err
			})
		case "tool_results":
			err = r.array(p, func(_ int, p string) error {
				res, err := decodeToolResult(r, p)
				t.ToolResults = append(t.ToolResults, res)
				return err
			})
		case "attachments":
			err = r.array(p, func(_ int, p string) error {
				a, err := decodeAttachment(r, p)
				t.Attachments = append(t.Attachments, a)
				return err
			})
		case "channel":
			t.Channel, err = r.str(p)
		case "project":
			t.Project, err = r.str(p)
		case "speaker":
			t.Speaker, err = r.str(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return t, err
	}
	if err := checkID(join(path, "session_id"), t.SessionID, !inner); err != nil {
		return t, err
	}
	if !hasIndex {
		return t, fieldErr(join(path, "turn_index"), "required")
	}
	if err := checkRole(join(path, "role"), t.Role); err != nil {
		return t, err
	}
	if t.Content == "" && len(t.ToolCalls) == 0 && len(t.ToolResults) == 0 && len(t.Attachments) == 0 {
		return t, fieldErr(join(path, "content"), "required: a turn needs content, tool_calls, tool_results or attachments")
	}
	if err := checkID(join(path, "channel"), t.Channel, false); err != nil {
		return t, err
	}
	if err := checkID(join(path, "speaker"), t.Speaker, false); err != nil {
		return t, err
	}
	return t, checkID(join(path, "project"), t.Project, false)
}

func decodeToolCall(r *reader, path string) (ToolCall, error) {
	var c ToolCall
	err := r.object(path, func(key, p string) (err error) {
		switch key {
		case "id":
			c.ID, err = r.str(p)
		case "name":
			c.Name, err = r.str(p)
		case "input":
			c.Input, err = r.raw(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return c, err
	}
	if err := checkID(join(path, "id"), c.ID, false); err != nil {
		return c, err
	}
	return c, checkID(join(path, "name"), c.Name, true)
}

func decodeToolResult(r *reader, path string) (ToolResult, error) {
	var res ToolResult
	err := r.object(path, func(key, p string) (err error) {
		switch key {
		case "tool_call_id":
			res.ToolCallID, err = r.str(p)
		case "content":
			res.Content, err = r.str(p)
		case "is_error":
			res.IsError, err = r.boolean(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return res, err
	}
	return res, checkID(join(path, "tool_call_id"), res.ToolCallID, false)
}

func decodeAttachment(r *reader, path string) (Attachment, error) {
	var a Attachment
	err := r.object(path, func(key, p string) (err error) {
		switch key {
		case "name":
			a.Name, err = r.str(p)
		case "mime":
			a.Mime, err = r.str(p)
		case "size":
			a.Size, err = r.integer(p, 0, MaxAttachmentSize)
		case "path":
			a.Path, err = r.str(p)
		case "url":
			a.URL, err = r.str(p)
		case "direction":
			a.Direction, err = r.str(p)
		case "description":
			a.Description, err = r.str(p)
		case "transcription":
			a.Transcription, err = r.str(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return a, err
	}
	if a.Name == "" {
		return a, fieldErr(join(path, "name"), "required")
	}
	switch a.Direction {
	case "":
		a.Direction = DirectionInbound
	case DirectionInbound, DirectionOutbound:
	default:
		return a, fieldErr(join(path, "direction"), fmt.Sprintf("must be %s or %s, not %s",
			DirectionInbound, DirectionOutbound, quote(a.Direction)))
	}
	return a, nil
}

func decodeCompressing(r *reader, path string) (ContextCompressing, error) {
	var c ContextCompressing
	hasTurns := false
	err := r.object(path, func(key, p string) (err error) {
		switch key {
		case "session_id":
			c.SessionID, err = r.str(p)
		case "turns":
			hasTurns = true
			err = r.array(p, func(_ int, p string) error {
				t, err := decodeTurn(r, p, true)
				c.Turns = append(c.Turns, t)
				return err
			})
		case "summary":
			c.Summary, err = r.str(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return c, err
	}
	if err := checkID(join(path, "session_id"), c.SessionID, true); err != nil {
		return c, err
	}
	if !hasTurns {
		return c, fieldErr(join(path, "turns"), "required")
	}
	if len(c.Turns) == 0 {
		return c, fieldErr(join(path, "turns"), "must hold at least one turn")
	}
	for i := range c.Turns {
		t := &c.Turns[i]
		switch t.SessionID {
		case "":
			t.SessionID = c.SessionID
		case c.SessionID:
		default:
			return c, fieldErr(fmt.Sprintf("%s.turns[%d].session_id", path, i),
				fmt.Sprintf("is %s but the event's session_id is %s; leave it out or make them equal",
					quote(t.SessionID), quote(c.SessionID)))
		}
	}
	return c, nil
}

func decodeSessionEnded(r *reader, path string) (SessionEnded, error) {
	var s SessionEnded
	hasCount := false
	err := r.object(path, func(key, p string) (err error) {
		switch key {
		case "session_id":
			s.SessionID, err = r.str(p)
		case "message_count":
			var n int64
			n, err = r.integer(p, 0, MaxCount)
			s.MessageCount, hasCount = int(n), true
		case "reason":
			s.Reason, err = r.str(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return s, err
	}
	if err := checkID(join(path, "session_id"), s.SessionID, true); err != nil {
		return s, err
	}
	if !hasCount {
		return s, fieldErr(join(path, "message_count"), "required")
	}
	return s, nil
}

func checkRole(field, role string) error {
	return oneOf(field, role, RoleUser, RoleAssistant, RoleSystem, RoleTool)
}

// checkID applies the identifier rules: at most MaxIDBytes of UTF-8 and no
// control characters, which would break logs, subjects and terminals.
// An empty optional identifier is absent.
func checkID(field, s string, required bool) error {
	return checkName(field, s, MaxIDBytes, required)
}

// checkName applies the identifier rules with another limit, for short
// labels such as a memory's subject and predicate.
func checkName(field, s string, limit int, required bool) error {
	switch {
	case s == "" && required:
		return fieldErr(field, "required")
	case len(s) > limit:
		return fieldErr(field, fmt.Sprintf("is %d bytes long; the limit is %d", len(s), limit))
	case !utf8.ValidString(s):
		return fieldErr(field, "is not valid UTF-8")
	}
	for _, c := range s {
		if unicode.IsControl(c) {
			return fieldErr(field, fmt.Sprintf("contains the control character %U", c))
		}
	}
	return nil
}
