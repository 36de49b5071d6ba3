package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/engramhq/engram"

// owners says which of our packages may import an outside dependency.
// Every outside dependency has one home (two for NATS: the event stream
// and the request-reply services; internal/app composes them and names
// nats.go nowhere, holding stream's handles).
var owners = map[string][]string{
	"github.com/nats-io/":              {"internal/stream", "internal/natsapi"},
	"github.com/tiktoken-go/":          {"internal/tokens"},
	"modernc.org/sqlite":               {"internal/sqlite"},
	"github.com/cloudevents/sdk-go":    {"events", "internal/stream", "internal/httpapi", "internal/app", "internal/migrate"},
	"go.yaml.in/yaml":                  {"internal/config", "internal/rules"},
	"github.com/schollz/progressbar":   {"internal/app"},
	"github.com/prometheus/":           {"internal/metrics"},
	"github.com/modelcontextprotocol/": {"internal/mcpserver"},
	"github.com/google/jsonschema-go":  {"internal/mcpserver"},
	// The JSON library that becomes encoding/json/v2: the event contract
	// reads with it, and the masker walks JSON with its tokenizer.
	"github.com/go-json-experiment/json": {"events", "internal/secrets"},
}

// leaves are the pure packages: each may import only the standard library
// and what is listed (events: the public contract; memory: the domain,
// which imports nothing). This one test keeps them pure; packages do not
// carry imports tests of their own.
var leaves = map[string][]string{
	"internal/chars":        {},
	"internal/quiet":        {},
	"internal/gencache":     {},
	"internal/memory":       {},
	"events":                {"github.com/cloudevents/sdk-go/v2/event", "github.com/go-json-experiment/json", "github.com/go-json-experiment/json/jsontext"},
	"internal/textseg":      {"github.com/blevesearch/go-porterstemmer"},
	"internal/llm":          {},
	"internal/secrets":      {"github.com/go-json-experiment/json/jsontext"},
	"internal/prefilter":    {},
	"internal/vector":       {},
	"internal/ruleextract":  {"internal/memory"},
	"internal/contextblock": {"internal/memory"},
	"internal/maintain":     {"internal/memory"},
	"internal/cards":        {"internal/memory", "internal/maintain"},
	"internal/llmextract":   {"internal/memory", "internal/llm", "internal/ruleextract"},
	"internal/dedupe":       {"internal/memory", "internal/llm", "internal/textseg"},
	"internal/episode":      {"internal/memory", "internal/llm"},
	"internal/rules":        {"go.uber.org/zap", "go.yaml.in/yaml/v3"},
	"internal/extractreq":   {"events", "internal/memory", "internal/rules"},
	"internal/tokens":       {"github.com/tiktoken-go/tokenizer/codec"},
	"internal/migrate":      {"github.com/cloudevents/sdk-go/v2/event", "events", "internal/memory"},
}

// floor holds the packages beneath every other: they are leaves that
// import only the standard library, and any package may import them as it
// would the standard library, the domain included. internal/chars is the
// one home of the rune classes and cuts that every package must agree on;
// internal/quiet, of the errors dropped on purpose; internal/gencache, of
// the two-generation caches.
var floor = []string{"internal/chars", "internal/quiet", "internal/gencache"}

// workers are the packages that do engram's work; they depend on the
// domain and small interfaces, never on the packages that wrap outside
// dependencies, nor on each other.
var workers = []string{"internal/projector", "internal/extraction", "internal/retrieval", "internal/consolidation", "internal/embedding"}

var wrappers = []string{"internal/stream", "internal/sqlite", "internal/httpapi", "internal/natsapi", "internal/app", "internal/cli"}

type pkg struct {
	ImportPath string
	Imports    []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func rel(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

func isStd(imp string) bool { return !strings.Contains(strings.Split(imp, "/")[0], ".") }

func TestImports(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, p := range pkgs {
		me := rel(p.ImportPath)
		for _, imp := range p.Imports {
			if isStd(imp) || contains(floor, rel(imp)) {
				continue
			}
			ours := strings.HasPrefix(imp, module)
			if allowed, ok := leaves[me]; ok {
				if !contains(allowed, rel(imp)) && !contains(allowed, imp) {
					t.Errorf("%s is a leaf package but imports %s", me, imp)
				}
				continue
			}
			if ours {
				if contains(workers, me) && (contains(wrappers, rel(imp)) || contains(workers, rel(imp))) {
					t.Errorf("worker %s imports %s", me, rel(imp))
				}
				if strings.HasPrefix(me, "cmd/") && !contains([]string{"internal/app", "internal/cli", "internal/config", "internal/bench"}, rel(imp)) {
					t.Errorf("%s only wires; it imports %s", me, rel(imp))
				}
				continue
			}
			for prefix, homes := range owners {
				if strings.HasPrefix(imp, prefix) && !contains(homes, me) {
					t.Errorf("%s imports %s, which only %v may", me, imp, homes)
				}
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
