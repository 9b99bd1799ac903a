package probe

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strconv"
	"testing"
)

// TestWilsonTextbook checks the Wilson score interval against the values
// published in R. G. Newcombe, "Two-sided confidence intervals for the
// single proportion: comparison of seven methods", Statistics in Medicine
// 17:857–872 (1998), Table I, method 3 (score method without continuity
// correction), to the four decimals printed there.
func TestWilsonTextbook(t *testing.T) {
	cases := []struct {
		k, n   int
		lo, hi float64
	}{
		{81, 263, 0.2553, 0.3662},
		{15, 148, 0.0624, 0.1605},
		{0, 20, 0.0000, 0.1611},
		{1, 29, 0.0061, 0.1718},
		{29, 29, 0.8830, 1.0000},
	}
	for _, c := range cases {
		lo, hi, ok := Wilson(c.k, c.n, 0.95)
		if !ok || math.Abs(lo-c.lo) > 0.00005 || math.Abs(hi-c.hi) > 0.00005 {
			t.Errorf("Wilson(%d, %d) = [%.5f, %.5f], want [%.4f, %.4f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
	for _, bad := range [][2]int{{0, 0}, {-1, 5}, {6, 5}} {
		if _, _, ok := Wilson(bad[0], bad[1], 0.95); ok {
			t.Errorf("Wilson(%d, %d) accepted", bad[0], bad[1])
		}
	}
	if _, _, ok := Wilson(1, 2, 1); ok {
		t.Error("Wilson accepted confidence 1")
	}
}

// tr builds a scored trial of model "m.gguf".
func tr(template, variant string, inst int, correct bool) Trial {
	return Trial{
		ItemID: fmt.Sprintf("m0/%s/%s/%d", template, variant, inst), ModelPath: "m.gguf", ModelName: "M", Quantization: "Q4_K_M",
		TemplateID: template, Variant: variant, Instance: inst, Correct: correct, Tokens: 10, Steps: 2, Relation: "sum",
	}
}

// handCase is a small run whose statistics are computed by hand below.
//
//	template  base (instance: correct)   noop
//	A         0:1 1:1                    0:1 1:0
//	B         0:1 1:0                    0:0 1:0 5:1 (no base partner)
//	C         0:1 1:1 2:1                0:1 1:1 2:skipped
func handCase() []Trial {
	ts := []Trial{
		tr("A", "base", 0, true), tr("A", "base", 1, true),
		tr("B", "base", 0, true), tr("B", "base", 1, false),
		tr("C", "base", 0, true), tr("C", "base", 1, true), tr("C", "base", 2, true),
		tr("A", "noop", 0, true), tr("A", "noop", 1, false),
		tr("B", "noop", 0, false), tr("B", "noop", 1, false), tr("B", "noop", 5, true),
		tr("C", "noop", 0, true), tr("C", "noop", 1, true), tr("C", "noop", 2, false),
	}
	ts[len(ts)-1].SkipReason = "prompt too long"
	return ts
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestSummarizeHandCase(t *testing.T) {
	s, err := Summarize(handCase(), Params{BootstrapResamples: 200, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if s.Trials != 15 || s.Skipped != 1 || len(s.Models) != 1 {
		t.Fatalf("trials %d skipped %d models %d", s.Trials, s.Skipped, len(s.Models))
	}
	if !reflect.DeepEqual(s.Variants, []string{"base", "noop"}) || !reflect.DeepEqual(s.Templates, []string{"A", "B", "C"}) {
		t.Fatalf("variants %v templates %v", s.Variants, s.Templates)
	}
	m := s.Models[0]
	if m.Label != "M Q4_K_M" {
		t.Errorf("label %q", m.Label)
	}
	base, noop := m.Variants[0], m.Variants[1]
	// Base: 6 of 7; noop: 4 of 7 scored (one skipped, excluded).
	if base.N != 7 || base.K != 6 || noop.N != 7 || noop.K != 4 || noop.Skipped != 1 || noop.Trials != 8 {
		t.Fatalf("base %d/%d, noop %d/%d skipped %d", base.K, base.N, noop.K, noop.N, noop.Skipped)
	}
	if !near(base.AccuracyPct.Value, 600.0/7) || !near(noop.AccuracyPct.Value, 400.0/7) {
		t.Errorf("accuracies %v %v", base.AccuracyPct.Value, noop.AccuracyPct.Value)
	}
	lo, hi, _ := Wilson(6, 7, 0.95)
	if !near(base.AccuracyPct.CI.Lo, 100*lo) || !near(base.AccuracyPct.CI.Hi, 100*hi) {
		t.Errorf("base Wilson %+v", base.AccuracyPct.CI)
	}
	// Drop (6−4)/7 = 28.571 pp; relative 2/6 = 33.333 %.
	if !near(noop.DropPP.Value, 200.0/7) || !near(noop.RelativeDropPct.Value, 100.0/3) {
		t.Errorf("drop %v relative %v", noop.DropPP.Value, noop.RelativeDropPct.Value)
	}
	if base.DropPP != nil || base.Paired != nil || base.Verdict != "" {
		t.Error("base variant has a drop, pairs or a verdict")
	}
	// Pairs: A0 both, A1 base only, B0 base only, B1 both wrong, C0 C1 both;
	// C2 skipped; B5 unmatched.
	p := noop.Paired
	if p.Pairs != 6 || p.SkippedPairs != 1 || p.Unmatched != 1 {
		t.Fatalf("pairs %d skipped %d unmatched %d", p.Pairs, p.SkippedPairs, p.Unmatched)
	}
	if p.BothCorrect.Count != 3 || p.BaseOnly.Count != 2 || p.VariantOnly.Count != 0 || p.BothWrong.Count != 1 {
		t.Fatalf("cells %d %d %d %d", p.BothCorrect.Count, p.BaseOnly.Count, p.VariantOnly.Count, p.BothWrong.Count)
	}
	if !near(p.BothCorrect.SharePct.Value, 50) || !near(p.BaseOnly.SharePct.Value, 100.0/3) ||
		p.VariantOnly.SharePct.Value != 0 || !near(p.BothWrong.SharePct.Value, 100.0/6) || !near(p.PairedDropPP.Value, 100.0/3) {
		t.Errorf("shares %+v", p)
	}
	if noop.ExpectedAnywhere != 0 {
		t.Errorf("expected anywhere %d", noop.ExpectedAnywhere)
	}
	if m.Verdict == "" || m.WorstVariant != "noop" {
		t.Errorf("model verdict %q from %q", m.Verdict, m.WorstVariant)
	}
	if s.Params.BootstrapResamples != 200 || s.Params.Seed != 7 || s.Params.Confidence != 0.95 || s.Params.StrongDropPP != StrongDropPP {
		t.Errorf("params %+v", s.Params)
	}
}

// quantileByHand is the empirical quantile as Efron & Tibshirani define the
// percentile interval: the ⌈p·B⌉-th smallest replicate (p·B computed in
// decimal: 0.025·500 = 12.5, so the 13th).
func quantileByHand(sorted []float64, p float64) float64 {
	k, _ := strconv.ParseFloat(strconv.FormatFloat(p*float64(len(sorted)), 'f', 6, 64), 64)
	return sorted[int(math.Ceil(k))-1]
}

// TestEmpiricalQuantileTextbook: with B = 1000 sorted replicates 1..1000 the
// 95% percentile interval is the 25th and the 975th (Efron & Tibshirani
// 1993, §13.3), although (1 − 0.95)/2·1000 is 25.000000000000021 in binary.
func TestEmpiricalQuantileTextbook(t *testing.T) {
	reps := make([]float64, 1000)
	for i := range reps {
		reps[i] = float64(i + 1)
	}
	iv := percentileInterval(reps, 0.95)
	if iv.Lo != 25 || iv.Hi != 975 || iv.Replicates != 1000 {
		t.Fatalf("got %+v, want [25, 975]", iv)
	}
	if q := empiricalQuantile([]float64{1, 2, 3}, 0.5); q != 2 {
		t.Fatalf("median of 1,2,3 = %v", q)
	}
	if q := empiricalQuantile([]float64{4, 5}, 0); q != 4 {
		t.Fatalf("0-quantile = %v", q)
	}
	if iv := percentileInterval(nil, 0.95); iv != nil {
		t.Fatalf("no replicates gave %+v", iv)
	}
}

// TestClusterBootstrapByHand recomputes the cluster bootstrap of the hand
// case independently: the same PCG stream, the per-template counts written
// out by hand, the replicate accuracies and drops, and the percentile
// interval by sorting.
func TestClusterBootstrapByHand(t *testing.T) {
	const B, seed = 500, 12345
	s, err := Summarize(handCase(), Params{BootstrapResamples: B, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	// Per template A, B, C: (correct, scored).
	baseK, baseN := []float64{2, 1, 3}, []float64{2, 2, 3}
	noopK, noopN := []float64{1, 1, 2}, []float64{2, 3, 2}
	// Pairs per template and base-right→variant-wrong counts.
	pairs, baseOnly := []float64{2, 2, 2}, []float64{1, 1, 0}

	rng := rand.New(rand.NewPCG(seed, BootstrapStream))
	var accNoop, drop, share []float64
	for range B {
		var bk, bn, nk, nn, pp, bo float64
		for range 3 {
			j := rng.IntN(3)
			bk, bn, nk, nn = bk+baseK[j], bn+baseN[j], nk+noopK[j], nn+noopN[j]
			pp, bo = pp+pairs[j], bo+baseOnly[j]
		}
		accNoop = append(accNoop, 100*nk/nn)
		drop = append(drop, 100*bk/bn-100*nk/nn)
		share = append(share, 100*bo/pp)
	}
	for _, x := range []struct {
		name string
		reps []float64
		got  *Interval
	}{
		{"noop accuracy", accNoop, s.Models[0].Variants[1].AccuracyBootstrap},
		{"drop", drop, s.Models[0].Variants[1].DropPP.CI},
		{"base-only share", share, s.Models[0].Variants[1].Paired.BaseOnly.SharePct.CI},
	} {
		sort.Float64s(x.reps)
		lo, hi := quantileByHand(x.reps, 0.025), quantileByHand(x.reps, 0.975)
		if x.got == nil || !near(x.got.Lo, lo) || !near(x.got.Hi, hi) || x.got.Replicates != B {
			t.Errorf("%s: got %+v, want [%v, %v] over %d", x.name, x.got, lo, hi, B)
		}
		if x.reps[0] == x.reps[len(x.reps)-1] {
			t.Errorf("%s: degenerate replicates, the check would prove nothing", x.name)
		}
	}
}

// TestClusterBootstrapB1 uses a single resample: both ends of the interval
// are the statistic on the one drawn set of templates.
func TestClusterBootstrapB1(t *testing.T) {
	s, err := Summarize(handCase(), Params{BootstrapResamples: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, BootstrapStream))
	draw := []int{rng.IntN(3), rng.IntN(3), rng.IntN(3)}
	baseK, baseN := []float64{2, 1, 3}, []float64{2, 2, 3}
	var k, n float64
	for _, j := range draw {
		k, n = k+baseK[j], n+baseN[j]
	}
	iv := s.Models[0].Variants[0].AccuracyBootstrap
	if iv.Lo != iv.Hi || !near(iv.Lo, 100*k/n) {
		t.Fatalf("draw %v: interval %+v, want both ends %v", draw, iv, 100*k/n)
	}
}

// TestBootstrapSharedResample checks that one resample serves every model and
// variant: a variant identical to base has a drop of exactly 0 in every
// resample, and two models with identical trials get identical intervals.
func TestBootstrapSharedResample(t *testing.T) {
	var ts []Trial
	for _, model := range []string{"a.gguf", "b.gguf"} {
		for ti, tpl := range []string{"t1", "t2", "t3", "t4", "t5"} {
			for inst := range 3 {
				correct := inst < ti%4
				for _, v := range []string{"base", "names"} {
					x := tr(tpl, v, inst, correct)
					x.ModelPath, x.ModelName, x.ItemID = model, model, model+x.ItemID
					ts = append(ts, x)
				}
			}
		}
	}
	s, err := Summarize(ts, Params{BootstrapResamples: 300, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range s.Models {
		d := m.Variants[1].DropPP
		if d.Value != 0 || d.CI.Lo != 0 || d.CI.Hi != 0 {
			t.Errorf("%s: identical variant has drop %+v", m.Label, d)
		}
		if m.Variants[1].Verdict != VerdictComputing {
			t.Errorf("%s: verdict %q", m.Label, m.Variants[1].Verdict)
		}
	}
	a, b := s.Models[0].Variants[0].AccuracyBootstrap, s.Models[1].Variants[0].AccuracyBootstrap
	if *a != *b || a.Lo == a.Hi {
		t.Errorf("identical models, different or degenerate intervals: %+v %+v", a, b)
	}
}

func TestSummarizeDeterministic(t *testing.T) {
	s1, _ := Summarize(handCase(), Params{BootstrapResamples: 300, Seed: 9})
	s2, _ := Summarize(handCase(), Params{BootstrapResamples: 300, Seed: 9})
	s3, _ := Summarize(handCase(), Params{BootstrapResamples: 300, Seed: 10})
	j1, _ := json.Marshal(s1)
	j2, _ := json.Marshal(s2)
	j3, _ := json.Marshal(s3)
	if string(j1) != string(j2) {
		t.Fatal("same seed, different summaries")
	}
	if string(j1) == string(j3) {
		t.Fatal("different seeds, identical summaries: the seed is not used")
	}
}

func TestSummarizeErrors(t *testing.T) {
	ts := handCase()
	dup := append(ts, ts[0])
	if _, err := Summarize(dup, Params{}); err == nil {
		t.Error("duplicate trial accepted")
	}
	if _, err := Summarize(ts, Params{BootstrapResamples: -1}); err == nil {
		t.Error("negative B accepted")
	}
	if _, err := Summarize(ts, Params{Confidence: 1.5}); err == nil {
		t.Error("confidence 1.5 accepted")
	}
	s, err := Summarize(nil, Params{})
	if err != nil || len(s.Models) != 0 {
		t.Errorf("empty input: %v, %+v", err, s)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Error(err)
	}
}

// TestSummarizeAllSkipped: no scored trial leaves every statistic undefined
// (nil), and the summary still encodes as JSON (no NaN).
func TestSummarizeAllSkipped(t *testing.T) {
	ts := handCase()
	for i := range ts {
		ts[i].SkipReason = "x"
	}
	s, err := Summarize(ts, Params{BootstrapResamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	v := s.Models[0].Variants[1]
	if v.N != 0 || v.AccuracyPct != nil || v.DropPP != nil || v.Paired.Pairs != 0 || v.Paired.SkippedPairs != 7 {
		t.Errorf("%+v", v)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Fatal(err)
	}
}

func TestClassifyDrop(t *testing.T) {
	p := DefaultParams(0)
	est := func(v, lo, hi float64) *Estimate { return &Estimate{Value: v, CI: &Interval{Lo: lo, Hi: hi}} }
	cases := []struct {
		e    *Estimate
		want string
	}{
		{nil, ""},
		{est(1, 0.5, 1.5), VerdictComputing},        // below the negligible threshold, interval excludes 0
		{est(-12, -20, -4), VerdictComputing},       // the variant did better
		{est(5, -1, 9), VerdictComputing},           // includes 0 and rules out a strong drop
		{est(5, -1, 14), VerdictInconclusive},       // includes 0, cannot rule out a strong drop
		{est(20, -2, 40), VerdictInconclusive},      // large but too uncertain
		{&Estimate{Value: 20}, VerdictInconclusive}, // no interval
		{est(6, 1, 11), VerdictModerate},
		{est(12, 2, 22), VerdictStrong},
		{est(10, 0.1, 20), VerdictStrong},
	}
	for _, c := range cases {
		if got := ClassifyDrop(c.e, p); got != c.want {
			t.Errorf("ClassifyDrop(%+v) = %q, want %q", c.e, got, c.want)
		}
	}
}

// TestEntropyShiftFlag: a constant 0.05-bit shift (interval [0.05, 0.05]) is
// flagged; a constant 0.005-bit one is not, although its interval excludes 0.
func TestEntropyShiftFlag(t *testing.T) {
	for _, c := range []struct {
		shift float64
		flag  bool
	}{{0.05, true}, {0.005, false}, {-0.05, true}} {
		var ts []Trial
		for ti, tpl := range []string{"t1", "t2", "t3", "t4"} {
			for inst := range 2 {
				b := tr(tpl, "base", inst, true)
				v := tr(tpl, "numbers", inst, true)
				b.AnswerEntropyMean = 0.5 + 0.1*float64(ti)
				v.AnswerEntropyMean = b.AnswerEntropyMean + c.shift
				b.EntropyMean, v.EntropyMean = 1, 1
				b.DDCTop, v.DDCTop = "500", "500"
				b.DDCMargin, v.DDCMargin = 0.2, 0.2+c.shift
				ts = append(ts, b, v)
			}
		}
		s, err := Summarize(ts, Params{BootstrapResamples: 200})
		if err != nil {
			t.Fatal(err)
		}
		v := s.Models[0].Variants[1]
		sh := v.AnswerEntropyShift
		if sh.Pairs != 8 || !near(sh.Shift.Value, c.shift) || sh.Meaningful != c.flag {
			t.Errorf("shift %v: %+v (ci %+v)", c.shift, sh, sh.Shift.CI)
		}
		if v.EntropyShift.Meaningful || v.EntropyShift.Shift.Value != 0 {
			t.Errorf("zero all-token shift flagged: %+v", v.EntropyShift)
		}
		if !near(v.DDCMarginShift.Shift.Value, c.shift) || v.DDCMarginShift.Meaningful != (math.Abs(c.shift) >= DDCMarginShiftThreshold) {
			t.Errorf("DDC shift %v: %+v", c.shift, v.DDCMarginShift)
		}
	}
}

// TestShiftExcludesUndefined: pairs without generated tokens, with a NaN
// entropy or without a DDC class do not enter the shifts.
func TestShiftExcludesUndefined(t *testing.T) {
	ts := []Trial{tr("a", "base", 0, true), tr("a", "noop", 0, true), tr("b", "base", 0, true), tr("b", "noop", 0, true), tr("c", "base", 0, true), tr("c", "noop", 0, true)}
	ts[1].AnswerEntropyMean, ts[1].EntropyMean = 1, 1
	ts[3].Tokens = 0
	ts[3].AnswerEntropyMean = 5
	ts[5].EntropyMean, ts[5].AnswerEntropyMean = math.NaN(), math.NaN()
	ts[0].DDCTop, ts[1].DDCTop = "500", "500"
	ts[1].DDCMargin = 0.3
	s, err := Summarize(ts, Params{BootstrapResamples: 20})
	if err != nil {
		t.Fatal(err)
	}
	v := s.Models[0].Variants[1]
	if v.AnswerEntropyShift.Pairs != 1 || v.AnswerEntropyShift.Shift.Value != 1 || v.DDCMarginShift.Pairs != 1 || !near(v.DDCMarginShift.Shift.Value, 0.3) {
		t.Errorf("%+v %+v", v.AnswerEntropyShift, v.DDCMarginShift)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Fatal(err)
	}
}

func TestDifficultyAndLabels(t *testing.T) {
	ts := handCase()
	ts[0].Steps, ts[1].Steps = 4, 4 // template A base
	ts[7].Steps, ts[8].Steps = 4, 4 // template A noop
	// A second model with the same name and quantization: labels fall back to file names.
	for _, x := range handCase() {
		x.ModelPath = "dir/other.gguf"
		ts = append(ts, x)
	}
	s, err := Summarize(ts, Params{BootstrapResamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	if s.Models[0].Label != "m.gguf" || s.Models[1].Label != "other.gguf" {
		t.Errorf("labels %q %q", s.Models[0].Label, s.Models[1].Label)
	}
	got := map[string]string{}
	for _, g := range s.Models[0].Difficulty {
		got[g.Axis+"/"+g.Group+"/"+g.Variant] = fmt.Sprintf("%d/%d", g.K, g.N)
	}
	want := map[string]string{
		"steps/2/base": "4/5", "steps/4/base": "2/2", "steps/2/noop": "3/5", "steps/4/noop": "1/2",
		"relation/sum/base": "6/7", "relation/sum/noop": "4/7",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("difficulty %v, want %v", got, want)
	}
	if s.Models[0].Difficulty[0].Axis != "steps" || s.Models[0].Difficulty[0].Group != "2" {
		t.Errorf("difficulty order %+v", s.Models[0].Difficulty[0])
	}
}
