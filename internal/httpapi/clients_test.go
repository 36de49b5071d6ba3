package httpapi

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// clientOps are the answers the clients wrap ("METHOD path status"), each
// with the member a client unwraps and returns (whose own name it need
// not spell).
var clientOps = []struct{ op, unwrap string }{
	{"post /v1/events 202", ""},
	{"post /v1/context 200", ""},
	{"get /v1/search 200", "results"},
	{"get /v1/memories 200", "memories"},
	{"post /v1/memories 202", ""},
	{"get /v1/memories/{id} 200", ""},
	{"patch /v1/memories/{id} 202", ""},
	{"delete /v1/memories/{id} 202", ""},
	{"get /v1/pending 200", "pending"},
	{"post /v1/pending/{id}/{action} 202", ""},
	{"get /v1/episodes 200", "episodes"},
	{"get /v1/scratchpad 200", "scratchpad"},
	{"get /v1/profile 200", ""},
	{"get /v1/users 200", "users"},
	{"get /readyz 200", ""},
}

// The clients' types name every member of every answer they wrap, as
// the OpenAPI document gives it: engram.d.ts's interfaces (`name:` or
// `name?:`) and engram.py's TypedDicts (`name: type`). A field added to
// the API and not to a client fails here.
func TestClientTypesCoverTheAPI(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	dts := readClient(t, "../../clients/typescript/engram.d.ts")
	py := pythonTypedDictFields(readClient(t, "../../clients/python/engram.py"))
	for _, c := range clientOps {
		parts := strings.Fields(c.op)
		schema := dig(doc, "paths", parts[1], parts[0], "responses", parts[2], "content", "application/json", "schema")
		if schema == nil {
			t.Errorf("openapi.json has no JSON answer for %s", c.op)
			continue
		}
		names := map[string]bool{}
		members(doc, schema, names, map[string]bool{})
		delete(names, c.unwrap)
		var inTS, inPy []string
		for _, n := range sorted(names) {
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(n) + `\??:`).MatchString(dts) {
				inTS = append(inTS, n)
			}
			if !py[n] {
				inPy = append(inPy, n)
			}
		}
		if len(inTS) > 0 {
			t.Errorf("%s: engram.d.ts does not name %v", c.op, inTS)
		}
		if len(inPy) > 0 {
			t.Errorf("%s: engram.py's TypedDicts do not name %v", c.op, inPy)
		}
	}
}

func readClient(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pythonTypedDictFields are the keys the TypedDict classes of a module
// declare.
func pythonTypedDictFields(src string) map[string]bool {
	out := map[string]bool{}
	field := regexp.MustCompile(`^    ([a-z_]+): `)
	in := false
	for _, line := range strings.Split(src, "\n") {
		switch {
		case strings.HasPrefix(line, "class ") && strings.Contains(line, "(TypedDict"):
			in = true
		case line != "" && !strings.HasPrefix(line, " "):
			in = false
		case in:
			if m := field.FindStringSubmatch(line); m != nil {
				out[m[1]] = true
			}
		}
	}
	return out
}

// members collects the property names a schema (and what it refers to)
// declares, at any depth.
func members(doc map[string]any, v any, into map[string]bool, seen map[string]bool) {
	s, ok := v.(map[string]any)
	if !ok {
		return
	}
	if ref, ok := s["$ref"].(string); ok {
		if seen[ref] {
			return
		}
		seen[ref] = true
		members(doc, dig(doc, strings.Split(strings.TrimPrefix(ref, "#/"), "/")...), into, seen)
		return
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for name, p := range props {
			into[name] = true
			members(doc, p, into, seen)
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		members(doc, s[k], into, seen)
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := s[k].([]any); ok {
			for _, x := range list {
				members(doc, x, into, seen)
			}
		}
	}
}

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

func sorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return slices.Compact(out)
}
