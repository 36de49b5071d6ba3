package events_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"path"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/engramhq/engram/events"
)

// compileSchemas compiles every embedded schema, offline, by the $id the
// schemas refer to each other with.
func compileSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	files, err := fs.Glob(events.Schemas, "schema/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(files), len(events.Types())+1; got != want {
		t.Fatalf("%d schema files, want %d: %v", got, want, files)
	}
	for _, f := range files {
		b, err := events.Schemas.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		id, _ := doc.(map[string]any)["$id"].(string)
		if want := events.SchemaBaseURL + path.Base(f); id != want {
			t.Fatalf("%s: $id=%q, want %q", f, id, want)
		}
		if err := c.AddResource(id, doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	schemas := make(map[string]*jsonschema.Schema)
	for _, name := range append(events.Types(), events.SchemaEnvelope) {
		sch, err := c.Compile(events.SchemaBaseURL + name + ".json")
		if err != nil {
			t.Fatalf("compile %s: %v", name, err)
		}
		schemas[name] = sch
	}
	return schemas
}

// schemaAccepts reports whether the schema accepts the document; a
// document that is not JSON is not accepted.
func schemaAccepts(sch *jsonschema.Schema, doc string) (bool, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(doc)))
	if err != nil {
		return false, err
	}
	err = sch.Validate(v)
	return err == nil, err
}

// TestAgreement runs every sample through Go and through the JSON Schema:
// an agent validating with the schema must get the answer engram gives,
// except where the sample says the schema cannot tell.
func TestAgreement(t *testing.T) {
	t.Parallel()
	schemas := compileSchemas(t)
	check := func(t *testing.T, s sample, goErr error, schema *jsonschema.Schema) {
		t.Helper()
		schemaOK, schemaErr := schemaAccepts(schema, s.body)
		goOK := goErr == nil
		switch {
		case s.goOnly != "" && (goOK || !schemaOK):
			t.Fatalf("sample marked %q: want Go to refuse and the schema to accept; Go: %v; schema: %v", s.goOnly, goErr, schemaErr)
		case s.goOnly == "" && goOK != schemaOK:
			t.Fatalf("Go and the schema disagree\nGo: %v\nschema: %v", goErr, schemaErr)
		}
	}
	for _, s := range dataSamples {
		t.Run("data/"+s.name, func(t *testing.T) {
			_, err := events.DecodeData(s.eventType, []byte(s.body))
			check(t, s, err, schemas[s.eventType])
		})
	}
	for _, s := range eventSamples {
		t.Run("event/"+s.name, func(t *testing.T) {
			_, _, err := events.DecodeStructured([]byte(s.body), 0)
			check(t, s, err, schemas[events.SchemaEnvelope])
		})
	}
	// Every data sample is also an event sample once wrapped in a valid
	// envelope: the envelope schema must send data to the right schema.
	for _, s := range dataSamples {
		if s.goOnly != "" || s.body == "" {
			continue
		}
		body := `{"specversion":"1.0","id":"1","source":"a","type":"` + s.eventType + `","user":"u","data":` + s.body + `}`
		t.Run("wrapped/"+s.name, func(t *testing.T) {
			_, _, err := events.DecodeStructured([]byte(body), 0)
			check(t, sample{body: body}, err, schemas[events.SchemaEnvelope])
		})
	}
}

func TestSchema(t *testing.T) {
	t.Parallel()
	for _, name := range append(events.Types(), events.SchemaEnvelope) {
		b, err := events.Schema(name)
		if err != nil {
			t.Fatalf("Schema(%q): %v", name, err)
		}
		if !bytes.Contains(b, []byte(`"$schema": "https://json-schema.org/draft/2020-12/schema"`)) {
			t.Errorf("Schema(%q) is not draft 2020-12", name)
		}
	}
	for _, name := range []string{"", "turn.deleted", "../doc"} {
		if _, err := events.Schema(name); err == nil {
			t.Errorf("Schema(%q) returned no error", name)
		}
	}
}

// schemaExamples returns the examples a type's schema gives of its data.
func schemaExamples(t *testing.T, eventType string) []json.RawMessage {
	t.Helper()
	b, err := events.Schema(eventType)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Examples []json.RawMessage }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Examples
}

// The examples in the schemas are what producers copy: every type has
// one, and each is valid data of its type, for Go and for the schema.
func TestSchemaExamples(t *testing.T) {
	t.Parallel()
	schemas := compileSchemas(t)
	for _, typ := range events.Types() {
		examples := schemaExamples(t, typ)
		if len(examples) == 0 {
			t.Errorf("%s: the schema gives no example", typ)
		}
		for _, ex := range examples {
			if _, err := events.DecodeData(typ, ex); err != nil {
				t.Errorf("%s example %s: %v", typ, ex, err)
			}
			if ok, err := schemaAccepts(schemas[typ], string(ex)); !ok {
				t.Errorf("%s example %s: the schema refuses it: %v", typ, ex, err)
			}
		}
	}
}

