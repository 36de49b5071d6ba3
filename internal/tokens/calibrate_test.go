package tokens

import (
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"
)

// minWeight is the least a class of text may cost in a preset, in
// thousandths of a token: see TestPresetWeightsFloor.
const minWeight = 100

var calibrate = flag.Bool("calibrate", false, "fit the estimate presets to testdata/calib.txt and print them")

// prior is where each weight starts and what it is pulled towards when the
// calibration set says little about it (kana and Hangul, emoji: the seed
// documents hold almost none). Thousandths of a token.
var prior = Estimate{
	Han: 1000, KanaHangul: 1000, CJKPunct: 1000,
	Word: [4]int{1000, 1000, 1000, 2000}, NonASCII: 300,
	DigitGroup: 1000, Digit: 0, SpaceDigit: 1000, PunctRun: 1000, PunctChar: 0, SpaceRun: 1000, LineBreak: 1000,
	Symbol: 1000, Astral: 2000,
}

// TestCalibrate fits each family's weights by non-negative least squares on
// the relative error per calibration sample, with a light pull towards
// prior, and prints them as Go for estimates.go:
//
//	go test ./internal/tokens -run TestCalibrate -calibrate -v
//
// The generic preset is fitted to the largest count any family's tokenizer
// gives each sample, so that it errs towards counting more.
func TestCalibrate(t *testing.T) {
	t.Parallel()
	if !*calibrate {
		t.Skip("fits the presets; run with -calibrate")
	}
	samples := loadCorpus(t, "calib")
	held := loadCorpus(t, "corpus")
	var b strings.Builder
	fit := func(family string, target func(sample) int) Estimate {
		e := fitEstimate(samples, target)
		e.Family = family
		fmt.Fprintf(&b, "\t%q: %#v,\n", family, e)
		return e
	}
	fitted := make(map[string]Estimate)
	for _, c := range columns {
		fitted[c.family] = fit(c.family, func(s sample) int { return s.counts[c.column] })
	}
	generic := fit("generic", maxCount)
	t.Logf("fitted presets:\n%s", strings.ReplaceAll(b.String(), "tokens.Estimate", ""))
	for _, c := range columns {
		for _, e := range []Estimate{fitted[c.family], generic} {
			in, out := measureError(e, samples, c.column), measureError(e, held, c.column)
			t.Logf("%-22s vs %-13s calib %+5.1f%% (mean |e| %4.1f%%)  held-out %+5.1f%% (mean |e| %4.1f%%, worst %3.0f%%: sample %d)",
				e.Name(), c.column, 100*in.total, 100*in.meanAbs, 100*out.total, 100*out.meanAbs, 100*out.worst, out.worstIdx)
		}
	}
}

func maxCount(s sample) int {
	n := 0
	for _, c := range columns {
		n = max(n, s.counts[c.column])
	}
	return n
}

func fitEstimate(samples []sample, target func(sample) int) Estimate {
	const lambda = 1e-3 // pull towards prior, per squared token of weight
	// Normal equations of sum_i ((x_i.w - y_i)/y_i)^2 + lambda |w - p|^2.
	var a [nFeatures][nFeatures]float64
	var rhs [nFeatures]float64
	p := prior.weights()
	for _, s := range samples {
		y := float64(target(s))
		f := measure(s.text)
		v := f.vector()
		for j := range v {
			xj := float64(v[j]) / y
			rhs[j] += xj // x_j/y * y/y
			for k := range v {
				a[j][k] += xj * float64(v[k]) / y
			}
		}
	}
	var w [nFeatures]float64
	for j := range w {
		a[j][j] += lambda
		rhs[j] += lambda * float64(p[j]) / 1000
		w[j] = float64(p[j]) / 1000
	}
	// Projected coordinate descent: exact for a convex quadratic with
	// bounds on w, and 17 features converge in a few hundred sweeps.
	var lower [nFeatures]float64
	for j := range lower {
		if j != 9 && j != 10 { // Digit, SpaceDigit: see TestPresetWeightsFloor
			lower[j] = minWeight / 1000.0
		}
	}
	for range 20000 {
		for j := range w {
			g := -rhs[j]
			for k := range w {
				g += a[j][k] * w[k]
			}
			w[j] = math.Max(lower[j], w[j]-g/a[j][j])
		}
	}
	var mw [nFeatures]int
	for j := range w {
		mw[j] = int(math.Round(w[j] * 1000))
	}
	return fromWeights(mw)
}

func fromWeights(w [nFeatures]int) Estimate {
	return Estimate{Han: w[0], KanaHangul: w[1], CJKPunct: w[2],
		Word: [4]int{w[3], w[4], w[5], w[6]}, NonASCII: w[7],
		DigitGroup: w[8], Digit: w[9], SpaceDigit: w[10], PunctRun: w[11], PunctChar: w[12],
		SpaceRun: w[13], LineBreak: w[14], Symbol: w[15], Astral: w[16]}
}

func TestWeightsRoundTrip(t *testing.T) {
	t.Parallel()
	e := Estimate{}
	w := e.weights()
	for i := range w {
		w[i] = i + 1
	}
	e = fromWeights(w)
	if got := e.weights(); got != w {
		t.Fatalf("fromWeights(w).weights() = %v, want %v", got, w)
	}
}
