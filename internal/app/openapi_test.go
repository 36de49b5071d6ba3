package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// apiDoc is the OpenAPI document, its path templates compiled, and the
// schemas of its JSON responses compiled as they are first needed.
type apiDoc struct {
	doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]json.RawMessage
			}
		}
	}
	templates []*pathTemplate
	compiler  *jsonschema.Compiler
	mu        sync.Mutex
	schemas   map[string]*jsonschema.Schema
}

type pathTemplate struct {
	path string
	re   *regexp.Regexp
}

const openAPIURL = "file:///openapi.json"

var loadAPIDoc = sync.OnceValues(func() (*apiDoc, error) {
	d := &apiDoc{schemas: map[string]*jsonschema.Schema{}}
	if err := json.Unmarshal(httpapi.OpenAPI, &d.doc); err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(httpapi.OpenAPI))
	if err != nil {
		return nil, err
	}
	d.compiler = jsonschema.NewCompiler()
	d.compiler.DefaultDraft(jsonschema.Draft2020)
	if err := d.compiler.AddResource(openAPIURL, raw); err != nil {
		return nil, err
	}
	for p := range d.doc.Paths {
		d.templates = append(d.templates, &pathTemplate{path: p, re: regexp.MustCompile("^" + pathParams(p) + "$")})
	}
	return d, nil
})

// pathParams turns /v1/memories/{id} into a regexp source.
func pathParams(p string) string {
	var b strings.Builder
	for _, part := range strings.Split(p, "/") {
		if part == "" {
			continue
		}
		b.WriteString("/")
		if strings.HasPrefix(part, "{") {
			b.WriteString(`[^/]+`)
		} else {
			b.WriteString(regexp.QuoteMeta(part))
		}
	}
	return b.String()
}

// pointer escapes a JSON pointer token.
func pointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// checkResponse validates a JSON response of the API against the schema
// the document gives for its operation and status. Paths the document
// does not know (the catch-all 404) are left alone; a documented
// operation answering with an undocumented status fails the test.
func checkResponse(t *testing.T, method, rawURL string, status int, contentType string, body []byte) {
	t.Helper()
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt != "application/json" {
		return
	}
	d, err := loadAPIDoc()
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return
	}
	var tmpl string
	for _, pt := range d.templates {
		// A literal path beats a template: /v1/memories/{id} vs /v1/memories.
		if pt.re.MatchString(u.Path) && (tmpl == "" || !strings.Contains(pt.path, "{")) {
			tmpl = pt.path
		}
	}
	if tmpl == "" {
		return
	}
	op, ok := d.doc.Paths[tmpl][strings.ToLower(method)]
	if !ok {
		return // the mux answers 405 for it
	}
	if status == http.StatusNotFound && bytes.Contains(body, []byte(`"message":"no route `)) {
		return // a worker that does not serve the route: the catch-all
	}
	code := strconv.Itoa(status)
	resp, ok := op.Responses[code]
	if !ok {
		t.Errorf("openapi: %s %s answered %d, which the document does not list for %s %s", method, u.Path, status, method, tmpl)
		return
	}
	if _, ok := resp.Content["application/json"]; !ok {
		t.Errorf("openapi: %s %s %d answered JSON, the document says otherwise", method, u.Path, status)
		return
	}
	loc := openAPIURL + "#/paths/" + pointer(tmpl) + "/" + strings.ToLower(method) + "/responses/" + code + "/content/application~1json/schema"
	d.mu.Lock()
	sch := d.schemas[loc]
	if sch == nil {
		sch, err = d.compiler.Compile(loc)
		d.schemas[loc] = sch
	}
	d.mu.Unlock()
	if err != nil {
		t.Fatalf("openapi: compile %s: %v", loc, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Errorf("openapi: %s %s %d: body is not JSON: %v", method, u.Path, status, err)
		return
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("openapi: %s %s %d does not match the document: %v\nbody: %.2000s", method, u.Path, status, err, body)
	}
}

// The document lists exactly the routes the server registers, and serves
// at /openapi.json.
func TestOpenAPIRoutes(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	d, err := loadAPIDoc()
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for p, ops := range d.doc.Paths {
		for m := range ops {
			documented = append(documented, strings.ToUpper(m)+" "+p)
		}
	}
	registered := a.api.Routes()
	sort.Strings(documented)
	sort.Strings(registered)
	for _, r := range registered {
		if !slices.Contains(documented, r) {
			t.Errorf("%s is served but not in internal/httpapi/openapi.json", r)
		}
	}
	for _, r := range documented {
		if !slices.Contains(registered, r) {
			t.Errorf("%s is in internal/httpapi/openapi.json but not served", r)
		}
	}
	r := do(t, "GET", "http://"+a.HTTPAddr()+"/openapi.json", "", nil, nil)
	if r.Status != http.StatusOK || r.Body["openapi"] != "3.1.0" {
		t.Fatalf("/openapi.json: %d %.200s", r.Status, r.Raw)
	}
}
