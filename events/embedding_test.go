package events_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
)

func TestTextHash(t *testing.T) {
	t.Parallel()
	// The first half of the FIPS 180-2 SHA-256 test vectors.
	for _, c := range []struct{ text, want string }{
		{"", "e3b0c44298fc1c149afbf4c8996fb924"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223"},
	} {
		if got := events.TextHash(c.text); got != c.want {
			t.Errorf("TextHash(%q)=%s, want %s", c.text, got, c.want)
		}
	}
	// The text is hashed as it is: no trimming, no normalising.
	if events.TextHash("tea") == events.TextHash("tea ") || events.TextHash("café") == events.TextHash("cafe\u0301") {
		t.Fatal("TextHash changed the text before hashing it")
	}
}

func TestDecodeEmbeddedValues(t *testing.T) {
	t.Parallel()
	body := embedded("6", vec(teaHash, " 1e-3 , 2,-0, 0.25E+1,1.0 ,-7e0"),
		vec(nameHash, "3.4028234663852886e38,-3.4028234663852886e38,1e-45,0.1,-0.030390318,16777217"))
	v, err := events.DecodeData(events.TypeMemoryEmbedded, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := &events.MemoryEmbedded{Model: "text-embedding-3-small", Dims: 6, Vectors: []events.Embedded{
		{Hash: teaHash, Vector: []float32{0.001, 2, 0, 2.5, 1, -7}},
		// 16777217 is not a float32; it rounds to even, 16777216.
		{Hash: nameHash, Vector: []float32{math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 0.1, -0.030390318, 16777216}},
	}}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("DecodeData=%+v\nwant        %+v", v, want)
	}
}

// The embedder publishes []float32 through encoding/json; every float32,
// denormals and extremes included, must come back bit for bit.
func TestNewDerivedEmbedded(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	const dims = 300
	data := events.MemoryEmbedded{Model: "bge-m3", Dims: dims}
	for i := range 20 {
		v := make([]float32, dims)
		for j := range v {
			v[j] = math.Float32frombits(rng.Uint32())
			for math.IsNaN(float64(v[j])) || math.IsInf(float64(v[j]), 0) {
				v[j] = math.Float32frombits(rng.Uint32())
			}
		}
		v[0], v[1], v[2] = math.MaxFloat32, -math.SmallestNonzeroFloat32, float32(rng.NormFloat64())
		data.Vectors = append(data.Vectors, events.Embedded{Hash: events.TextHash(fmt.Sprint("text ", i)), Vector: v})
	}
	at := time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)
	e, err := events.NewDerived("engram/embedder", events.TypeMemoryEmbedded, "embedded-1", "acme", "alice", at, data)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Subject(); got != "" {
		t.Fatalf("Subject=%q, want none", got)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	_, decoded, err := events.DecodeStructured(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := decoded.(*events.MemoryEmbedded)
	if got.Model != data.Model || got.Dims != data.Dims || len(got.Vectors) != len(data.Vectors) {
		t.Fatalf("decoded %s/%d with %d vectors, want %s/%d with %d", got.Model, got.Dims, len(got.Vectors),
			data.Model, data.Dims, len(data.Vectors))
	}
	for i, v := range got.Vectors {
		if v.Hash != data.Vectors[i].Hash {
			t.Fatalf("vectors[%d].hash=%s, want %s", i, v.Hash, data.Vectors[i].Hash)
		}
		for j, c := range v.Vector {
			if w := data.Vectors[i].Vector[j]; math.Float32bits(c) != math.Float32bits(w) {
				t.Fatalf("vectors[%d].vector[%d]=%g, want %g", i, j, c, w)
			}
		}
	}
}

func TestEmbeddedMessages(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ body, want string }{
		{embedded("768", vec(teaHash, components(767, "0.5"))), "data.vectors[0].vector: has 767 components, dims is 768"},
		{embedded("1", vec(teaHash, "1"), vec(teaHash, "1")), `data.vectors[1].hash: "` + teaHash + `" is also vectors[0]`},
		{embedded("2", vec(teaHash, "0,-0")), "data.vectors[0].vector: is all zeros"},
		{embedded("2", vec(teaHash, "1,1e39")), `data.vectors[0].vector[1]: is outside the range of a float32: "1e39"`},
		{embedded("1", vec(teaHash, "-1e999999999999")), `data.vectors[0].vector[0]: is outside the range of a float32`},
		{embedded("2", vec(teaHash, "1,null")), `data.vectors[0].vector[1]: must be a number, not null`},
		{embedded("1", vec("ABC", "1")), `data.vectors[0].hash: must be a TextHash, 32 lower-case hex digits, not "ABC"`},
		{embedded("1", `{"hash":"`+teaHash+`","vector":"AACAPw=="}`), `data.vectors[0].vector: must be an array, not a string`},
		{embedded("1", manyVectors(events.MaxEmbeddedVectors+1)...), "data.vectors: holds more than 256 vectors"},
	} {
		_, err := events.DecodeData(events.TypeMemoryEmbedded, []byte(c.body))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("err=%v, want it to start %q", err, c.want)
		}
	}
}

// The example in the schema is what producers copy: its hashes must be
// those of the texts the package doc names.
func TestSchemaExampleEmbedding(t *testing.T) {
	t.Parallel()
	examples := schemaExamples(t, events.TypeMemoryEmbedded)
	v, err := events.DecodeData(events.TypeMemoryEmbedded, examples[0])
	if err != nil {
		t.Fatalf("example %s: %v", examples[0], err)
	}
	x := v.(*events.MemoryEmbedded)
	if got, want := []string{x.Vectors[0].Hash, x.Vectors[1].Hash}, []string{teaHash, nameHash}; !reflect.DeepEqual(got, want) {
		t.Fatalf("hashes=%v, want %v", got, want)
	}
}

// BenchmarkDecodeEmbedded decodes an event near the default size limit:
// 80 vectors of 768 dimensions, what a rebuild reads most of.
func BenchmarkDecodeEmbedded(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := events.MemoryEmbedded{Model: "text-embedding-3-small", Dims: 768}
	for i := range 80 {
		v := make([]float32, 768)
		for j := range v {
			v[j] = float32(rng.NormFloat64() / 28)
		}
		data.Vectors = append(data.Vectors, events.Embedded{Hash: events.TextHash(fmt.Sprint(i)), Vector: v})
	}
	body, err := json.Marshal(data)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := events.DecodeData(events.TypeMemoryEmbedded, body); err != nil {
			b.Fatal(err)
		}
	}
}
