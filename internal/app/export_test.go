package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/stream"
)

// An export imported into a fresh engram gives a read model with the
// same content checksum, table by table; importing it again adds nothing.
func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	evs := conversation("a", "ana", "s1")
	evs = append(evs, endEvent("a-end", "ana", "s1", 4),
		turnEvent("b-0", "bob", "s1", 0, "user", "我住在杭州，喜欢喝龙井茶。"), endEvent("b-end", "bob", "s1", 1))
	mustAccept(t, postBatch(t, a, evs...))
	base := "http://" + a.HTTPAddr()
	if r := do(t, "POST", base+"/v1/memories?wait=true", "application/json", []byte(`{"user":"ana","kind":"preference",`+
		`"category":"config","subject":"user","predicate":"prefers","content":"answers in English","importance":0.9}`), nil); r.Status != 202 {
		t.Fatalf("add memory: %d %s", r.Status, r.Raw)
	}
	waitSettled(t, a)
	var buf bytes.Buffer
	rep, err := Export(t.Context(), jsOf(a), &buf, ExportFilter{}, 1<<20)
	if err != nil || rep.Events == 0 {
		t.Fatalf("export: %+v, %v", rep, err)
	}
	want, err := a.Store().ContentChecksum(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(buf.String(), "\n"); lines != rep.Events {
		t.Fatalf("%d lines for %d events", lines, rep.Events)
	}

	b := startApp(t, testConfig(t, t.TempDir()), RoleRetriever)
	data := buf.Bytes()
	irep, err := Import(t.Context(), jsOf(b), bytes.NewReader(data), 1<<20)
	if err != nil || irep.Events != rep.Events {
		t.Fatalf("import: %+v, %v (exported %d)", irep, err, rep.Events)
	}
	s, err := jsOf(b).Stream(t.Context(), stream.MemoryStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	waitProjected(t, b, info.State.LastSeq)
	got, err := b.Store().ContentChecksum(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := want.Diff(got); len(d) != 0 {
		t.Fatalf("imported read model differs in %v\nwant %v\ngot  %v", d, want, got)
	}
	if irep, err := Import(t.Context(), jsOf(b), bytes.NewReader(data), 1<<20); err != nil || irep.Events != 0 {
		t.Fatalf("a second import stored %+v, %v", irep, err)
	}
	// A user's export holds only that user.
	var one bytes.Buffer
	if _, err := Export(t.Context(), jsOf(a), &one, ExportFilter{Namespace: "default", User: "bob"}, 1<<20); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(one.String(), `"ana"`) || !strings.Contains(one.String(), "龙井") {
		t.Fatalf("bob's export: %s", one.String())
	}
}
