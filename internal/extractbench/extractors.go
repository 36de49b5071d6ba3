package extractbench

import (
	"context"
	"encoding/json"

	"github.com/engramhq/engram/internal/llmextract"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/ruleextract"
)

// Rules is the rule extractor, called as engram's extractor calls it.
func Rules(_ context.Context, t Turn) ([]memory.Candidate, error) {
	in := ruleextract.Input{Role: t.Role, Content: t.Content, Project: t.Project}
	for _, c := range t.ToolCalls {
		in.ToolCalls = append(in.ToolCalls, ruleextract.ToolCall{ID: c.ID, Name: c.Name, Input: string(c.Input)})
	}
	for _, r := range t.ToolResults {
		res := ruleextract.ToolResult{ToolCallID: r.ToolCallID, Content: r.Content, IsError: r.IsError}
		if r.Name != "" || r.Command != "" {
			cmd, _ := json.Marshal(map[string]string{"command": r.Command})
			res.Call = ruleextract.ToolCall{ID: r.ToolCallID, Name: r.Name, Input: string(cmd)}
		}
		in.ToolResults = append(in.ToolResults, res)
	}
	return ruleextract.Extract(in), nil
}

// LLM measures a model through llmextract, one turn per request, with no
// known facts: the prompt engram sends for a batch of one.
func LLM(x *llmextract.Extractor) Extractor {
	return func(ctx context.Context, t Turn) ([]memory.Candidate, error) {
		lt := llmextract.Turn{Role: t.Role, Content: t.Content}
		byID := map[string]ToolCall{}
		for _, c := range t.ToolCalls {
			lt.ToolCalls = append(lt.ToolCalls, llmextract.ToolCall{Name: c.Name, Input: string(c.Input)})
			byID[c.ID] = c
		}
		for _, r := range t.ToolResults {
			if _, ok := byID[r.ToolCallID]; !ok && r.Name != "" {
				cmd, _ := json.Marshal(map[string]string{"command": r.Command})
				lt.ToolCalls = append(lt.ToolCalls, llmextract.ToolCall{Name: r.Name, Input: string(cmd)})
			}
			lt.ToolResults = append(lt.ToolResults, llmextract.ToolResult{Content: r.Content, IsError: r.IsError})
		}
		res, err := x.Extract(ctx, []llmextract.Turn{lt}, nil, llmextract.Options{Project: t.Project})
		if err != nil {
			return nil, err
		}
		return res.Candidates, nil
	}
}
