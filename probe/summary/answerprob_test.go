package summary_test

import (
	"math"
	"testing"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/summary"
)

// TestAnswerLogProbShiftHandCase checks the paired answer_logprob shift on
// a hand-computed case: per-pair differences (variant − base) A: −1, −3;
// B: 0.5; C: −2, −2 (a pair whose variant trial was not scored is left
// out), so the mean over pairs is −7.5/5 = −1.5 nats, the template means
// −2, 0.5, −2, and the variance components and MDE those of
// stats.VarianceComponents and stats.MDE. A run with no scored trial has
// no shift at all (old runs).
func TestAnswerLogProbShiftHandCase(t *testing.T) {
	score := func(x results.Trial, lp float64) results.Trial {
		x.AnswerScored, x.AnswerLogProb, x.AnswerLogProbTokens = true, lp, 2
		return x
	}
	ts := []results.Trial{
		score(tr("A", "base", 0, false), -1), score(tr("A", "base", 1, false), -2),
		score(tr("B", "base", 0, true), -0.5),
		score(tr("C", "base", 0, false), -4), score(tr("C", "base", 1, false), -1), tr("C", "base", 2, false),
		score(tr("A", "noop", 0, false), -2), score(tr("A", "noop", 1, false), -5),
		score(tr("B", "noop", 0, true), 0),
		score(tr("C", "noop", 0, false), -6), score(tr("C", "noop", 1, false), -3), score(tr("C", "noop", 2, false), -9),
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 200, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	noop := s.Models[0].Variants[1]
	sh := noop.AnswerLogProbShift
	if sh == nil || sh.Pairs != 5 || sh.Shift == nil || !near(sh.Shift.Value, -1.5) {
		t.Fatalf("shift %+v", sh)
	}
	if !near(sh.BaseMean, -8.5/5) || !near(sh.VariantMean, -16.0/5) {
		t.Errorf("means %v %v", sh.BaseMean, sh.VariantMean)
	}
	want := map[string]float64{"A": -2, "B": 0.5, "C": -2}
	if len(sh.PerTemplate) != 3 {
		t.Fatalf("per template %+v", sh.PerTemplate)
	}
	for _, p := range sh.PerTemplate {
		if !near(p.Shift, want[p.Template]) {
			t.Errorf("template %s: %v, want %v", p.Template, p.Shift, want[p.Template])
		}
	}
	// Three templates: the estimate, its SE and its test, but no interval
	// (fewer than Params.FewTemplates), said so; and so nothing shown.
	if sh.Test == nil || sh.Test.P <= 0 || sh.Test.P > 1 || sh.Shift.CI != nil || sh.Shift.NoCI != "fewer than 20 templates" || sh.Shift.SE == nil || sh.Shown {
		t.Errorf("test %+v, CI %+v, no CI %q, shown %v", sh.Test, sh.Shift.CI, sh.Shift.NoCI, sh.Shown)
	}
	// With FewTemplates at 3 the cluster-t interval is reported.
	s3, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 200, Seed: 7, FewTemplates: 3})
	if err != nil {
		t.Fatal(err)
	}
	if e := s3.Models[0].Variants[1].AnswerLogProbShift.Shift; e.CI == nil || e.CI != e.ClusterT || e.NoCI != "" {
		t.Errorf("at FewTemplates 3: CI %+v, cluster-t %+v, no CI %q", e.CI, e.ClusterT, e.NoCI)
	}
	// Within: A's two pairs differ by 2 (s² = 2), C's are equal (s² = 0):
	// σ²_w = (2 + 0)/(5 − 3) = 1.
	if sh.Templates != 3 || !near(sh.Within, 1) || sh.MDENats == nil || *sh.MDENats <= 0 || math.IsInf(*sh.MDENats, 0) {
		t.Errorf("components: templates %d within %v between %v MDE %v", sh.Templates, sh.Within, sh.Between, sh.MDENats)
	}
	if s.Models[0].Variants[0].AnswerLogProbShift != nil {
		t.Error("base has a shift")
	}
	old, err := summary.Summarize(handCase(), summary.Params{BootstrapResamples: 200, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if old.Models[0].Variants[1].AnswerLogProbShift != nil || summary.AnswerScored(handCase()) {
		t.Error("a run without answer_logprob has a shift")
	}
}
