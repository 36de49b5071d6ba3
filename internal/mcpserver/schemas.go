package mcpserver

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/memory"
	"github.com/google/jsonschema-go/jsonschema"
)

// Enums of the tools' inputs, from the domain's own lists.
var (
	kinds      = enum(memory.Kinds)
	categories = enum(memory.Categories)
	roles      = []any{"user", "assistant", "system", "tool"}
	statuses   = []any{"active", "pending", "superseded", "rejected", "archived", "all"}
	actions    = []any{"confirm", "ignore", "snooze"}
)

func enum[T ~string](list []T) []any {
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = string(v)
	}
	return out
}

// input is the input schema of a tool taking In: derived from In's fields
// and their descriptions, then given what reflection cannot see: the
// enums (by property), the required properties (user among them unless
// the server has a default user), and properties that need others.
func input[In any](defaultUser bool, required []string, enums map[string][]any, dependent map[string][]string) *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("input schema of %T: %v", *new(In), err)) // the types are ours: a bug
	}
	if !defaultUser {
		required = append([]string{"user"}, required...)
	}
	s.Required = required
	for name, values := range enums {
		p, ok := s.Properties[name]
		if !ok {
			panic(fmt.Sprintf("input schema of %T has no property %q", *new(In), name))
		}
		p.Enum = values
	}
	s.DependentRequired = dependent
	return s
}

// The output schemas are the OpenAPI document's schemas of the routes
// each tool calls: a tool's structured content is the API's answer.
var openAPI = sync.OnceValue(func() map[string]any {
	var doc map[string]any
	if err := json.Unmarshal(httpapi.OpenAPI, &doc); err != nil {
		panic(fmt.Sprintf("openapi.json: %v", err)) // embedded and tested: a bug
	}
	return doc
})

var componentRef = regexp.MustCompile(`"#/components/schemas/([A-Za-z]+)`)

// output is an object schema for the answers of the given operations
// ("POST /v1/memories 202"): that answer's schema, or any of them, with
// the components it refers to as $defs.
func output(ops ...string) map[string]any {
	doc := openAPI()
	var alts []any
	for _, op := range ops {
		parts := strings.Fields(op)
		method, path, status := strings.ToLower(parts[0]), parts[1], parts[2]
		schema := dig(doc, "paths", path, method, "responses", status, "content", "application/json", "schema")
		if schema == nil {
			panic("openapi.json has no JSON answer for " + op)
		}
		alts = append(alts, schema)
	}
	out := map[string]any{"type": "object"}
	if len(alts) == 1 {
		for k, v := range alts[0].(map[string]any) {
			out[k] = v
		}
	} else {
		out["anyOf"] = alts
	}
	// Every component the schema reaches, refs rewritten to $defs.
	components := dig(doc, "components", "schemas").(map[string]any)
	defs := map[string]any{}
	var reach func(v any)
	reach = func(v any) {
		b, _ := json.Marshal(v)
		for _, m := range componentRef.FindAllStringSubmatch(string(b), -1) {
			if _, ok := defs[m[1]]; !ok {
				defs[m[1]] = components[m[1]]
				reach(components[m[1]])
			}
		}
	}
	reach(out)
	if len(defs) > 0 {
		out["$defs"] = defs
	}
	b, _ := json.Marshal(out)
	b = []byte(strings.ReplaceAll(string(b), `"#/components/schemas/`, `"#/$defs/`))
	var schema map[string]any
	if err := json.Unmarshal(b, &schema); err != nil {
		panic(err)
	}
	return schema
}

// dig walks nested objects by key; nil when a key is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
