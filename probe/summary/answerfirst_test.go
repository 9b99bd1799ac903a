package summary_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/summary"
)

// answerSides sets the answer-scoring columns of a trial: the right answer
// after the model's reasoning (after, over afterTok tokens, stop reason
// stop) and the answer first (first over firstTok tokens; 0 tokens: not
// scored so).
func answerSides(x results.Trial, after float64, afterTok int, stop string, first float64, firstTok int) results.Trial {
	x.AnswerScored, x.AnswerLogProb, x.AnswerLogProbTokens, x.StopReason = true, after, afterTok, stop
	x.AnswerFirstLogProb, x.AnswerFirstLogProbTokens = first, firstTok
	return x
}

// TestAnswerFirstAndCleanShiftsHandCase checks, on a hand-computed case,
// the paired shift of the answer first (answer_first_logprob) and the
// shifts of the answer after the model's reasoning over the pairs finished
// on both sides and per forced token:
//
//	pair  after (tokens, stop) base | noop      first (tokens) base | noop
//	A0    −1 (1, eos) | −4 (2, eos)             −2 (2) | −3 (1)
//	A1    −2 (2, eos) | −6 (3, max_tokens)      −1 (1) | −1 (1)
//	B0    −0.5 (1, eos) | 0 (1, eos)            −4 (2) | −3 (2)
//	C0    −4 (2, max_tokens) | −6 (2, eos)      −0.5 (1) | −1.5 (1)
//	C1    −1 (1, eos) | −3 (1, eos)             −1 (1) | not scored
//
// After, all pairs: −3, −4, 0.5, −2, −2: mean −2.1. Finished on both
// sides (A0, B0, C1): −3, 0.5, −2: mean −1.5. Per token: −1, −1, 0.5, −1,
// −2: mean −0.9. First (C1 left out): −1, 0, 1, −1: mean −0.25 (means
// −1.875 and −2.125), per template A −0.5, B 1, C −1; per token −2, 0,
// 0.5, −1: mean −0.625. A run without the answer first (answer-score/1)
// has no such shift, and the shift after the reasoning is the same bits.
func TestAnswerFirstAndCleanShiftsHandCase(t *testing.T) {
	ts := []results.Trial{
		answerSides(tr("A", "base", 0, true), -1, 1, "eos", -2, 2), answerSides(tr("A", "noop", 0, false), -4, 2, "eos", -3, 1),
		answerSides(tr("A", "base", 1, true), -2, 2, "eos", -1, 1), answerSides(tr("A", "noop", 1, false), -6, 3, "max_tokens", -1, 1),
		answerSides(tr("B", "base", 0, true), -0.5, 1, "eos", -4, 2), answerSides(tr("B", "noop", 0, true), 0, 1, "eos", -3, 2),
		answerSides(tr("C", "base", 0, false), -4, 2, "max_tokens", -0.5, 1), answerSides(tr("C", "noop", 0, false), -6, 2, "eos", -1.5, 1),
		answerSides(tr("C", "base", 1, true), -1, 1, "eos", -1, 1), answerSides(tr("C", "noop", 1, false), -3, 1, "eos", 0, 0),
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 200, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	noop := s.Models[0].Variants[1]
	after, first := noop.AnswerLogProbShift, noop.AnswerFirstLogProbShift
	if after == nil || after.Pairs != 5 || !near(after.Shift.Value, -2.1) {
		t.Fatalf("after %+v", after)
	}
	check := func(name string, sh *summary.AnswerLogProbShift, pairs int, shift float64) {
		t.Helper()
		if sh == nil || sh.Shift == nil || sh.Test == nil {
			t.Fatalf("%s: %+v", name, sh)
		}
		if sh.Pairs != pairs || !near(sh.Shift.Value, shift) || !near(sh.VariantMean-sh.BaseMean, shift) {
			t.Errorf("%s: %d pairs, shift %v (means %v → %v); want %d pairs, %v", name, sh.Pairs, sh.Shift.Value, sh.BaseMean, sh.VariantMean, pairs, shift)
		}
		if sh.Test.P <= 0 || sh.Test.P > 1 || sh.Test.Family != 1 || sh.Shift.CI != nil || sh.Shift.NoCI == "" || sh.Shown {
			t.Errorf("%s: test %+v, CI %+v (%q), shown %v", name, sh.Test, sh.Shift.CI, sh.Shift.NoCI, sh.Shown)
		}
		if sh.MDENats == nil || *sh.MDENats <= 0 || sh.Templates != 3 {
			t.Errorf("%s: MDE %v over %d templates", name, sh.MDENats, sh.Templates)
		}
	}
	check("after, finished pairs", after.FinishedPairs, 3, -1.5)
	check("after, per token", after.PerToken, 5, -0.9)
	check("first", first, 4, -0.25)
	check("first, per token", first.PerToken, 4, -0.625)
	if !near(first.BaseMean, -1.875) || !near(first.VariantMean, -2.125) {
		t.Errorf("first: means %v %v", first.BaseMean, first.VariantMean)
	}
	want := map[string]float64{"A": -0.5, "B": 1, "C": -1}
	for _, p := range first.PerTemplate {
		if !near(p.Shift, want[p.Template]) {
			t.Errorf("first, template %s: %v, want %v", p.Template, p.Shift, want[p.Template])
		}
	}
	if len(first.PerTemplate) != 3 || first.FinishedPairs != nil || after.FinishedPairs.FinishedPairs != nil || after.PerToken.PerToken != nil {
		t.Errorf("first: %d templates, finished pairs %+v; nested shifts of nested shifts", len(first.PerTemplate), first.FinishedPairs)
	}
	if s.Models[0].Variants[0].AnswerFirstLogProbShift != nil {
		t.Error("base has an answer-first shift")
	}

	// A run recorded under answer-score/1: no answer first, and the rest
	// as before.
	old := make([]results.Trial, len(ts))
	for i, x := range ts {
		x.AnswerFirstLogProb, x.AnswerFirstLogProbTokens = 0, 0
		old[i] = x
	}
	so, err := summary.Summarize(old, summary.Params{BootstrapResamples: 200, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	o := so.Models[0].Variants[1]
	if o.AnswerFirstLogProbShift != nil || o.AnswerLogProbShift == nil {
		t.Fatalf("answer-score/1 run: first %+v, after %+v", o.AnswerFirstLogProbShift, o.AnswerLogProbShift)
	}
	if a, b := o.AnswerLogProbShift, after; math.Float64bits(a.Shift.Value) != math.Float64bits(b.Shift.Value) || a.Test.P != b.Test.P || *a.Shift.SE != *b.Shift.SE {
		t.Errorf("after: %+v without the answer first, %+v with it", a.Shift, b.Shift)
	}
}

// TestAnswerFirstShiftsOwnStream checks that the shifts added beside the
// first answer log-probability shift draw their Monte Carlo sign flips from
// their own stream: with more templates than the exact test enumerates,
// every other test of the summary (the paired drop's, the first shift's)
// is the same with the answer-first columns as without them, and the
// answer-first shift's 30 templates give it an interval.
func TestAnswerFirstShiftsOwnStream(t *testing.T) {
	var with, without []results.Trial
	for g := range 30 {
		tmpl := fmt.Sprintf("T%02d", g)
		for i := range 2 {
			u := float64((g*7+i*3)%11) / 11
			b := answerSides(tr(tmpl, "base", i, (g+i)%3 != 0), -u, 2, "eos", -1-u, 2)
			v := answerSides(tr(tmpl, "noop", i, (g+i)%4 != 0), -2*u, 2, "eos", -1.5-u*u, 2)
			with = append(with, b, v)
			b.AnswerFirstLogProb, b.AnswerFirstLogProbTokens, v.AnswerFirstLogProb, v.AnswerFirstLogProbTokens = 0, 0, 0, 0
			without = append(without, b, v)
		}
	}
	p := summary.Params{BootstrapResamples: 200, Seed: 11}
	a, err := summary.Summarize(with, p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := summary.Summarize(without, p)
	if err != nil {
		t.Fatal(err)
	}
	va, vb := a.Models[0].Variants[1], b.Models[0].Variants[1]
	if va.AnswerLogProbShift.Test.Method != "sign-flip, Monte Carlo" {
		t.Fatalf("test %q: not the Monte Carlo test this checks", va.AnswerLogProbShift.Test.Method)
	}
	if va.AnswerLogProbShift.Test.P != vb.AnswerLogProbShift.Test.P || va.Paired.Test.P != vb.Paired.Test.P {
		t.Errorf("p with the answer first %v, %v; without %v, %v", va.AnswerLogProbShift.Test.P, va.Paired.Test.P, vb.AnswerLogProbShift.Test.P, vb.Paired.Test.P)
	}
	f := va.AnswerFirstLogProbShift
	if f == nil || f.Pairs != 60 || f.Shift.CI == nil || f.Test == nil {
		t.Fatalf("first %+v", f)
	}
	if f.Shown != (f.Shift.CI.Excludes0() && f.Test.PAdjusted <= 0.05) {
		t.Errorf("first: shown %v, CI %+v, p %v", f.Shown, f.Shift.CI, f.Test.PAdjusted)
	}
}