// TestSchemasFollowTypes holds each hand-written schema to its Go type:
// the same members, each of the JSON type the Go field reads, every member
// the reader requires listed as required, and no other member accepted.
// Together with TestAgreement (the same samples through both), this is
// what keeps a field added to a type from being forgotten in its schema.
func TestSchemasFollowTypes(t *testing.T) {
	t.Parallel()
	docs := map[string]map[string]any{}
	files, _ := fs.Glob(events.Schemas, "schema/*.json")
	for _, f := range files {
		b, _ := events.Schemas.ReadFile(f)
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		docs[path.Base(f)] = doc
	}
	s := schemaWalker{t: t, docs: docs}
	for _, typ := range events.Types() {
		v := events.NewData(typ)
		s.object(typ, typ+".json", docs[typ+".json"], reflect.TypeOf(v).Elem(), reflect.ValueOf(v).Elem())
	}
}

type schemaWalker struct {
	t    *testing.T
	docs map[string]map[string]any
}

// resolve follows a $ref from the file it is in.
func (s schemaWalker) resolve(file, ref string) (string, map[string]any) {
	target, frag, _ := strings.Cut(ref, "#")
	if target != "" {
		file = target
	}
	node := any(s.docs[file])
	for _, key := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if key != "" {
			node = node.(map[string]any)[key]
		}
	}
	return file, node.(map[string]any)
}

// merged gathers a node's properties and required members with those of
// the schemas it refers to ($ref, allOf).
func (s schemaWalker) merged(file string, node map[string]any) (props map[string]any, propFile map[string]string, required map[string]bool, closed bool) {
	props, propFile, required = map[string]any{}, map[string]string{}, map[string]bool{}
	var add func(file string, node map[string]any)
	add = func(file string, node map[string]any) {
		if ref, ok := node["$ref"].(string); ok {
			add(s.resolve(file, ref))
		}
		for _, sub := range asList(node["allOf"]) {
			add(file, sub.(map[string]any))
		}
		for name, p := range asMap(node["properties"]) {
			if _, seen := props[name]; !seen { // what a $ref'd schema says of it comes first
				props[name], propFile[name] = p, file
			}
		}
		for _, name := range asList(node["required"]) {
			required[name.(string)] = true
		}
		if node["additionalProperties"] == false {
			closed = true
		}
	}
	add(file, node)
	return props, propFile, required, closed
}

// jsonType is the JSON type a property's schema says, or "" for any.
func (s schemaWalker) jsonType(file string, node map[string]any) (string, string, map[string]any) {
	switch {
	case node["type"] != nil:
		return node["type"].(string), file, node
	case node["enum"] != nil:
		return kindOfJSON(asList(node["enum"])[0]), file, node
	case node["const"] != nil:
		return kindOfJSON(node["const"]), file, node
	case node["$ref"] != nil:
		return s.jsonType(s.resolve(file, node["$ref"].(string)))
	}
	return "", file, node
}

func (s schemaWalker) object(at, file string, node map[string]any, gt reflect.Type, defaults reflect.Value) {
	props, propFile, required, closed := s.merged(file, node)
	if !closed {
		s.t.Errorf("%s: additionalProperties is not false", at)
	}
	names := map[string]bool{}
	for i := range gt.NumField() {
		f := gt.Field(i)
		tag, ok := f.Tag.Lookup("json")
		if !ok || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		names[name] = true
		p, ok := props[name]
		if !ok {
			s.t.Errorf("%s.%s: in the Go type, not in the schema", at, name)
			continue
		}
		if p == false {
			continue // a member this event type refuses (pending.confirmed's until)
		}
		goRequired := !strings.Contains(","+opts+",", ",omitempty,") && !strings.Contains(","+opts+",", ",omitzero,") &&
			(!defaults.IsValid() || defaults.Field(i).IsZero())
		if goRequired && !required[name] {
			s.t.Errorf("%s.%s: required by the Go type, not by the schema", at, name)
		}
		s.value(at+"."+name, propFile[name], p.(map[string]any), f.Type)
	}
	for name := range props {
		if !names[name] {
			s.t.Errorf("%s.%s: in the schema, not in the Go type", at, name)
		}
	}
}

func (s schemaWalker) value(at, file string, node map[string]any, gt reflect.Type) {
	for gt.Kind() == reflect.Pointer {
		gt = gt.Elem()
	}
	typ, file, node := s.jsonType(file, node)
	want := ""
	switch {
	case gt == reflect.TypeFor[json.RawMessage]():
		want = ""
	case gt == reflect.TypeFor[time.Time](), gt.Kind() == reflect.String:
		want = "string"
	case gt.Kind() == reflect.Bool:
		want = "boolean"
	case gt.Kind() >= reflect.Int && gt.Kind() <= reflect.Uint64:
		want = "integer"
	case gt.Kind() == reflect.Float32 || gt.Kind() == reflect.Float64:
		want = "number"
	case gt.Kind() == reflect.Slice:
		want = "array"
	case gt.Kind() == reflect.Struct:
		want = "object"
	}
	if typ != want {
		s.t.Errorf("%s: the schema says %q, the Go type %s reads %q", at, typ, gt, want)
		return
	}
	switch want {
	case "array":
		items, ok := node["items"].(map[string]any)
		if !ok {
			s.t.Errorf("%s: an array without items", at)
			return
		}
		s.value(at+"[]", file, items, gt.Elem())
	case "object":
		s.object(at, file, node, gt, reflect.Value{})
	}
}

func kindOfJSON(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		return "number"
	}
	return ""
}

func asList(v any) []any         { l, _ := v.([]any); return l }
func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
