package vector

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// This file holds the int8 quantisation experiment whose figures the
// package documentation reports, as the evidence for keeping float32: each
// normalised vector becomes int8 codes with its own scale, and vectors are
// ranked by integer dot products.

type int8Index struct {
	dims   int
	codes  []int8
	scales []float32
	ids    []string
}

func quantize(v []float32, codes []int8) float32 {
	var m float32
	for _, f := range v {
		m = max(m, float32(math.Abs(float64(f))))
	}
	if m == 0 {
		return 0
	}
	s := m / 127
	for i, f := range v {
		codes[i] = int8(math.Round(float64(f / s)))
	}
	return s
}

func dotInt8(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		x := a[i : i+8 : i+8]
		y := b[i : i+8 : i+8]
		s0 += int32(x[0])*int32(y[0]) + int32(x[4])*int32(y[4])
		s1 += int32(x[1])*int32(y[1]) + int32(x[5])*int32(y[5])
		s2 += int32(x[2])*int32(y[2]) + int32(x[6])*int32(y[6])
		s3 += int32(x[3])*int32(y[3]) + int32(x[7])*int32(y[7])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

func (q *int8Index) add(id string, v []float32) {
	codes := make([]int8, q.dims)
	q.scales = append(q.scales, quantize(Normalize(v), codes))
	q.codes = append(q.codes, codes...)
	q.ids = append(q.ids, id)
}

func (q *int8Index) search(query []float32, k int) []string {
	codes := make([]int8, q.dims)
	qs := quantize(Normalize(query), codes)
	top := topK{ids: q.ids, c: make([]cand, 0, k)}
	for p := range q.ids {
		s := float32(dotInt8(codes, q.codes[p*q.dims:(p+1)*q.dims])) * qs * q.scales[p]
		if len(top.c) == k && s < top.c[0].score {
			continue
		}
		top.offer(s, int32(p))
	}
	out := make([]string, len(top.c))
	for i, c := range top.c {
		out[i] = q.ids[c.pos]
	}
	return out
}

// dataset draws n vectors and queries: "uniform" directions (every cosine
// near 0, the hardest case for quantisation) or "clustered" around 100
// centres (neighbours with cosines near 0.7, closer to real embeddings).
func dataset(kind string, n, queries, dims int) (vecs, qs [][]float32) {
	r := newRand(11)
	centres := make([][]float32, 100)
	for i := range centres {
		centres[i] = randomVec(r, dims)
	}
	draw := func() []float32 {
		v := randomVec(r, dims)
		if kind == "clustered" {
			c := centres[r.IntN(len(centres))]
			for j := range v {
				v[j] = c[j] + 0.65*v[j]
			}
		}
		return v
	}
	vecs = make([][]float32, n)
	for i := range vecs {
		vecs[i] = draw()
	}
	qs = make([][]float32, queries)
	for i := range qs {
		qs[i] = draw()
	}
	return vecs, qs
}

// BenchmarkInt8 reports the scan time and recall@10 of int8 codes against
// exact float32 search, next to float32 on the same data:
//
//	go test -run '^$' -bench Int8 ./internal/vector
func BenchmarkInt8(b *testing.B) {
	const n, k = 10_000, 10
	for _, kind := range []string{"uniform", "clustered"} {
		for _, dims := range []int{768, 1536} {
			vecs, queries := dataset(kind, n, 50, dims)
			exact := NewIndex(dims)
			exact.MaxLen = 0
			q8 := &int8Index{dims: dims}
			for i, v := range vecs {
				if err := exact.Add(benchID(i), v); err != nil {
					b.Fatal(err)
				}
				q8.add(benchID(i), v)
			}
			name := fmt.Sprintf("%s/n=%dk/dims=%d", kind, n/1000, dims)
			b.Run(name+"/float32", func(b *testing.B) {
				loop(b, func(i int) {
					if _, err := exact.Search(queries[i%len(queries)], k); err != nil {
						b.Fatal(err)
					}
				})
				b.ReportMetric(float64(4*dims), "B/vector")
			})
			b.Run(name+"/int8", func(b *testing.B) {
				loop(b, func(i int) { q8.search(queries[i%len(queries)], k) })
				var found int
				for _, q := range queries {
					want, err := exact.Search(q, k)
					if err != nil {
						b.Fatal(err)
					}
					got := q8.search(q, k)
					for _, h := range want {
						for _, id := range got {
							if id == h.ID {
								found++
							}
						}
					}
				}
				b.ReportMetric(float64(found)/float64(k*len(queries)), "recall@10")
				b.ReportMetric(float64(dims+4), "B/vector")
			})
		}
	}
}

// TestInt8Experiment keeps the experiment's code honest: its ranking must
// agree with exact search on clearly separated data.
func TestInt8Experiment(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 0))
	q8 := &int8Index{dims: 64}
	exact := NewIndex(64)
	for i := range 300 {
		v := randomVec(r, 64)
		q8.add(benchID(i), v)
		mustAdd(t, exact, benchID(i), v)
	}
	q := randomVec(r, 64)
	want := mustSearch(t, exact, q, 1)
	if got := q8.search(q, 1); len(got) != 1 || got[0] != want[0].ID {
		t.Fatalf("int8 best=%v, exact best=%v", got, want)
	}
}
