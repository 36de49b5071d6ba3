package vector

import (
	"fmt"
	"math"
)

// Normalize returns a copy of v scaled to unit length, so that Dot of two
// normalized vectors is their cosine similarity. A zero vector stays zero
// and one holding NaN or ±Inf is copied as it is: neither has a direction.
// The squares are summed in float64, where they can neither overflow nor
// underflow, so tiny and huge vectors come out unit length too.
func Normalize(v []float32) []float32 {
	out := make([]float32, len(v))
	var sum float64
	for _, f := range v {
		sum += float64(f) * float64(f)
	}
	// A float64 sum of float32 squares cannot overflow (65,535 × MaxFloat32²
	// is about 1e82), so it is infinite or NaN only when v holds Inf or NaN.
	if sum == 0 || math.IsInf(sum, 0) || math.IsNaN(sum) {
		copy(out, v)
		return out
	}
	scale := 1 / math.Sqrt(sum)
	for i, f := range v {
		out[i] = float32(float64(f) * scale)
	}
	return out
}

// Dot is the inner product of a and b, which must have the same length (Dot
// panics otherwise: the caller mixed vectors from different models). For
// unit vectors it is the cosine similarity.
//
// Go does not vectorise loops, so the speed comes from breaking the chain of
// dependent additions: eight products a step into four running sums lets the
// CPU keep several multiply-adds in flight. Measured in CPU time on the
// 2-core AMD EPYC development machine at 768 dimensions: a plain loop
// 1.1-1.2 ns per component, this one 0.34-0.45; unrolling by 4 or 16 instead,
// or eight sums, was within the noise. The additions run in another order
// than a plain loop's, so results differ from one in the last bits.
func Dot(a, b []float32) float32 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("vector.Dot: lengths %d and %d", len(a), len(b)))
	}
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		// Three-index slices of constant length let the compiler drop the
		// bounds checks inside the step.
		x := a[i : i+8 : i+8]
		y := b[i : i+8 : i+8]
		s0 += x[0]*y[0] + x[4]*y[4]
		s1 += x[1]*y[1] + x[5]*y[5]
		s2 += x[2]*y[2] + x[6]*y[6]
		s3 += x[3]*y[3] + x[7]*y[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}
