package events_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"path"
	"testing"

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
