package summary_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/report"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/stats"
	"github.com/fragility/fragility/probe/summary"
)

// tr builds a scored trial of model "m.gguf".
func tr(template, variant string, inst int, correct bool) results.Trial {
	return results.Trial{
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
func handCase() []results.Trial {
	ts := []results.Trial{
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
	s, err := summary.Summarize(handCase(), summary.Params{BootstrapResamples: 200, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if s.Trials != 15 || s.Skipped != 1 || len(s.Models) != 1 || s.Clusters != 3 || !s.FewTemplates {
		t.Fatalf("trials %d skipped %d models %d clusters %d", s.Trials, s.Skipped, len(s.Models), s.Clusters)
	}
	if !reflect.DeepEqual(s.Variants, []string{"base", "noop"}) || !reflect.DeepEqual(s.Templates, []string{"A", "B", "C"}) {
		t.Fatalf("variants %v templates %v", s.Variants, s.Templates)
	}
	m := s.Models[0]
	if m.Label != "M Q4_K_M" {
		t.Errorf("label %q", m.Label)
	}
	base, noop := m.Variants[0], m.Variants[1]
	// Base: 6 of 7; noop: 4 of 7 scored (one skipped, excluded). No
	// question text: every trial is its own prompt.
	if base.N != 7 || base.K != 6 || noop.N != 7 || noop.K != 4 || noop.Skipped != 1 || noop.Trials != 8 || noop.Copies != 0 || noop.Scored != 7 {
		t.Fatalf("base %v/%d, noop %v/%d skipped %d", base.K, base.N, noop.K, noop.N, noop.Skipped)
	}
	if !near(base.AccuracyPct.Value, 600.0/7) || !near(noop.AccuracyPct.Value, 400.0/7) {
		t.Errorf("accuracies %v %v", base.AccuracyPct.Value, noop.AccuracyPct.Value)
	}
	lo, hi, _ := stats.Wilson(6, 7, 0.95)
	if w := base.AccuracyPct.Wilson; !near(w.Lo, 100*lo) || !near(w.Hi, 100*hi) || w.Method != summary.MethodWilson {
		t.Errorf("base Wilson %+v", w)
	}
	// noop accuracy: CR1 SE 19.680919920393784 pp (statsmodels 0.15.0,
	// clustered OLS on units A = {1,0}, B = {0,0,1}, C = {1,1}); 3 templates,
	// so the reported interval is cluster-t.
	a := noop.AccuracyPct
	if a.SE == nil || !near(*a.SE, 19.680919920393784) || a.Clusters != 3 || a.CI != a.ClusterT || a.CI.Method != summary.MethodClusterT {
		t.Errorf("noop accuracy %+v", a)
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
	if p.Pairs != 6 || p.PairTrials != 6 || p.SkippedPairs != 1 || p.Unmatched != 1 {
		t.Fatalf("pairs %d skipped %d unmatched %d", p.Pairs, p.SkippedPairs, p.Unmatched)
	}
	if p.BothCorrect.Count != 3 || p.BaseOnly.Count != 2 || p.VariantOnly.Count != 0 || p.BothWrong.Count != 1 {
		t.Fatalf("cells %v %v %v %v", p.BothCorrect.Count, p.BaseOnly.Count, p.VariantOnly.Count, p.BothWrong.Count)
	}
	if !near(p.BothCorrect.SharePct.Value, 50) || !near(p.BaseOnly.SharePct.Value, 100.0/3) ||
		p.VariantOnly.SharePct.Value != 0 || !near(p.BothWrong.SharePct.Value, 100.0/6) || !near(p.PairedDropPP.Value, 100.0/3) {
		t.Errorf("shares %+v", p)
	}
	// Paired drop, per-pair differences A = {0,1}, B = {1,0}, C = {0,0}: by
	// hand the residual sums are 1/3, 1/3, −2/3 over n = 6, so SE² =
	// 3/2·(1/18² + 1/18² + 1/9²) = 1/36 and SE = 1/6 = 16.667 pp
	// (statsmodels: 16.66666666666668). Cluster-t on 2 df (scipy t.ppf =
	// 4.302652729911275): [−38.3775454958244, 105.04421216249109], clipped
	// to 100. Sign flip over D = (1, 1, 0): |Σ s·D| ≥ 2 in 4 of 8 sign
	// vectors, p = 0.5.
	d := p.PairedDropPP
	if !near(*d.SE, 16.66666666666668) || !near(d.ClusterT.Lo, -38.3775454958244) || d.ClusterT.Hi != 100 {
		t.Errorf("paired drop %+v cluster-t %+v", d, d.ClusterT)
	}
	// The reported interval is MOVER-Wilson. Plain Python from the formulas
	// (base 5/6, variant 3/6 over the pairs; CR1 variances, Korn–Graubard
	// effective n 5 and 3, capped at 6 distinct prompts a side; the
	// difference's variance floored at its independent-pairs value, which
	// binds here, giving r = 0.7698003589195009; Wilson limits with
	// t.ppf(0.975, 2) = 4.302652729911275; MOVER): [−10.820050133085057,
	// 68.91234712340566] pp.
	if mw := d.MOVERWilson; mw == nil || d.CI != mw || mw.Method != summary.MethodMOVERWilson ||
		math.Abs(mw.Lo+10.820050133085057) > 1e-9 || math.Abs(mw.Hi-68.91234712340566) > 1e-9 {
		t.Errorf("paired drop MOVER-Wilson %+v, CI %+v", d.MOVERWilson, d.CI)
	}
	if p.Test == nil || p.Test.P != 0.5 || p.Test.Templates != 3 || p.Test.MinP != 0.25 || p.Test.Family != 1 || p.Test.Method != "sign-flip, exact" {
		t.Errorf("test %+v", p.Test)
	}
	if noop.ExpectedAnywhere != 0 {
		t.Errorf("expected anywhere %d", noop.ExpectedAnywhere)
	}
	// [−38.4, 100] includes 0 and reaches the margins, and 3 templates
	// cannot detect any drop (the sign-flip test's smallest p is 0.25):
	// uninformative.
	if m.Verdict != summary.VerdictUninformative || m.VerdictVariant != "noop" || m.VerdictRule != "holm" || noop.Verdict != summary.VerdictUninformative {
		t.Errorf("model verdict %q from %q (%s)", m.Verdict, m.VerdictVariant, m.VerdictRule)
	}
	if s.Params.BootstrapResamples != 200 || s.Params.Seed != 7 || s.Params.Confidence != 0.95 || s.Params.StrongDropPP != summary.StrongDropPP ||
		s.Params.FewTemplates != summary.DefaultFewTemplates || s.Params.Power != summary.DefaultPower || !near(s.Params.Alpha, 0.05) {
		t.Errorf("params %+v", s.Params)
	}
}

// TestClusterBootstrapByHand recomputes the cluster bootstrap of the hand
// case independently: the same PCG stream, the per-template counts written
// out by hand, the replicate accuracies and drops, and the percentile
// interval by sorting.
func TestClusterBootstrapByHand(t *testing.T) {
	const B, seed = 500, 12345
	s, err := summary.Summarize(handCase(), summary.Params{BootstrapResamples: B, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	// Per template A, B, C: (correct, scored).
	baseK, baseN := []float64{2, 1, 3}, []float64{2, 2, 3}
	noopK, noopN := []float64{1, 1, 2}, []float64{2, 3, 2}
	// Pairs per template and base-right→variant-wrong counts.
	pairs, baseOnly := []float64{2, 2, 2}, []float64{1, 1, 0}

	rng := rand.New(rand.NewPCG(seed, summary.BootstrapStream))
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
		got  *summary.Interval
	}{
		{"noop accuracy", accNoop, s.Models[0].Variants[1].AccuracyPct.Bootstrap},
		{"drop", drop, s.Models[0].Variants[1].DropPP.Bootstrap},
		{"base-only share", share, s.Models[0].Variants[1].Paired.BaseOnly.SharePct.Bootstrap},
	} {
		sort.Float64s(x.reps)
		// The percentile interval: the ⌈0.025·500⌉ = 13th and the
		// ⌈0.975·500⌉ = 488th smallest replicates.
		lo, hi := x.reps[12], x.reps[487]
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
	s, err := summary.Summarize(handCase(), summary.Params{BootstrapResamples: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, summary.BootstrapStream))
	draw := []int{rng.IntN(3), rng.IntN(3), rng.IntN(3)}
	baseK, baseN := []float64{2, 1, 3}, []float64{2, 2, 3}
	var k, n float64
	for _, j := range draw {
		k, n = k+baseK[j], n+baseN[j]
	}
	iv := s.Models[0].Variants[0].AccuracyPct.Bootstrap
	if iv.Lo != iv.Hi || !near(iv.Lo, 100*k/n) {
		t.Fatalf("draw %v: interval %+v, want both ends %v", draw, iv, 100*k/n)
	}
}

// TestBootstrapSharedResample checks that one resample serves every model and
// variant: a variant identical to base has a drop of exactly 0 in every
// resample, and two models with identical trials get identical intervals.
// The identical variant's clustered intervals are degenerate ([0, 0]), so
// the reported one is the Wilson bound of its (empty) discordant shares,
// not an interval "certain" of no drop.
func TestBootstrapSharedResample(t *testing.T) {
	var ts []results.Trial
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
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 300, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range s.Models {
		d := m.Variants[1].DropPP
		if d.Value != 0 || d.Bootstrap.Lo != 0 || d.Bootstrap.Hi != 0 || !d.Degenerate {
			t.Errorf("%s: identical variant has drop %+v", m.Label, d)
		}
		pd := m.Variants[1].Paired.PairedDropPP
		// Every pair agrees: the clustered SE is 0 (Degenerate), and the
		// reported MOVER-Wilson interval is symmetric around 0 (the two
		// Wilson intervals are the same, correlation 1) but not [0, 0].
		if !pd.Degenerate || pd.CI == nil || pd.CI.Method != summary.MethodMOVERWilson || !(pd.CI.Hi > 5) || !near(pd.CI.Lo, -pd.CI.Hi) {
			t.Errorf("%s: degenerate paired drop reported as %+v", m.Label, pd.CI)
		}
		if m.Variants[1].Verdict != summary.VerdictUninformative { // the bound, 26 pp, is far above the margin, and no drop is detectable
			t.Errorf("%s: verdict %q", m.Label, m.Variants[1].Verdict)
		}
	}
	a, b := s.Models[0].Variants[0].AccuracyPct.Bootstrap, s.Models[1].Variants[0].AccuracyPct.Bootstrap
	if *a != *b || a.Lo == a.Hi {
		t.Errorf("identical models, different or degenerate intervals: %+v %+v", a, b)
	}
	// The two identical models differ by 0 everywhere: no difference shown.
	if len(s.ModelPairs) != 1 || len(s.ModelPairs[0].Accuracy) != 2 || len(s.ModelPairs[0].Drop) != 1 {
		t.Fatalf("model pairs %+v", s.ModelPairs)
	}
	for _, d := range append(s.ModelPairs[0].Accuracy, s.ModelPairs[0].Drop...) {
		if d.Shown || d.DiffPP.Value != 0 || d.Test.P != 1 || d.Units != 15 {
			t.Errorf("identical models: %+v", d)
		}
	}
}

func TestSummarizeDeterministic(t *testing.T) {
	s1, _ := summary.Summarize(handCase(), summary.Params{BootstrapResamples: 300, Seed: 9})
	s2, _ := summary.Summarize(handCase(), summary.Params{BootstrapResamples: 300, Seed: 9})
	s3, _ := summary.Summarize(handCase(), summary.Params{BootstrapResamples: 300, Seed: 10})
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
	if _, err := summary.Summarize(dup, summary.Params{}); err == nil {
		t.Error("duplicate trial accepted")
	}
	if _, err := summary.Summarize(ts, summary.Params{BootstrapResamples: -1}); err == nil {
		t.Error("negative B accepted")
	}
	if _, err := summary.Summarize(ts, summary.Params{Confidence: 1.5}); err == nil {
		t.Error("confidence 1.5 accepted")
	}
	if _, err := summary.Summarize(ts, summary.Params{Power: 1}); err == nil {
		t.Error("power 1 accepted")
	}
	if _, err := summary.Summarize(ts, summary.Params{Primary: "base"}); err == nil {
		t.Error("base accepted as the primary variant")
	}
	if _, err := summary.Summarize(ts, summary.Params{Primary: "symbolic"}); err == nil || !strings.Contains(err.Error(), "noop") {
		t.Errorf("a primary variant not in the run: %v", err)
	}
	s, err := summary.Summarize(nil, summary.Params{})
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
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	v := s.Models[0].Variants[1]
	if v.N != 0 || v.AccuracyPct != nil || v.DropPP != nil || v.Paired.Pairs != 0 || v.Paired.SkippedPairs != 7 || v.Paired.Test != nil || v.Verdict != "" {
		t.Errorf("%+v", v)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Fatal(err)
	}
}

// shiftTrials is one model over the given number of templates × 2
// instances, base and numbers both right, with the answer-token entropy and
// the DDC margin shifted by shift + 0.001·template on numbers (so the shift
// varies a little between templates and its interval is not degenerate).
func shiftTrials(templates int, shift float64) []results.Trial {
	var ts []results.Trial
	for ti := range templates {
		tpl := fmt.Sprintf("t%02d", ti)
		for inst := range 2 {
			b := tr(tpl, "base", inst, true)
			v := tr(tpl, "numbers", inst, true)
			b.AnswerEntropyMean = 0.5 + 0.1*float64(ti%5)
			v.AnswerEntropyMean = b.AnswerEntropyMean + shift + 0.001*float64(ti)
			b.EntropyMean, v.EntropyMean = 1, 1
			b.DDCTop, v.DDCTop = "500", "500"
			b.DDCMargin, v.DDCMargin = 0.2, 0.2+shift+0.001*float64(ti)
			ts = append(ts, b, v)
		}
	}
	return ts
}

// TestEntropyShiftFlag: the threshold applies to the interval's bound, and
// the sign-flip test must reach α. A 0.05-bit shift over 8 templates
// (interval about [0.05, 0.06]) is flagged; a 0.005-bit one is not,
// although its interval excludes 0; with 4 templates even the 0.05-bit
// shift is not, because the sign-flip test cannot go below 2/16.
func TestEntropyShiftFlag(t *testing.T) {
	for _, c := range []struct {
		templates int
		shift     float64
		flag      bool
	}{{8, 0.05, true}, {8, 0.005, false}, {8, -0.05, true}, {4, 0.05, false}} {
		s, err := summary.Summarize(shiftTrials(c.templates, c.shift), summary.Params{BootstrapResamples: 200})
		if err != nil {
			t.Fatal(err)
		}
		v := s.Models[0].Variants[1]
		sh := v.AnswerEntropyShift
		if sh.Pairs != 2*c.templates || sh.Meaningful != c.flag || sh.Shift.CI == nil || !sh.Shift.CI.Excludes0() {
			t.Errorf("%d templates, shift %v: %+v (ci %+v, test %+v)", c.templates, c.shift, sh, sh.Shift.CI, sh.Test)
		}
		if v.EntropyShift.Meaningful || v.EntropyShift.Shift.Value != 0 || v.EntropyShift.Shift.CI != nil || !v.EntropyShift.Shift.Degenerate {
			t.Errorf("zero all-token shift: %+v", v.EntropyShift.Shift)
		}
		want := c.flag && math.Abs(c.shift) >= summary.DDCMarginShiftThreshold
		if v.DDCMarginShift.Meaningful != want {
			t.Errorf("DDC shift %v: %+v", c.shift, v.DDCMarginShift)
		}
	}
}

// TestShiftExcludesUndefined: pairs without generated tokens, with a NaN
// entropy or without a DDC class do not enter the shifts.
func TestShiftExcludesUndefined(t *testing.T) {
	ts := []results.Trial{tr("a", "base", 0, true), tr("a", "noop", 0, true), tr("b", "base", 0, true), tr("b", "noop", 0, true), tr("c", "base", 0, true), tr("c", "noop", 0, true)}
	ts[1].AnswerEntropyMean, ts[1].EntropyMean = 1, 1
	ts[3].Tokens = 0
	ts[3].AnswerEntropyMean = 5
	ts[5].EntropyMean, ts[5].AnswerEntropyMean = math.NaN(), math.NaN()
	ts[0].DDCTop, ts[1].DDCTop = "500", "500"
	ts[1].DDCMargin = 0.3
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 20})
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
	for i := range ts {
		if ts[i].TemplateID == "C" {
			ts[i].Level = "p1"
		} else {
			ts[i].Level = "symbolic"
		}
	}
	// A second model with the same name and quantization: labels fall back to file names.
	for _, x := range handCase() {
		x.ModelPath = "dir/other.gguf"
		ts = append(ts, x)
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	if s.Models[0].Label != "m.gguf" || s.Models[1].Label != "other.gguf" {
		t.Errorf("labels %q %q", s.Models[0].Label, s.Models[1].Label)
	}
	got := map[string]string{}
	for _, g := range s.Models[0].Difficulty {
		k := g.Axis + "/" + g.Group + "/" + g.Variant
		got[k] = fmt.Sprintf("%v/%d", g.K, g.N)
		if g.Pairs > 0 {
			got[k] += fmt.Sprintf(" pairs %d: %v↓ %v↑", g.Pairs, g.BaseOnly, g.VariantOnly)
		}
	}
	// Pairs: A0 both right, A1 base only, B0 base only, B1 both wrong, C0 C1
	// both right.
	want := map[string]string{
		"level/symbolic/base": "3/4", "level/p1/base": "3/3", "level/symbolic/noop": "2/5 pairs 4: 2↓ 0↑", "level/p1/noop": "2/2 pairs 2: 0↓ 0↑",
		"steps/2/base": "4/5", "steps/4/base": "2/2", "steps/2/noop": "3/5 pairs 4: 1↓ 0↑", "steps/4/noop": "1/2 pairs 2: 1↓ 0↑",
		"relation/sum/base": "6/7", "relation/sum/noop": "4/7 pairs 6: 2↓ 0↑",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("difficulty %v, want %v", got, want)
	}
	if d := s.Models[0].Difficulty; d[0].Axis != "level" || d[0].Group != "symbolic" || d[2].Group != "p1" {
		t.Errorf("difficulty order %+v %+v", d[0], d[2])
	}
}

// promptTrials is one model's trials with question texts: per template,
// base instances all share the template's base question (copies), noop
// instances have their own questions.
func promptTrials(templates, instances int, baseRight, noopRight func(ti, inst int) bool) []results.Trial {
	var ts []results.Trial
	for ti := range templates {
		tpl := fmt.Sprintf("t%02d", ti)
		for inst := range instances {
			b := tr(tpl, "base", inst, baseRight(ti, inst))
			b.Question = fmt.Sprintf("base question of %s", tpl)
			v := tr(tpl, "noop", inst, noopRight(ti, inst))
			v.Question = fmt.Sprintf("noop question %d of %s", inst, tpl)
			ts = append(ts, b, v)
		}
	}
	return ts
}

// TestIdenticalPromptsCountOnce: the base instances of a template are one
// prompt, whatever the number of copies; the accuracy, its Wilson interval
// and the paired table count distinct prompts and pairs, and the copies
// are reported.
func TestIdenticalPromptsCountOnce(t *testing.T) {
	right := func(ti, inst int) bool { return ti%2 == 0 }
	s, err := summary.Summarize(promptTrials(6, 5, right, right), summary.Params{BootstrapResamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	base, noop := s.Models[0].Variants[0], s.Models[0].Variants[1]
	if base.Scored != 30 || base.N != 6 || base.Copies != 24 || base.K != 3 || base.CorrectTrials != 15 {
		t.Errorf("base: %d scored, %d prompts, %d copies, k %v, %d right trials", base.Scored, base.N, base.Copies, base.K, base.CorrectTrials)
	}
	lo, hi, _ := stats.Wilson(3, 6, 0.95)
	if w := base.AccuracyPct.Wilson; !near(w.Lo, 100*lo) || !near(w.Hi, 100*hi) {
		t.Errorf("Wilson over copies: %+v", w)
	}
	if noop.N != 30 || noop.Copies != 0 {
		t.Errorf("noop: %d prompts, %d copies", noop.N, noop.Copies)
	}
	// Every noop pair has its own variant prompt: 30 distinct pairs. A
	// paraphrase-like variant with one question per template collapses its
	// pairs too.
	if p := noop.Paired; p.Pairs != 30 || p.Copies != 0 {
		t.Errorf("noop pairs %d copies %d", p.Pairs, p.Copies)
	}
	ts := promptTrials(6, 5, right, right)
	for i := range ts {
		if ts[i].Variant == "noop" {
			ts[i].Variant = "paraphrase"
			ts[i].Question = "paraphrase of " + ts[i].TemplateID
		}
	}
	s, _ = summary.Summarize(ts, summary.Params{BootstrapResamples: 50})
	if v := s.Models[0].Variants[1]; v.N != 6 || v.Copies != 24 || v.Paired.Pairs != 6 || v.Paired.Copies != 24 || v.Paired.PairTrials != 30 {
		t.Errorf("paraphrase: %d prompts (%d copies), %d pairs (%d copies)", v.N, v.Copies, v.Paired.Pairs, v.Paired.Copies)
	}
	// Copies that disagree (as sampling can give) count as a share.
	ts = promptTrials(6, 2, right, right)
	ts[0].Correct = false // t00 base instance 0; instance 1 stays right
	s, _ = summary.Summarize(ts, summary.Params{BootstrapResamples: 50})
	if b := s.Models[0].Variants[0]; b.K != 2.5 || b.N != 6 {
		t.Errorf("disagreeing copies: k %v of %d", b.K, b.N)
	}
}

// TestFlippedPairsNotNoDrop is the case of the methods review: base right and
// variant wrong on 3 templates, the reverse on the other 3, 5 pairs each.
// The paired drop is 0, but every pair flipped: the interval is wide and the
// verdict must not be "no detectable drop".
func TestFlippedPairsNotNoDrop(t *testing.T) {
	s, err := summary.Summarize(promptTrials(6, 5, func(ti, _ int) bool { return ti < 3 }, func(ti, _ int) bool { return ti >= 3 }),
		summary.Params{BootstrapResamples: 500, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	m := s.Models[0]
	noop := m.Variants[1]
	p := noop.Paired
	if p.Pairs != 30 || p.BaseOnly.Count != 15 || p.VariantOnly.Count != 15 || p.PairedDropPP.Value != 0 {
		t.Fatalf("pairs %+v", p)
	}
	if m.Verdict == summary.VerdictNoDrop || noop.Verdict != summary.VerdictUninformative || p.Test.P != 1 {
		t.Errorf("verdict %q (%q), p %v, CI %+v", m.Verdict, noop.Verdict, p.Test.P, p.PairedDropPP.CI)
	}
	if ci := p.PairedDropPP.CI; ci.Method != summary.MethodMOVERWilsonSignFlip || ci.Lo > -50 || ci.Hi < 50 {
		t.Errorf("interval %+v", ci)
	}
	md := report.Narrative(s)
	if strings.Contains(md, "Verdict: "+summary.VerdictNoDrop) || !strings.Contains(md, "base right → variant wrong in 15 of 30 distinct pairs (50.0%) and base wrong → variant right in 15 (50.0%)") {
		t.Errorf("narrative:\n%s", md)
	}
}

// TestDegenerateNotCertain: a variant with every trial wrong prints as
// "all trials wrong", with its Wilson interval, never as [0.0, 0.0].
func TestDegenerateNotCertain(t *testing.T) {
	s, err := summary.Summarize(promptTrials(6, 2, func(ti, _ int) bool { return ti%3 != 0 }, func(int, int) bool { return false }), summary.Params{BootstrapResamples: 100})
	if err != nil {
		t.Fatal(err)
	}
	noop := s.Models[0].Variants[1]
	a := noop.AccuracyPct
	if !a.Degenerate || a.CI == nil || a.CI.Method != summary.MethodWilson || a.CI.Lo != 0 || a.CI.Hi < 20 {
		t.Errorf("all-wrong accuracy %+v ci %+v", a, a.CI)
	}
	md := report.Narrative(s)
	if strings.Contains(md, "[0.0, 0.0]") || !strings.Contains(md, "all trials wrong (0/12)") {
		t.Errorf("narrative:\n%s", md)
	}
}

// TestPrimaryVariant: with a primary variant its test stands alone (not
// adjusted) and its verdict is the model's, even when another variant's is
// more severe; without one, Holm runs across the variants.
func TestPrimaryVariant(t *testing.T) {
	var ts []results.Trial
	for ti := range 8 {
		tpl := fmt.Sprintf("t%02d", ti)
		for inst := range 3 {
			ts = append(ts, tr(tpl, "base", inst, true), tr(tpl, "names", inst, inst != 0 || ti%4 != 0), tr(tpl, "noop", inst, inst == 2))
		}
	}
	holm, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 200})
	if err != nil {
		t.Fatal(err)
	}
	prim, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 200, Primary: "names"})
	if err != nil {
		t.Fatal(err)
	}
	hn, pn := holm.Models[0].Variant("noop").Paired.Test, prim.Models[0].Variant("names").Paired.Test
	if hn.Family != 2 || hn.Adjustment != "holm" || hn.PAdjusted < hn.P {
		t.Errorf("Holm test %+v", hn)
	}
	if pn.Family != 1 || pn.PAdjusted != pn.P || pn.Adjustment != "none: primary variant" {
		t.Errorf("primary test %+v", pn)
	}
	if sec := prim.Models[0].Variant("noop").Paired.Test; sec.Family != 1 || sec.Adjustment != "holm among secondary variants" {
		t.Errorf("secondary test %+v", sec)
	}
	hm, pm := holm.Models[0], prim.Models[0]
	// noop loses 2 of 3 on every template: strong under Holm (8 templates:
	// smallest p 2/256, times 2 variants).
	if hm.Verdict != summary.VerdictStrong || hm.VerdictVariant != "noop" || hm.VerdictRule != "holm" {
		t.Errorf("Holm: %q on %q", hm.Verdict, hm.VerdictVariant)
	}
	if pm.VerdictVariant != "names" || pm.VerdictRule != "primary" || pm.Verdict != pm.Variant("names").Verdict || !pm.Variant("names").Primary {
		t.Errorf("primary: %q on %q (%s)", pm.Verdict, pm.VerdictVariant, pm.VerdictRule)
	}
	if !strings.Contains(report.Narrative(prim), "the pre-specified primary variant, tested alone") {
		t.Error("narrative does not say the verdict is the primary variant's")
	}
}

// TestModelPairsByHand: two models on the same prompts. Model B answers
// every prompt right; model A misses the noop prompt of instance 0 in every
// template and one base prompt. The differences A − B are the means over
// matched prompts (pairs) of the per-unit differences.
func TestModelPairsByHand(t *testing.T) {
	var ts []results.Trial
	for _, m := range []string{"a.gguf", "b.gguf"} {
		for ti := range 8 {
			tpl := fmt.Sprintf("t%02d", ti)
			for inst := range 2 {
				for _, v := range []string{"base", "noop"} {
					ok := m == "b.gguf" || !(v == "noop" && inst == 0) && !(v == "base" && ti == 0 && inst == 1)
					x := tr(tpl, v, inst, ok)
					x.ModelPath, x.ModelName, x.ItemID = m, m, m+x.ItemID
					ts = append(ts, x)
				}
			}
		}
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.ModelPairs) != 1 {
		t.Fatalf("%d model pairs", len(s.ModelPairs))
	}
	mp := s.ModelPairs[0]
	if mp.A != s.Models[0].Label || mp.B != s.Models[1].Label || mp.APath != "a.gguf" || mp.Family != 3 || len(mp.Accuracy) != 2 || len(mp.Drop) != 1 {
		t.Fatalf("%+v", mp)
	}
	// Base accuracy: A misses 1 of 16 prompts: −6.25 pp. Noop: A misses 8
	// of 16: −50 pp. Paired drop on noop: A's per-pair differences are 1 on
	// the 8 instance-0 pairs, 0 elsewhere except t00/1 (base wrong, noop
	// right: −1): (8 − 1)/16 = 43.75 pp; B's are all 0.
	acc, drop := mp.Accuracy, mp.Drop[0]
	if !near(acc[0].DiffPP.Value, -6.25) || acc[0].AHigher != 0 || acc[0].BHigher != 1 || acc[0].Units != 16 {
		t.Errorf("base accuracy difference %+v", acc[0])
	}
	if !near(acc[1].DiffPP.Value, -50) || acc[1].BHigher != 8 || !acc[1].Shown {
		t.Errorf("noop accuracy difference %+v (%+v)", acc[1], acc[1].Test)
	}
	if !near(drop.DiffPP.Value, 43.75) || drop.AHigher != 8 || drop.BHigher != 1 || drop.Units != 16 || !drop.Shown || drop.Test.Family != 3 {
		t.Errorf("drop difference %+v (%+v, ci %+v)", drop, drop.Test, drop.DiffPP.CI)
	}
	md := report.Narrative(s)
	if !strings.Contains(md, mp.A+"'s paired drop on noop is 43.8 pp larger than "+mp.B+"'s") || strings.Contains(md, "not tested here") {
		t.Errorf("narrative:\n%s", md)
	}
}

// TestReportedIntervalBySize: below Params.FewTemplates templates the
// cluster-t interval is reported for an accuracy, MOVER-Wilson with the
// sign-flip lower limit for the paired drop (its lower limit the lower of
// the two), and the narrative warns; from there on the bootstrap
// interval is reported for an accuracy, the inverted sign-flip test on the
// template means for the paired drop, its upper limit at least the
// skew-corrected t's (it excludes 0 exactly when the drop's
// unadjusted test rejects at α), and the sign-flip test is Monte Carlo above
// the exact limit.
func TestReportedIntervalBySize(t *testing.T) {
	right := func(ti, inst int) bool { return (ti+inst)%3 != 0 }
	for _, c := range []struct {
		templates              int
		method, drop, coverage string
		warn                   bool
		test                   string
	}{{6, summary.MethodClusterT, summary.MethodMOVERWilsonSignFlip, summary.CoverageApproximate, true, "sign-flip, exact"},
		{24, summary.MethodBootstrap, summary.MethodSignFlipSkew, summary.CoverageNominal, false, "sign-flip, Monte Carlo, randomized at ties"}} {
		s, err := summary.Summarize(promptTrials(c.templates, 3, right, func(ti, inst int) bool { return right(ti, inst) && inst != 1 }), summary.Params{BootstrapResamples: 300, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		v := s.Models[0].Variants[1]
		if s.FewTemplates != c.warn || v.AccuracyPct.CI.Method != c.method || v.Paired.PairedDropPP.CI.Method != c.drop || v.Paired.Test.Method != c.test {
			t.Errorf("%d templates: few %v, accuracy %+v, drop %+v, test %+v", c.templates, s.FewTemplates, v.AccuracyPct.CI, v.Paired.PairedDropPP.CI, v.Paired.Test)
		}
		if ci := v.Paired.PairedDropPP.CI; c.templates >= 20 && ci.Excludes0() != (v.Paired.Test.P <= s.Params.Alpha) {
			t.Errorf("%d templates: drop interval %+v but unadjusted p %v", c.templates, ci, v.Paired.Test.P)
		}
		if e := v.Paired.PairedDropPP; c.templates < 20 && (e.CI.Lo != min(e.MOVERWilson.Lo, e.SignFlip.Lo) || e.CI.Hi != e.MOVERWilson.Hi) {
			t.Errorf("%d templates: drop interval %+v from MOVER-Wilson %+v and sign-flip %+v", c.templates, e.CI, e.MOVERWilson, e.SignFlip)
		}
		if e := v.Paired.PairedDropPP; c.templates >= 20 && (e.SkewT == nil || e.CI.Lo != e.SignFlip.Lo || e.CI.Hi != max(e.SignFlip.Hi, e.SkewT.Hi)) {
			t.Errorf("%d templates: drop interval %+v from sign-flip %+v and skew-corrected t %+v", c.templates, e.CI, e.SignFlip, e.SkewT)
		}
		if v.Paired.IntervalCoverage != c.coverage {
			t.Errorf("%d templates: interval coverage %q, want %q", c.templates, v.Paired.IntervalCoverage, c.coverage)
		}
		if c.test == "sign-flip, Monte Carlo" && (v.Paired.Test.Draws != stats.MonteCarloDraws || v.Paired.Test.MinP != 1.0/(stats.MonteCarloDraws+1)) {
			t.Errorf("Monte Carlo test %+v", v.Paired.Test)
		}
		if strings.Contains(report.Narrative(s), "**Few templates") != c.warn {
			t.Errorf("%d templates: few-template warning present = %v", c.templates, !c.warn)
		}
	}
}

// TestPowerInSummary: the minimum detectable drop uses the observed
// variance components of the per-pair differences and the templates solved
// in some pair, matches stats.PairedDropMDEInformed on them, and falls back to the planning defaults when nothing varies.
func TestPowerInSummary(t *testing.T) {
	right := func(ti, inst int) bool { return (ti+inst)%3 != 0 }
	s, _ := summary.Summarize(promptTrials(10, 4, right, func(ti, inst int) bool { return right(ti, inst) && (ti+2*inst)%5 != 0 }), summary.Params{BootstrapResamples: 50})
	pw := s.Models[0].Variants[1].Paired.Power
	if pw == nil || pw.Source != "observed" || pw.Templates != 10 || pw.PairsPerTemplate != 4 || pw.MDEPP == nil || pw.Alpha != s.Params.Alpha || !pw.Attainable {
		t.Fatalf("power %+v", pw)
	}
	// A template is informative when base or variant is right in some pair.
	informative := 0
	for ti := range 10 {
		for inst := range 4 {
			if right(ti, inst) {
				informative++
				break
			}
		}
	}
	if pw.InformativeTemplates != informative {
		t.Errorf("informative templates %d, want %d", pw.InformativeTemplates, informative)
	}
	want := 100 * stats.PairedDropMDEInformed(10, informative, 4, stats.Components{Between: pw.Between, Within: pw.Within}, pw.Alpha, 0.8, summary.DefaultFewTemplates)
	if !near(*pw.MDEPP, want) || *pw.MDEPP <= 0 {
		t.Errorf("MDE %v, want %v", *pw.MDEPP, want)
	}
	s, _ = summary.Summarize(promptTrials(10, 4, right, right), summary.Params{BootstrapResamples: 50})
	if pw := s.Models[0].Variants[1].Paired.Power; pw.Source != "planning defaults" || pw.Between != summary.PlanningBetween || pw.Within != summary.PlanningWithin {
		t.Errorf("no variation: %+v", pw)
	}
	// Only 3 of 10 templates solved in any pair (the same 2 of 4 pairs on
	// both sides): too few for the sign-flip test to reach α, so no MDE,
	// not attainable, and no "no detectable drop".
	few := func(ti, inst int) bool { return ti < 3 && inst%2 == 0 }
	s, _ = summary.Summarize(promptTrials(10, 4, few, few), summary.Params{BootstrapResamples: 50})
	v := s.Models[0].Variants[1]
	if pw := v.Paired.Power; pw.InformativeTemplates != 3 || pw.MDEPP != nil || pw.Attainable || v.Verdict == summary.VerdictNoDrop {
		t.Errorf("3 informative templates: power %+v, verdict %q", pw, v.Verdict)
	}
}

// TestResultsCSVSummary: the summary computed from the CSV equals the one
// computed from the trials themselves (the check `fragility report` relies on).
func TestResultsCSVSummary(t *testing.T) {
	in := handCase()
	for i := range in {
		in[i].Question = fmt.Sprintf("Question %d, with \"quotes\",\nand a newline", i%3)
		in[i].EntropyMean = 0.1 * float64(i+1) / 3
	}
	var buf bytes.Buffer
	if err := results.WriteCSV(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := results.ReadCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	p := summary.Params{BootstrapResamples: 100, Seed: 5}
	s1, err := summary.Summarize(in, p)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := summary.Summarize(out, p)
	if err != nil {
		t.Fatal(err)
	}
	j1, _ := json.Marshal(s1)
	j2, _ := json.Marshal(s2)
	if string(j1) != string(j2) {
		t.Fatal("summary from results.csv differs from the summary of the trials")
	}
	// And the accuracies, recomputed from the CSV rows by hand (distinct
	// prompts per template, each scored by the share of its copies right),
	// equal the summary.
	for _, v := range s2.Models[0].Variants {
		type unit struct{ right, copies int }
		units := map[string]*unit{}
		for _, x := range out {
			if x.Variant == v.Variant && x.SkipReason == "" {
				key := x.TemplateID + "|" + x.Question
				if x.Question == "" {
					key += "|" + strconv.Itoa(x.Instance)
				}
				if units[key] == nil {
					units[key] = &unit{}
				}
				units[key].copies++
				if x.Correct {
					units[key].right++
				}
			}
		}
		var k float64
		for _, u := range units {
			k += float64(u.right) / float64(u.copies)
		}
		n := len(units)
		if math.Abs(v.K-k) > 1e-9 || v.N != n || math.Abs(v.AccuracyPct.Value-100*k/float64(n)) > 1e-9 {
			t.Errorf("%s: summary %v/%d %v, CSV %v/%d", v.Variant, v.K, v.N, v.AccuracyPct.Value, k, n)
		}
	}
	if report.Narrative(s1) != report.Narrative(s2) {
		t.Fatal("narrative from results.csv differs")
	}
}

// TestAllPairsAgreeNeverZeroWidth: six templates whose variant answers
// exactly as base did (no discordant pair) at a base accuracy of 50%: the
// paired drop is 0 and its interval is not [0, 0] (the phi coefficient is
// 1 there; Newcombe's continuity-corrected phi keeps the interval open),
// and the verdict is not "no detectable drop", which such a small run
// cannot show.
func TestAllPairsAgreeNeverZeroWidth(t *testing.T) {
	same := func(ti, _ int) bool { return ti < 3 }
	s, err := summary.Summarize(promptTrials(6, 1, same, same), summary.Params{BootstrapResamples: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	v := s.Models[0].Variants[1]
	ci := v.Paired.PairedDropPP.CI
	if v.Paired.PairedDropPP.Value != 0 || ci == nil || ci.Hi-ci.Lo < 10 || ci.Lo >= 0 || ci.Hi <= 0 {
		t.Fatalf("paired drop %v, interval %+v", v.Paired.PairedDropPP.Value, ci)
	}
	if v.Verdict == summary.VerdictNoDrop {
		t.Errorf("verdict %q with an MDE of %v pp", v.Verdict, *v.Paired.Power.MDEPP)
	}
	if v.Paired.IntervalCoverage != summary.CoverageConservative {
		t.Errorf("interval coverage %q, want conservative (MOVER-Wilson, every template mean 0)", v.Paired.IntervalCoverage)
	}
}

// TestAnswerStabilityByHand: answer changes count over the pairs whose
// problems keep their answer (noop) and that were answered on both sides,
// right or wrong (a pair with no answer on a side is left out), and the original's
// answer over the pairs whose answer changes (numbers), each against
// counts made by hand.
func TestAnswerStabilityByHand(t *testing.T) {
	var ts []results.Trial
	for ti := range 4 {
		tpl := fmt.Sprintf("t%d", ti)
		b := tr(tpl, "base", 0, true)
		b.Expected, b.Extracted = "10", "10"
		// noop: same answer 10; template 0 answers 11 (changed, wrong),
		// template 1 answers nothing (left out), the others 10.
		n := tr(tpl, "noop", 0, true)
		n.Expected, n.Extracted = "10", "10"
		switch ti {
		case 0:
			n.Extracted, n.Correct = "11", false
		case 1:
			n.Extracted, n.Correct = "", false
		}
		// numbers: answer 20; templates 2 and 3 answer the original's 10.
		m := tr(tpl, "numbers", 0, true)
		m.Expected, m.Extracted = "20", "20"
		if ti >= 2 {
			m.Extracted, m.Correct = "10", false
		}
		ts = append(ts, b, n, m)
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 100, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	noop, numbers := s.Models[0].Variant("noop").Paired, s.Models[0].Variant("numbers").Paired
	if c := noop.AnswerChanged; c == nil || c.Pairs != 3 || noop.AnswerLeftOut != 1 || c.Count != 1 || math.Abs(c.SharePct.Value-100.0/3) > 1e-9 || noop.OriginalRecalled != nil {
		t.Errorf("noop: changed %+v, recalled %+v", c, noop.OriginalRecalled)
	}
	if r := numbers.OriginalRecalled; r == nil || r.Pairs != 4 || r.Count != 2 || r.SharePct.Value != 50 || numbers.AnswerChanged != nil {
		t.Errorf("numbers: recalled %+v, changed %+v", r, numbers.AnswerChanged)
	}
	md := report.Narrative(s)
	if !strings.Contains(md, "### Answer stability") || !strings.Contains(md, "| noop | 2 of 4 (50.0%") || !strings.Contains(md, "; 1 of them with no answer |") || !strings.Contains(md, "; 1 pair without an answer on a side left out |") || !strings.Contains(md, "| numbers | n/a | n/a | n/a | n/a | 2 of 4 (50.0%") {
		t.Errorf("narrative:\n%s", md)
	}
}

// TestRelativeDropNoneNearZero: with a base accuracy whose interval reaches
// 0 the relative drop is not given (its delta-method interval is
// meaningless there); with a base accuracy well above 0 it is.
func TestRelativeDropNoneNearZero(t *testing.T) {
	low, err := summary.Summarize(promptTrials(6, 2, func(ti, _ int) bool { return ti == 0 }, func(int, int) bool { return false }), summary.Params{BootstrapResamples: 100})
	if err != nil {
		t.Fatal(err)
	}
	if v := low.Models[0].Variants[1]; v.RelativeDropPct != nil || v.DropPP == nil {
		t.Errorf("low base accuracy: relative drop %+v, drop %+v", v.RelativeDropPct, v.DropPP)
	}
	high, _ := summary.Summarize(promptTrials(6, 2, func(int, int) bool { return true }, func(ti, _ int) bool { return ti%2 == 0 }), summary.Params{BootstrapResamples: 100})
	if v := high.Models[0].Variants[1]; v.RelativeDropPct == nil || math.Abs(v.RelativeDropPct.Value-50) > 1e-9 {
		t.Errorf("high base accuracy: relative drop %+v", v.RelativeDropPct)
	}
}

// TestLevelDifferencesByHand: four original problems with a template at
// level symbolic and one at p1 (base only): the per-original differences
// are 1, 1, 0.5 and 0, so the drop is 62.5 pp with the standard error of a
// mean of four values, the cluster-t interval on 3 degrees of freedom and
// the exact sign-flip p of 4/16.
func TestLevelDifferencesByHand(t *testing.T) {
	var ts []results.Trial
	right := map[string][2][]bool{ // original -> (symbolic trials, p1 trials)
		"o1": {{true, true}, {false, false}},
		"o2": {{true}, {false}},
		"o3": {{true, true}, {true, false}},
		"o4": {{false}, {false}},
	}
	for o, lv := range right {
		for li, level := range []string{"symbolic", "p1"} {
			for i, ok := range lv[li] {
				x := tr(o+"-"+level, "base", i, ok)
				x.Level, x.IDOrig = level, o
				ts = append(ts, x)
			}
		}
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ls := s.Models[0].Levels
	if len(ls) != 1 {
		t.Fatalf("levels %+v", ls)
	}
	d := ls[0]
	se := math.Sqrt(0.6875/12) * 100
	lo := 62.5 - stats.TQuantile(0.975, 3)*se
	if d.From != "symbolic" || d.To != "p1" || d.Variant != "base" || d.Originals != 4 || !near(d.FromPct, 75) || !near(d.ToPct, 12.5) ||
		!near(d.DropPP.Value, 62.5) || !near(*d.DropPP.SE, se) || !near(d.DropPP.CI.Lo, lo) || d.DropPP.CI.Hi != 100 || !near(d.Test.P, 0.25) {
		t.Errorf("level difference %+v (se %v ci %+v test %+v), want se %v lo %v", d, *d.DropPP.SE, d.DropPP.CI, d.Test, se, lo)
	}
	if md := report.Narrative(s); !strings.Contains(md, "| symbolic → p1 | base | 4 | 75.0% | 12.5% | 62.5") {
		t.Errorf("narrative:\n%s", md)
	}
}

// TestErrorAnatomyByHand: the kinds of the wrong trials are counted per
// variant with their shares; a variant with a wrong trial that has no kind
// (a run recorded before the error anatomy) gets none.
func TestErrorAnatomyByHand(t *testing.T) {
	var ts []results.Trial
	kinds := []string{"arithmetic", "arithmetic", "unfinished", "other"}
	for ti, k := range kinds {
		b := tr(fmt.Sprintf("t%d", ti), "base", 0, true)
		v := tr(fmt.Sprintf("t%d", ti), "noop", 0, false)
		v.ErrorKind = k
		n := tr(fmt.Sprintf("t%d", ti), "names", 0, ti != 0)
		ts = append(ts, b, v, n)
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	e := s.Models[0].Variant("noop").Errors
	if e == nil || e.Wrong != 4 || len(e.Kinds) != 6 {
		t.Fatalf("noop errors %+v", e)
	}
	want := map[string]int{"unfinished": 1, "arithmetic": 2, "other": 1}
	for _, k := range e.Kinds {
		if k.Count != want[k.Kind] || !near(k.SharePct.Value, 25*float64(want[k.Kind])) {
			t.Errorf("%s: %d (%v%%), want %d", k.Kind, k.Count, k.SharePct.Value, want[k.Kind])
		}
	}
	if s.Models[0].Variant("names").Errors != nil || s.Models[0].Variant("base").Errors != nil {
		t.Error("an error anatomy without kinds recorded, or without wrong answers")
	}
	if md := report.Narrative(s); !strings.Contains(md, "### Error anatomy") || !strings.Contains(md, "| noop | 4 | 1 (25%) | 0 (0%) | 2 (50%) |") {
		t.Errorf("narrative:\n%s", md)
	}
}

// TestPairedDropEqualTemplateWeights: the paired drop is the mean over
// templates of each template's mean paired difference, so a template's
// weight does not depend on its number of distinct pairs. By hand:
//
//	template  pairs (base, noop)             differences   mean
//	A         (1,0)                           1             1
//	B         (1,1) (1,1) (0,0) (1,0)          0 0 0 1       1/4
//	C         (0,0) (1,1)                      0 0           0
//
// equal weights: (1 + 1/4 + 0)/3 = 5/12 = 41.667 pp (pooled over pairs it
// would be 2/7 = 28.571 pp); CR1 SE = s/√3 with s the standard deviation
// of {1, 1/4, 0}: s² = ((7/12)² + (1/6)² + (5/12)²)/2 = 0.27083333, SE =
// 30.046261 pp; cluster-t on 2 df: ± 4.302653·SE; the sign-flip test on
// the template means {1, 1/4, 0}: |Σ s·d| ≥ 5/4 for 4 of the 8 sign vectors
// (the 2 sign choices of C's 0 times {+,+} and {−,−} for A and B), p = 0.5.
func TestPairedDropEqualTemplateWeights(t *testing.T) {
	type pr struct{ b, v bool }
	data := map[string][]pr{
		"A": {{true, false}},
		"B": {{true, true}, {true, true}, {false, false}, {true, false}},
		"C": {{false, false}, {true, true}},
	}
	var ts []results.Trial
	for _, tmpl := range []string{"A", "B", "C"} {
		for i, p := range data[tmpl] {
			ts = append(ts, tr(tmpl, "base", i, p.b), tr(tmpl, "noop", i, p.v))
		}
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 100, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	pd := s.Models[0].Variants[1].Paired
	e := pd.PairedDropPP
	if !near(e.Value, 500.0/12) {
		t.Errorf("paired drop %v, want 41.666667 (equal template weights), not the pooled 28.571429", e.Value)
	}
	se := 100 * math.Sqrt(0.2708333333333333/3)
	if e.SE == nil || !near(*e.SE, se) {
		t.Errorf("SE %v, want %v", e.SE, se)
	}
	half := stats.TQuantile(0.975, 2) * se
	if e.ClusterT == nil || !near(e.ClusterT.Lo, max(-100, e.Value-half)) || !near(e.ClusterT.Hi, min(100, e.Value+half)) {
		t.Errorf("cluster-t %+v, want %v ± %v", e.ClusterT, e.Value, half)
	}
	if pd.Test == nil || pd.Test.P != 0.5 {
		t.Errorf("sign-flip test %+v, want p = 0.5", pd.Test)
	}
	if pd.IntervalCoverage != summary.CoverageApproximate {
		t.Errorf("interval coverage %q, want approximate (MOVER-Wilson, 3 templates, 1.7 pairs each)", pd.IntervalCoverage)
	}
	if e.MOVERWilson == nil || e.CI != e.MOVERWilson || !(e.MOVERWilson.Lo < e.Value && e.Value < e.MOVERWilson.Hi) {
		t.Errorf("MOVER-Wilson %+v is not reported around the equal-weight drop (CI %+v)", e.MOVERWilson, e.CI)
	}
	if pw := pd.Power; pw == nil || !near(pw.PairsPerTemplate, 3/(1+0.25+0.5)) {
		t.Errorf("pairs per template %+v, want the harmonic mean 12/7", pw)
	}
}

// TestModelDropDifferenceEqualWeights: the difference between two models'
// paired drops weighs templates equally, as each paired drop does. Model M
// has per-pair differences A {1}, B {0, 0, 1}, C {0, 0}; model N is right
// on both sides of every pair (differences 0). By hand: (1 + 1/3 + 0)/3 =
// 44.444 pp (pooled over the 6 pairs it would be 33.333 pp), equal to M's
// paired drop.
func TestModelDropDifferenceEqualWeights(t *testing.T) {
	type pr struct{ b, v bool }
	data := map[string][]pr{
		"A": {{true, false}},
		"B": {{true, true}, {true, true}, {true, false}},
		"C": {{false, false}, {true, true}},
	}
	var ts []results.Trial
	for _, tmpl := range []string{"A", "B", "C"} {
		for i, p := range data[tmpl] {
			ts = append(ts, tr(tmpl, "base", i, p.b), tr(tmpl, "noop", i, p.v))
			for _, x := range []results.Trial{tr(tmpl, "base", i, true), tr(tmpl, "noop", i, true)} {
				x.ModelPath, x.ModelName, x.ItemID = "n.gguf", "N", "n/"+x.ItemID
				ts = append(ts, x)
			}
		}
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.ModelPairs) != 1 || len(s.ModelPairs[0].Drop) != 1 {
		t.Fatalf("model pairs %+v", s.ModelPairs)
	}
	d := s.ModelPairs[0].Drop[0].DiffPP
	if !near(d.Value, 400.0/9) || !near(s.Models[0].Variants[1].Paired.PairedDropPP.Value, 400.0/9) {
		t.Errorf("drop difference %v and M's paired drop %v, want 44.444444 (equal template weights)", d.Value, s.Models[0].Variants[1].Paired.PairedDropPP.Value)
	}
}

// TestGroupDropFollowsPairedDropRule: the paired drop within a difficulty
// group gets its reported interval by the rule of the variant's own paired
// drop (stats.PairedDropInterval on its MOVER-Wilson, sign-flip inversion
// and skew-corrected t intervals, the same FewTemplates threshold), never
// cluster-t: a group that holds every template gets the variant's interval
// and method (the same limits where the sign flips are exact, up to Monte
// Carlo error above stats.ExactMaxClusters templates, as the groups draw
// from their own stream), and a group of half the templates its own
// interval by the same rule.
func TestGroupDropFollowsPairedDropRule(t *testing.T) {
	right := func(ti, inst int) bool { return (ti+inst)%3 != 0 }
	noop := func(ti, inst int) bool { return right(ti, inst) && inst != 1 }
	for _, c := range []struct {
		templates, few int
		whole, half    string // the method of the whole set's interval, of a half's
	}{
		{12, 6, summary.MethodSignFlipSkew, summary.MethodSignFlipSkew},
		{12, 8, summary.MethodSignFlipSkew, summary.MethodMOVERWilsonSignFlip},
		{12, 20, summary.MethodMOVERWilsonSignFlip, summary.MethodMOVERWilsonSignFlip},
		{24, 20, summary.MethodSignFlipSkew, summary.MethodMOVERWilsonSignFlip},
	} {
		ts := promptTrials(c.templates, 3, right, noop)
		for i := range ts {
			var ti int
			fmt.Sscanf(ts[i].TemplateID, "t%d", &ti)
			ts[i].Steps = 2 + ti%2 // two steps groups of half the templates each; one relation group of all
		}
		s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 50, Seed: 2, FewTemplates: c.few})
		if err != nil {
			t.Fatal(err)
		}
		want := s.Models[0].Variants[1].Paired.PairedDropPP
		if want.CI == nil || want.CI.Method != c.whole {
			t.Fatalf("%d templates, few %d: variant's drop interval %+v, want method %q", c.templates, c.few, want.CI, c.whole)
		}
		groups := 0
		for _, g := range s.Models[0].Difficulty {
			if g.Variant != "noop" || g.Axis == "level" {
				continue
			}
			groups++
			e := g.PairedDropPP
			name := fmt.Sprintf("%d templates, few %d, %s %s (%d templates)", c.templates, c.few, g.Axis, g.Group, g.Templates)
			if e == nil || e.CI == nil || e.SE == nil || e.SignFlip == nil || e.SkewT == nil {
				t.Errorf("%s: drop %+v without the intervals of the paired-drop rule", name, e)
				continue
			}
			l, _ := stats.PairedDropInterval(e.Clusters, c.few, *e.SE,
				stats.Limits{Lo: e.MOVERWilson.Lo, Hi: e.MOVERWilson.Hi, OK: true},
				stats.Limits{Lo: e.SignFlip.Lo, Hi: e.SignFlip.Hi, OK: true, LoOpen: e.SignFlip.LoOpen, HiOpen: e.SignFlip.HiOpen},
				stats.Limits{Lo: e.SkewT.Lo, Hi: e.SkewT.Hi, OK: true})
			if g.Test == nil || g.Test.Templates != e.Clusters {
				t.Errorf("%s: group test %+v", name, g.Test)
			} else if e.Clusters >= c.few && e.CI.Excludes0() != (g.Test.P <= 0.05) {
				t.Errorf("%s: interval %+v excludes 0: %v, but the group's test p %v", name, e.CI, e.CI.Excludes0(), g.Test.P)
			}
			if e.CI.Lo != l.Lo || e.CI.Hi != l.Hi || e.CI.LoOpen != l.LoOpen || e.CI.HiOpen != l.HiOpen {
				t.Errorf("%s: interval %+v, the paired-drop rule gives [%v, %v]", name, e.CI, l.Lo, l.Hi)
			}
			whole := g.Axis == "relation"
			switch {
			case whole && e.CI.Method != c.whole, !whole && e.CI.Method != c.half:
				t.Errorf("%s: method %q", name, e.CI.Method)
			case whole && c.templates <= stats.ExactMaxClusters && (*e.CI != *want.CI || g.Test.P != s.Models[0].Variants[1].Paired.Test.P):
				// the same sign vectors and the variant's tie-breaking
				// uniform: the same interval and p
				t.Errorf("%s: interval %+v p %v, the variant's %+v p %v", name, e.CI, g.Test.P, want.CI, s.Models[0].Variants[1].Paired.Test.P)
			case whole && (math.Abs(e.CI.Lo-want.CI.Lo) > 1 || math.Abs(e.CI.Hi-want.CI.Hi) > 1):
				t.Errorf("%s: interval %+v, the variant's %+v (Monte Carlo)", name, e.CI, want.CI)
			}
		}
		if groups != 3 {
			t.Errorf("%d templates: %d groups, want 3", c.templates, groups)
		}
	}
}

// TestSummarizeRowOrder: the rows of a run (two models, two conditions,
// entropies and effort) in another order, each model's first row still
// first among the models, give the same summary to the last bit: sums and
// Monte Carlo draws follow the canonical order, not the rows'. Before,
// shuffled rows changed the last digits of the effort means.
func TestSummarizeRowOrder(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "report", "testdata", "runs", "arith", "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, err := results.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	p := summary.Params{BootstrapResamples: 200, Seed: 3}
	want, err := summary.Summarize(in, p)
	if err != nil {
		t.Fatal(err)
	}
	rank := map[string]int{}
	for _, x := range in {
		k := x.ModelPath + "#" + x.Condition
		if _, ok := rank[k]; !ok {
			rank[k] = len(rank)
		}
	}
	shuffled := slices.Clone(in)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	slices.SortStableFunc(shuffled, func(a, b results.Trial) int {
		return rank[a.ModelPath+"#"+a.Condition] - rank[b.ModelPath+"#"+b.Condition]
	})
	got, err := summary.Summarize(shuffled, p)
	if err != nil {
		t.Fatal(err)
	}
	jw, _ := json.Marshal(want)
	jg, _ := json.Marshal(got)
	if len(rank) < 2 || string(jw) != string(jg) {
		t.Fatalf("%d models: the summary of the shuffled rows differs", len(rank))
	}
}
