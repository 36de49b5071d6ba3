package retrieval

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/contextblock"
	"github.com/engramhq/engram/internal/memory"
)

// What a context asks the agent to ask the user (seed 004): on first
// meeting, who each is (§3, until the user has confirmed, once); and, at
// the end of a reply, up to three memories written with too little
// confidence to keep without them (§7: confirm, ignore or later).

type (
	// IdentityReader reads what a user confirmed on first meeting the
	// agent; ok is false before they have.
	IdentityReader interface {
		Identity(ctx context.Context, scope memory.Scope) (id memory.Identity, ok bool, err error)
	}
	// PendingReader lists the n memories of a user waiting for
	// confirmation, not snoozed at now, that the agent asks about first:
	// those of the session (when not empty) first, newest first.
	PendingReader interface {
		PendingFirst(ctx context.Context, scope memory.Scope, now time.Time, session string, n int) ([]memory.Memory, error)
	}
)

// MaxPendingAsked is how many unconfirmed memories a context offers the
// agent to ask about (seed 004 §7: "最多 1-3 条候选").
const MaxPendingAsked = 3

// Onboarding says the user has not confirmed who the agent is and who
// they are (seed 004 §3): the agent asks once, and sends what the user
// confirmed as identity.confirmed (empty when they decline), after which
// no context asks again.
type Onboarding struct {
	Ask  []string `json:"ask"`  // what to settle with the user, in order
	Send string   `json:"send"` // the event that ends it
}

// onboardingSteps are seed 004 §3's steps.
var onboardingSteps = map[string][]string{
	contextblock.LangEN: {
		"Define who you are to this user: your name, role, tone, boundaries, what you never do, what you do first.",
		"Confirm who the user is: how to address them, their background, their tech preferences, how they like to work.",
		"Show a short summary of both and let the user confirm or change it; a user may decline.",
	},
	contextblock.LangZH: {
		"与用户约定你的身份：名字、角色、语气、边界、禁区、优先行为。",
		"确认用户身份：称呼、职业背景、技术偏好、协作习惯。",
		"输出确认摘要，由用户确认或修改；用户也可以跳过。",
	},
}

// ask fills what the context asks of the agent: the onboarding, when the
// request asks for it, while the user has not confirmed, the agent's card once they have (into the
// profile block, never trimmed), and the unconfirmed memories, those of
// the request's session first, newest first.
func (e *Engine) ask(ctx context.Context, req Request, scope memory.Scope, now time.Time, b *Blocks, resp *Response) {
	if ir, ok := e.Store.(IdentityReader); ok {
		id, confirmed, err := ir.Identity(ctx, scope)
		switch {
		case err != nil:
			e.fall(scope, resp, "identity", "none", err)
		case !confirmed && req.Onboarding != nil && *req.Onboarding:
			resp.Onboarding = &Onboarding{Ask: onboardingSteps[askLang(req)], Send: "identity.confirmed"}
		case !id.Agent.Empty():
			b.Profile = append([]Item{{ID: "agent", Kind: "agent", Content: agentLine(id.Agent), Score: 2,
				Provenance: "agent's card · confirmed " + id.Confirmed.Format("2006-01-02"), Time: id.Confirmed}}, b.Profile...)
		}
	}
	pr, ok := e.Store.(PendingReader)
	if !ok {
		return
	}
	pend, err := pr.PendingFirst(ctx, scope, now, req.SessionID, MaxPendingAsked)
	if err != nil {
		e.fall(scope, resp, "pending", "none", err)
		return
	}
	for _, m := range pend {
		b.Pending = append(b.Pending, Item{ID: m.ID, Kind: "pending", Content: m.Content, Score: m.Confidence, Time: m.Created,
			SessionID: m.SessionID, Provenance: fmt.Sprintf("unconfirmed · %s · POST /v1/pending/%s/confirm|ignore|snooze", m.ID, m.ID)})
	}
}

// agentLine is the agent's card on one line for the profile block.
func agentLine(a memory.AgentIdentity) string {
	var parts []string
	add := func(label, v string) {
		if v = strings.TrimSpace(v); v != "" {
			parts = append(parts, label+v)
		}
	}
	add("You are ", a.Name)
	add("role: ", a.Role)
	add("tone: ", a.Tone)
	add("boundaries: ", strings.Join(a.Boundaries, "; "))
	add("never: ", strings.Join(a.Avoid, "; "))
	add("first: ", strings.Join(a.Priorities, "; "))
	return strings.Join(parts, " · ")
}

// askLang is the language the asks are written in: the request's, else
// that of its query.
func askLang(req Request) string {
	if l := strings.ToLower(req.Lang); strings.HasPrefix(l, contextblock.LangZH) {
		return contextblock.LangZH
	} else if strings.HasPrefix(l, contextblock.LangEN) {
		return contextblock.LangEN
	}
	if chars.HasHan(req.Query) {
		return contextblock.LangZH
	}
	return contextblock.LangEN
}

// renderAsks writes what the context asks of the agent after the memory
// block: the onboarding's steps, and the unconfirmed memories quoted as
// data, each with how to settle it.
func renderAsks(req Request, b Blocks, on *Onboarding) string {
	zh := askLang(req) == contextblock.LangZH
	var sb strings.Builder
	if on != nil {
		if zh {
			sb.WriteString("\n### 首次见面（只问一次）\n身份尚未确认。请在本次对话中：\n")
		} else {
			sb.WriteString("\n### First meeting (asked once)\nThe identities are not confirmed yet. In this conversation:\n")
		}
		for i, s := range on.Ask {
			fmt.Fprintf(&sb, "%d. %s\n", i+1, s)
		}
		if zh {
			sb.WriteString("确认后发送 identity.confirmed 事件（用户跳过时发送空事件），之后不再询问。\n")
		} else {
			sb.WriteString("Then send the identity.confirmed event (an empty one if the user declines); it is not asked again.\n")
		}
	}
	if len(b.Pending) > 0 {
		if zh {
			sb.WriteString("\n### 待确认的记忆\n在回复末尾请用户确认、忽略或稍后再说（每条一次）：\n")
		} else {
			sb.WriteString("\n### Memories to confirm\nAt the end of your reply, ask the user to confirm, ignore or postpone each:\n")
		}
		sb.WriteString(contextblock.RenderItems(toCB(b.Pending)))
	}
	return sb.String()
}
