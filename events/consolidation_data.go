package events

import (
	"fmt"
	"regexp"
	"time"
)

var (
	outcomes        = []string{OutcomeCompleted, OutcomePartial, OutcomeFailed, OutcomeAbandoned, OutcomeOngoing}
	episodeSources  = []string{SourceSessionEnd, SourceCompression, SourceSweep}
	scratchSources  = []string{SourceEpisode, SourcePerson}
	dailySources    = []string{SourceCompression, SourceMigration}
	archiveReasons  = []string{ArchiveDecay, ArchiveExpired, ArchiveCap, ArchiveManual}
	degradedFrom    = []string{RecallVectors, RecallFTS}
	degradedTo      = []string{RecallFTS, RecallRecent}
	recallRank      = map[string]int{RecallVectors: 0, RecallFTS: 1, RecallRecent: 2}
	calendarDatePat = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`) // copied into schema/daily.summarized.json
)

func decodeEpisode(r *reader, path string) (Episode, error) {
	var x Episode
	has := map[string]bool{}
	err := r.object(path, func(key, p string) (err error) {
		has[key] = true
		switch key {
		case "id":
			x.ID, err = r.str(p)
		case "session_id":
			x.SessionID, err = r.str(p)
		case "summary":
			x.Summary, err = r.str(p)
		case "goal":
			x.Goal, err = r.str(p)
		case "outcome":
			x.Outcome, err = r.str(p)
		case "started":
			x.Started, err = r.timestamp(p)
		case "ended":
			x.Ended, err = r.timestamp(p)
		case "actions":
			err = r.array(p, func(i int, p string) error {
				if i == MaxEpisodeActions {
					return tooMany(join(path, "actions"), MaxEpisodeActions, "actions")
				}
				a, err := decodeAction(r, p)
				x.Actions = append(x.Actions, a)
				return err
			})
		case "entities":
			x.Entities, err = decodeIDList(r, p, MaxEpisodeEntities, "entities")
		case "tools":
			x.Tools, err = decodeIDList(r, p, MaxEpisodeEntities, "tools")
		case "linked_memories":
			x.LinkedMemories, err = decodeIDList(r, p, MaxEpisodeActions, "memory ids")
		case "importance":
			x.Importance, err = r.fraction(p)
		case "source":
			x.Source, err = r.str(p)
		case "turns":
			x.Turns, err = decodeIndexes(r, p, MaxEpisodeTurns)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	err = firstErr(
		checkID(join(path, "id"), x.ID, true),
		checkID(join(path, "session_id"), x.SessionID, true),
		checkProse(join(path, "summary"), x.Summary, MaxEpisodeSummaryBytes, true),
		checkProse(join(path, "goal"), x.Goal, MaxNoteBytes, false),
		oneOf(join(path, "outcome"), x.Outcome, outcomes...),
		missing(path, has, "started", "ended"),
	)
	if err != nil {
		return x, err
	}
	if x.Ended.Before(x.Started) {
		return x, fieldErr(join(path, "ended"), "is before started")
	}
	if err := missing(path, has, "importance"); err != nil {
		return x, err
	}
	if err := oneOf(join(path, "source"), x.Source, episodeSources...); err != nil {
		return x, err
	}
	return x, missing(path, has, "turns")
}

func decodeAction(r *reader, path string) (ActionNode, error) {
	var a ActionNode
	hasTurn := false
	err := r.object(path, func(key, p string) (err error) {
		switch key {
		case "tool":
			a.Tool, err = r.str(p)
		case "params":
			a.Params, err = r.str(p)
		case "result":
			a.Result, err = r.str(p)
		case "success":
			a.Success, err = r.boolean(p)
		case "error":
			a.Error, err = r.str(p)
		case "decision":
			a.Decision, err = r.str(p)
		case "turn":
			var n int64
			n, err = r.integer(p, 0, MaxCount)
			a.Turn, hasTurn = int(n), true
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return a, err
	}
	if a.Tool == "" && a.Decision == "" {
		return a, fieldErr(join(path, "tool"), "required: an action needs a tool or a decision")
	}
	err = firstErr(
		checkID(join(path, "tool"), a.Tool, false),
		checkProse(join(path, "params"), a.Params, MaxNoteBytes, false),
		checkProse(join(path, "result"), a.Result, MaxNoteBytes, false),
		checkProse(join(path, "error"), a.Error, MaxNoteBytes, false),
		checkProse(join(path, "decision"), a.Decision, MaxNoteBytes, false),
	)
	if err != nil {
		return a, err
	}
	if !hasTurn {
		return a, fieldErr(join(path, "turn"), "required")
	}
	return a, nil
}

func decodeScratchpad(r *reader, path string) (Scratchpad, error) {
	var x Scratchpad
	has := map[string]bool{}
	err := r.object(path, func(key, p string) (err error) {
		has[key] = true
		switch key {
		case "content":
			x.Content, err = r.str(p)
		case "active_projects":
			x.ActiveProjects, err = decodeIDList(r, p, MaxScratchpadItems, "projects")
		case "current_focus":
			x.CurrentFocus, err = r.str(p)
		case "open_questions":
			x.OpenQuestions, err = decodeNotes(r, p, "questions")
		case "next_steps":
			x.NextSteps, err = decodeNotes(r, p, "steps")
		case "source":
			x.Source, err = r.str(p)
		case "episode_id":
			x.EpisodeID, err = r.str(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	err = firstErr(
		missing(path, has, "content"),
		checkProse(join(path, "content"), x.Content, MaxScratchpadBytes, false),
		checkProse(join(path, "current_focus"), x.CurrentFocus, MaxNoteBytes, false),
		oneOf(join(path, "source"), x.Source, scratchSources...),
	)
	if err != nil {
		return x, err
	}
	if x.Source == SourcePerson {
		if has["episode_id"] {
			return x, fieldErr(join(path, "episode_id"), "is only for source "+SourceEpisode)
		}
		return x, nil
	}
	return x, checkID(join(path, "episode_id"), x.EpisodeID, true)
}

// decodeNotes reads a list of short, non-empty texts: a scratchpad's
// questions or steps.
func decodeNotes(r *reader, path, what string) ([]string, error) {
	var out []string
	err := r.array(path, func(i int, p string) error {
		if i == MaxScratchpadItems {
			return tooMany(path, MaxScratchpadItems, what)
		}
		s, err := r.str(p)
		if err == nil {
			err = checkProse(p, s, MaxNoteBytes, true)
		}
		out = append(out, s)
		return err
	})
	return out, err
}

// decodeIDList reads a list of at most limit identifiers, none empty and
// none twice: lists of memories, tools and entities are sets, and a
// repeat is a producer's mistake that would count twice downstream.
func decodeIDList(r *reader, path string, limit int, what string) ([]string, error) {
	var out []string
	seen := make(map[string]bool)
	err := r.array(path, func(i int, p string) error {
		if i == limit {
			return tooMany(path, limit, what)
		}
		s, err := r.str(p)
		if err != nil {
			return err
		}
		if err := checkID(p, s, true); err != nil {
			return err
		}
		if seen[s] {
			return fieldErr(p, fmt.Sprintf("%s is listed twice", quote(s)))
		}
		seen[s] = true
		out = append(out, s)
		return nil
	})
	return out, err
}

func decodeProfileRefreshed(r *reader, path string) (ProfileRefreshed, error) {
	var x ProfileRefreshed
	has := map[string]bool{}
	err := r.object(path, func(key, p string) (err error) {
		has[key] = true
		switch key {
		case "memory_ids":
			x.MemoryIDs, err = decodeIDList(r, p, MaxProfileMemories, "memory ids")
			if x.MemoryIDs == nil {
				x.MemoryIDs = []string{} // present and empty is not absent
			}
		case "demoted":
			x.Demoted, err = decodeIDList(r, p, MaxProfileMemories, "memory ids")
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	if err := missing(path, has, "memory_ids"); err != nil {
		return x, err
	}
	kept := make(map[string]bool, len(x.MemoryIDs))
	for _, id := range x.MemoryIDs {
		kept[id] = true
	}
	for i, id := range x.Demoted {
		if kept[id] {
			return x, fieldErr(fmt.Sprintf("%s.demoted[%d]", path, i),
				fmt.Sprintf("%s is also in memory_ids; a demoted memory has left the profile", quote(id)))
		}
	}
	return x, nil
}

func decodeDailySummary(r *reader, path string) (DailySummary, error) {
	var x DailySummary
	has := map[string]bool{}
	err := r.object(path, func(key, p string) (err error) {
		has[key] = true
		switch key {
		case "date":
			x.Date, err = r.str(p)
		case "channel":
			x.Channel, err = r.str(p)
		case "summary":
			x.Summary, err = r.str(p)
		case "raw_tokens":
			var n int64
			n, err = r.integer(p, 0, MaxCount)
			x.RawTokens = int(n)
		case "source":
			x.Source, err = r.str(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	return x, firstErr(
		checkDate(join(path, "date"), x.Date),
		checkID(join(path, "channel"), x.Channel, true),
		checkProse(join(path, "summary"), x.Summary, MaxDailySummaryBytes, true),
		missing(path, has, "raw_tokens"),
		oneOf(join(path, "source"), x.Source, dailySources...),
	)
}

// checkDate checks a calendar date written YYYY-MM-DD.
func checkDate(field, s string) error {
	switch {
	case s == "":
		return fieldErr(field, "required")
	case !calendarDatePat.MatchString(s):
		return fieldErr(field, "must be a date like 2025-06-01, not "+quote(s))
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		return fieldErr(field, "is not a real date: "+quote(s))
	}
	return nil
}

func decodeMemoriesMerged(r *reader, path string) (MemoriesMerged, error) {
	var x MemoriesMerged
	has := map[string]bool{}
	err := r.object(path, func(key, p string) (err error) {
		has[key] = true
		switch key {
		case "into":
			x.Into, err = r.str(p)
		case "merged":
			x.Merged, err = decodeIDList(r, p, MaxMemoryBatch, "memory ids")
		case "importance":
			x.Importance, err = r.fraction(p)
		case "content":
			x.Content, err = r.str(p)
		case "cluster_id":
			x.ClusterID, err = r.str(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	if err := checkID(join(path, "into"), x.Into, true); err != nil {
		return x, err
	}
	if err := missing(path, has, "merged"); err != nil {
		return x, err
	}
	if len(x.Merged) == 0 {
		return x, fieldErr(join(path, "merged"), "must hold at least one memory id")
	}
	for i, id := range x.Merged {
		if id == x.Into {
			return x, fieldErr(fmt.Sprintf("%s.merged[%d]", path, i),
				fmt.Sprintf("%s is the memory merged into; list only the others", quote(id)))
		}
	}
	if err := missing(path, has, "importance"); err != nil {
		return x, err
	}
	if has["content"] && x.Content == "" {
		return x, fieldErr(join(path, "content"), "must not be empty; leave it out to keep the memory's content")
	}
	return x, firstErr(
		checkProse(join(path, "content"), x.Content, MaxMemoryContentBytes, false),
		checkID(join(path, "cluster_id"), x.ClusterID, true),
	)
}

func decodeMemoriesArchived(r *reader, path string) (MemoriesArchived, error) {
	var x MemoriesArchived
	has := map[string]bool{}
	err := r.object(path, func(key, p string) (err error) {
		has[key] = true
		switch key {
		case "memory_ids":
			x.MemoryIDs, err = decodeIDList(r, p, MaxMemoryBatch, "memory ids")
		case "reason":
			x.Reason, err = r.str(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	if err := missing(path, has, "memory_ids"); err != nil {
		return x, err
	}
	if len(x.MemoryIDs) == 0 {
		return x, fieldErr(join(path, "memory_ids"), "must hold at least one memory id")
	}
	return x, oneOf(join(path, "reason"), x.Reason, archiveReasons...)
}

func decodeMemoriesAccessed(r *reader, path string) (MemoriesAccessed, error) {
	var x MemoriesAccessed
	hasAccesses := false
	seen := make(map[string]int)
	err := r.object(path, func(key, p string) (err error) {
		switch key {
		case "accesses":
			hasAccesses = true
			err = r.array(p, func(i int, p string) error {
				if i == MaxMemoryBatch {
					return tooMany(join(path, "accesses"), MaxMemoryBatch, "accesses")
				}
				a, err := decodeAccess(r, p)
				if err != nil {
					return err
				}
				if j, ok := seen[a.MemoryID]; ok {
					return fieldErr(join(p, "memory_id"), fmt.Sprintf("%s is also accesses[%d]; add the counts into one", quote(a.MemoryID), j))
				}
				seen[a.MemoryID] = i
				x.Accesses = append(x.Accesses, a)
				return nil
			})
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	if !hasAccesses {
		return x, fieldErr(join(path, "accesses"), "required")
	}
	if len(x.Accesses) == 0 {
		return x, fieldErr(join(path, "accesses"), "must hold at least one access")
	}
	return x, nil
}

func decodeAccess(r *reader, path string) (Access, error) {
	var a Access
	has := map[string]bool{}
	err := r.object(path, func(key, p string) (err error) {
		has[key] = true
		switch key {
		case "memory_id":
			a.MemoryID, err = r.str(p)
		case "count":
			var n int64
			n, err = r.integer(p, 1, MaxCount)
			a.Count = int(n)
		case "last":
			a.Last, err = r.timestamp(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return a, err
	}
	if err := checkID(join(path, "memory_id"), a.MemoryID, true); err != nil {
		return a, err
	}
	return a, missing(path, has, "count", "last")
}

func decodeRetrievalDegraded(r *reader, path string) (RetrievalDegraded, error) {
	var x RetrievalDegraded
	err := r.object(path, func(key, p string) (err error) {
		switch key {
		case "from":
			x.From, err = r.str(p)
		case "to":
			x.To, err = r.str(p)
		case "reason":
			x.Reason, err = r.str(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	err = firstErr(
		oneOf(join(path, "from"), x.From, degradedFrom...),
		oneOf(join(path, "to"), x.To, degradedTo...),
	)
	if err != nil {
		return x, err
	}
	if recallRank[x.To] <= recallRank[x.From] {
		return x, fieldErr(join(path, "to"), fmt.Sprintf("is not below %s in the chain %s → %s → %s",
			quote(x.From), RecallVectors, RecallFTS, RecallRecent))
	}
	return x, checkProse(join(path, "reason"), x.Reason, MaxReasonBytes, true)
}

func decodeUserForgotten(r *reader, path string) (UserForgotten, error) {
	var x UserForgotten
	err := r.object(path, func(key, p string) (err error) {
		switch key {
		case "reason":
			x.Reason, err = r.str(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	return x, checkProse(join(path, "reason"), x.Reason, MaxReasonBytes, false)
}

func decodeTurnsExpired(r *reader, path string) (TurnsExpired, error) {
	var x TurnsExpired
	var seen bool
	err := r.object(path, func(key, p string) (err error) {
		switch key {
		case "before_seq":
			var n int64
			n, err = r.integer(p, 1, 1<<53)
			x.BeforeSeq, seen = uint64(n), true
		case "stored_before":
			x.StoredBefore, err = r.timestamp(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	if !seen {
		return x, fieldErr(join(path, "before_seq"), "required")
	}
	if x.StoredBefore.IsZero() {
		return x, fieldErr(join(path, "stored_before"), "required")
	}
	return x, nil
}
