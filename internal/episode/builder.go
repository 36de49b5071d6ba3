package episode

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/memory"
)

// ErrNoModel is returned by a Builder with no Client: use Extractive.
var ErrNoModel = errors.New("episode: no LLM client configured")

// ErrBadOutput matches (errors.Is) every *OutputError: the model
// answered, but nothing in its reply could be used.
var ErrBadOutput = errors.New("episode: unusable model output")

// OutputError is a reply that parsed to nothing usable. It carries what
// the call cost, since the tokens were spent all the same.
type OutputError struct {
	Op           string // "episode" or "scratchpad"
	Model        string
	Usage        llm.Usage
	FinishReason string // "length" means the reply hit the completion cap
	Err          error  // why the parser refused it
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("episode: unusable %s reply from %s (finish %q): %v", e.Op, e.Model, e.FinishReason, e.Err)
}

// Unwrap lets errors.Is match both ErrBadOutput and the parse error.
func (e *OutputError) Unwrap() []error { return []error{ErrBadOutput, e.Err} }

// Builder writes episodes and scratchpads with a model.
type Builder struct {
	Client *llm.Client
}

// Build writes the episode of in with one chat call in JSON mode, merged
// over the extractive episode: the model's summary, goal and outcome
// replace the extractive ones when it gave them; its entities come after
// the turns' projects and before the extractive entities (MaxEntities in
// all); its decisions are added as decision nodes (Tool empty) at the turn
// it named, or the last turn. Tool action nodes and Tools always come from
// the turns, never from the model; importance is the extractive formula
// with the model's decisions counted.
//
// Any error — the client's (wrapped; errors.As finds the *llm.Error for
// the caller to classify), an unusable reply (*OutputError, ErrBadOutput), no
// Client (ErrNoModel) — leaves the episode empty: the caller falls back to
// Extractive. Usage is what the call cost, also on a bad reply. When no
// turn has anything in it, Build returns the extractive episode without
// a call.
func (b *Builder) Build(ctx context.Context, in Input) (memory.Episode, llm.Usage, error) {
	if b == nil || b.Client == nil {
		return memory.Episode{}, llm.Usage{}, ErrNoModel
	}
	s := analyse(in)
	ep := s.episode(in)
	if s.busyTurns == 0 && strings.TrimSpace(in.Summary) == "" {
		return ep, llm.Usage{}, nil
	}
	resp, err := b.Client.Chat(ctx, episodePrompt(s, in.Summary), true)
	if err != nil {
		return memory.Episode{}, llm.Usage{}, fmt.Errorf("build episode %s: %w", ep.ID, err)
	}
	r, err := parseEpisodeReply(resp.Content)
	if err != nil {
		return memory.Episode{}, resp.Usage, &OutputError{Op: "episode", Model: b.model(resp), Usage: resp.Usage, FinishReason: resp.FinishReason, Err: err}
	}
	return mergeReply(s, ep, r), resp.Usage, nil
}

func (b *Builder) model(resp *llm.Response) string {
	if resp.Model != "" {
		return resp.Model
	}
	return b.Client.Model()
}

// mergeReply lays a model's reply over the extractive episode.
func mergeReply(s *session, ep memory.Episode, r episodeReply) memory.Episode {
	if r.summary != "" {
		ep.Summary = r.summary
	}
	if r.goal != "" {
		ep.Goal = r.goal
	}
	if r.outcome != "" {
		ep.Outcome = r.outcome
	}

	var projects, others []string
	for _, e := range ep.Entities {
		if strings.HasPrefix(e, ProjectPrefix) {
			projects = append(projects, e)
		} else {
			others = append(others, e)
		}
	}
	// Only the turns say which entities are projects.
	model := slices.DeleteFunc(slices.Clone(r.entities), func(e string) bool { return strings.HasPrefix(e, ProjectPrefix) })
	ep.Entities = []string{}
	seen := map[string]bool{}
	for _, group := range [][]string{projects, model, others} {
		for _, e := range group {
			if k := strings.ToLower(e); !seen[k] && len(ep.Entities) < MaxEntities {
				seen[k] = true
				ep.Entities = append(ep.Entities, e)
			}
		}
	}

	if len(r.decisions) > 0 {
		covered := map[int]bool{}
		for _, t := range ep.Turns {
			covered[t] = true
		}
		last := 0
		if n := len(ep.Turns); n > 0 {
			last = ep.Turns[n-1]
		}
		actions := slices.Clone(ep.Actions)
		for _, d := range r.decisions {
			turn := last
			if d.hasTurn && covered[d.turn] {
				turn = d.turn
			}
			// A decision is a step taken: not a failed one.
			actions = append(actions, memory.ActionNode{Decision: d.text, Turn: turn, Success: true})
		}
		// Stable: a decision follows the tool calls of its turn.
		slices.SortStableFunc(actions, func(a, b memory.ActionNode) int { return cmp.Compare(a.Turn, b.Turn) })
		ep.Actions = actions
	}
	ep.Importance = s.importance(max(s.decisions, len(r.decisions)))
	return ep
}

// UpdateScratchpad writes the scratchpad that follows prev after ep with
// one chat call in JSON mode. The model sees the previous lists and the
// episode and returns whole new lists (it drops what the session
// resolved); a field it leaves out is filled in as the extractive
// UpdateScratchpad would. The episode's projects always lead the list,
// and rendering, limits and a person's text follow UpdateScratchpad
// exactly. Errors are as for Build: fall back to UpdateScratchpad.
func (b *Builder) UpdateScratchpad(ctx context.Context, prev memory.Scratchpad, ep memory.Episode, now time.Time) (memory.Scratchpad, llm.Usage, error) {
	if b == nil || b.Client == nil {
		return memory.Scratchpad{}, llm.Usage{}, ErrNoModel
	}
	resp, err := b.Client.Chat(ctx, scratchpadPrompt(prev, ep), true)
	if err != nil {
		return memory.Scratchpad{}, llm.Usage{}, fmt.Errorf("update scratchpad from %s: %w", ep.ID, err)
	}
	r, err := parseScratchpadReply(resp.Content)
	if err != nil {
		return memory.Scratchpad{}, resp.Usage, &OutputError{Op: "scratchpad", Model: b.model(resp), Usage: resp.Usage, FinishReason: resp.FinishReason, Err: err}
	}
	u := merged(prev, ep, extractiveUpdate(ep))
	if r.hasProjects {
		u.projects = r.projects
	}
	if r.hasQuestions {
		u.questions = r.questions
	}
	if r.hasSteps {
		u.steps = r.steps
	}
	if r.focus != "" {
		u.focus = r.focus
	}
	if r.progress != "" {
		u.progress = r.progress
	}
	return apply(prev, ep, u, now), resp.Usage, nil
}
