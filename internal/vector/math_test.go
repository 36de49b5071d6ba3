package vector

import (
	"math"
	"math/rand/v2"
	"testing"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// randomVec draws from a standard normal, so directions are uniform.
func randomVec(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func norm64(v []float32) float64 {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	return math.Sqrt(s)
}

func TestNormalize(t *testing.T) {
	r := newRand(4)
	for name, v := range map[string][]float32{
		"random 768":  randomVec(r, 768),
		"random 3":    randomVec(r, 3),
		"axis":        {0, 0, 7, 0},
		"tiny":        {math.SmallestNonzeroFloat32, math.SmallestNonzeroFloat32},
		"huge":        {math.MaxFloat32, math.MaxFloat32, -math.MaxFloat32},
		"1536 ones":   ones(1536),
		"mixed scale": {1e30, 1e-30, 1},
	} {
		t.Run(name, func(t *testing.T) {
			in := append([]float32(nil), v...)
			got := Normalize(v)
			if n := norm64(got); math.Abs(n-1) > 1e-6 {
				t.Fatalf("|Normalize(v)|=%v, want 1", n)
			}
			for i := range v {
				if v[i] != in[i] {
					t.Fatalf("Normalize changed its input at %d", i)
				}
				// Same direction: no component changes sign (a tiny one
				// may round to 0).
				if float64(v[i])*float64(got[i]) < 0 || (v[i] == 0 && got[i] != 0) {
					t.Fatalf("component %d: %v became %v", i, v[i], got[i])
				}
			}
		})
	}
	t.Run("zero stays zero", func(t *testing.T) {
		got := Normalize(make([]float32, 5))
		if len(got) != 5 || norm64(got) != 0 {
			t.Fatalf("Normalize(zero)=%v", got)
		}
	})
	t.Run("NaN copied", func(t *testing.T) {
		got := Normalize([]float32{1, float32(math.NaN())})
		if got[0] != 1 || !math.IsNaN(float64(got[1])) {
			t.Fatalf("Normalize([1 NaN])=%v", got)
		}
	})
}

func ones(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

// TestDot compares the unrolled loop with a float64 sum for every length
// around the unrolling, so the remainder loop is covered.
func TestDot(t *testing.T) {
	r := newRand(5)
	for n := 0; n <= 41; n++ {
		a, b := randomVec(r, n), randomVec(r, n)
		var want, mag float64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
			mag += math.Abs(float64(a[i]) * float64(b[i]))
		}
		got := float64(Dot(a, b))
		if math.Abs(got-want) > 1e-5*(mag+1) {
			t.Fatalf("n=%d: Dot=%v, want %v", n, got, want)
		}
	}
	t.Run("exact", func(t *testing.T) {
		a := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
		b := []float32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1}
		if got, want := Dot(a, b), float32(55-11); got != want {
			t.Fatalf("Dot=%v, want %v", got, want)
		}
	})
	t.Run("cosine of unit vectors", func(t *testing.T) {
		a, b := Normalize([]float32{3, 4}), Normalize([]float32{4, 3})
		if got, want := Dot(a, b), float32(24.0/25); math.Abs(float64(got-want)) > 1e-6 {
			t.Fatalf("Dot=%v, want %v", got, want)
		}
	})
	t.Run("length mismatch panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Fatal("Dot of lengths 2 and 3 did not panic")
			}
		}()
		Dot([]float32{1, 2}, []float32{1, 2, 3})
	})
}
