package vector

import (
	"fmt"
	"runtime"
	"testing"
)

// benchID is shaped like the ULIDs engram stores.
func benchID(i int) string { return fmt.Sprintf("01J%023d", i) }

func buildIndex(tb testing.TB, n, dims int, seed uint64) *Index {
	tb.Helper()
	r := newRand(seed)
	ix := NewIndex(dims)
	ix.MaxLen = 0
	v := make([]float32, dims)
	for i := range n {
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		if err := ix.Add(benchID(i), v); err != nil {
			tb.Fatal(err)
		}
	}
	return ix
}

// BenchmarkSearch measures one top-10 query by brute force. The 100k sizes
// build up to 600 MB of vectors and are skipped with -short:
//
//	go test -run '^$' -bench Search -benchtime 50x ./internal/vector
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		for _, dims := range []int{256, 768, 1536} {
			b.Run(fmt.Sprintf("n=%dk/dims=%d", n/1000, dims), func(b *testing.B) {
				if n >= 100_000 && testing.Short() {
					b.Skip("100k vectors: skipped with -short")
				}
				ix := buildIndex(b, n, dims, uint64(n+dims))
				r := newRand(9)
				queries := make([][]float32, 16)
				for i := range queries {
					queries[i] = randomVec(r, dims)
				}
				cpu := loop(b, func(i int) {
					if _, err := ix.Search(queries[i%len(queries)], 10); err != nil {
						b.Fatal(err)
					}
				})
				b.ReportMetric(cpu/float64(n), "cpu-ns/vector")
				b.ReportMetric(float64(ix.Bytes())/float64(n), "B/vector")
			})
		}
	}
}

// loop runs f(0), f(1), ... for the benchmark and reports the CPU time per
// call next to the wall time: on the shared development machine wall time
// also counts the time other processes held the cores. It returns the CPU
// nanoseconds per call, 0 where they cannot be read.
func loop(b *testing.B, f func(i int)) float64 {
	b.Helper()
	runtime.GC()
	cpu0, ok := cpuTime()
	i := 0
	for b.Loop() {
		f(i)
		i++
	}
	cpu1, _ := cpuTime()
	if !ok {
		return 0
	}
	perOp := float64((cpu1 - cpu0).Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp, "cpu-ns/op")
	return perOp
}

// BenchmarkMemory compares the heap an index takes with its Bytes estimate.
func BenchmarkMemory(b *testing.B) {
	const n = 20_000
	for _, dims := range []int{256, 768, 1536} {
		b.Run(fmt.Sprintf("dims=%d", dims), func(b *testing.B) {
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				ix := buildIndex(b, n, dims, 1)
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "heapB/vector")
				b.ReportMetric(float64(ix.Bytes())/n, "estB/vector")
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n-float64(dims*4), "overheadB/vector")
				runtime.KeepAlive(ix)
			}
		})
	}
}

func BenchmarkDot(b *testing.B) {
	for _, dims := range []int{256, 768, 1536} {
		b.Run(fmt.Sprintf("dims=%d", dims), func(b *testing.B) {
			r := newRand(10)
			x, y := randomVec(r, dims), randomVec(r, dims)
			var sink float32
			cpu := loop(b, func(int) { sink += Dot(x, y) })
			b.ReportMetric(cpu/float64(dims), "cpu-ns/component")
			_ = sink
		})
	}
}
