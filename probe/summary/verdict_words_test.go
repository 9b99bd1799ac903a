package summary_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/stats"
	"github.com/fragility/fragility/probe/summary"
)

// varyingTrials is one model over templates × 1 instance of base and noop,
// each instance its own prompt: base right where baseRight, noop right
// where noopRight, the noop trial cut by the budget where cut.
func varyingTrials(templates int, baseRight, noopRight, cut func(ti int) bool) []results.Trial {
	var ts []results.Trial
	for ti := range templates {
		tpl := fmt.Sprintf("t%02d", ti)
		b, v := tr(tpl, "base", 0, baseRight(ti)), tr(tpl, "noop", 0, noopRight(ti))
		b.Question, v.Question = "base "+tpl, "noop "+tpl
		b.StopReason, v.StopReason = "eos", "eos"
		if cut(ti) {
			v.StopReason = "max_tokens"
		}
		ts = append(ts, b, v)
	}
	return ts
}

func never(int) bool { return false }

// TestVerdictUninformative: a run whose minimum detectable drop is at or
// above the reference's accuracy (4 of 30 base problems solved) is
// "uninformative", not "inconclusive"; one that could detect a drop (30 of
// 40 solved) keeps "inconclusive" for a drop it cannot show.
func TestVerdictUninformative(t *testing.T) {
	s, err := summary.Summarize(varyingTrials(30, func(ti int) bool { return ti < 4 }, func(ti int) bool { return ti < 3 }, never), summary.Params{BootstrapResamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	v := s.Models[0].Variant("noop")
	base := s.Models[0].Variant("base")
	if v.Verdict != summary.VerdictUninformative || v.Paired.Power.MDEPP != nil && *v.Paired.Power.MDEPP < base.AccuracyPct.Value {
		t.Errorf("4 of 30 solved: verdict %q, MDE %v against %v%%", v.Verdict, v.Paired.Power.MDEPP, base.AccuracyPct.Value)
	}
	if h := s.Models[0].Headline; h != "drop uninformative" {
		t.Errorf("headline %q", h)
	}
	s, err = summary.Summarize(varyingTrials(40, func(ti int) bool { return ti < 30 }, func(ti int) bool { return ti < 29 || ti == 35 }, never), summary.Params{BootstrapResamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	v, base = s.Models[0].Variant("noop"), s.Models[0].Variant("base")
	if v.Verdict != summary.VerdictInconclusive || v.Paired.Power.MDEPP == nil || *v.Paired.Power.MDEPP >= base.AccuracyPct.Value {
		t.Errorf("30 of 40 solved: verdict %q, MDE %v against %v%%", v.Verdict, v.Paired.Power.MDEPP, base.AccuracyPct.Value)
	}
}

// TestVerdictBudgetConfounded: a drop carried by answers the budget cut on
// the variant side only (15 of 40 pairs) is not called shown; the cut
// shares, the pairs finished on both sides and their paired drop are
// reported. Without the cuts the same answers give a signal.
func TestVerdictBudgetConfounded(t *testing.T) {
	lost := func(ti int) bool { return ti < 15 }
	right := func(int) bool { return true }
	notLost := func(ti int) bool { return !lost(ti) }
	s, err := summary.Summarize(varyingTrials(40, right, notLost, never), summary.Params{BootstrapResamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Models[0].Variant("noop"); !stats.IsSignal(v.Verdict) || v.Paired.BudgetConfounded || v.Paired.FinishedDropPP != nil || v.Paired.FinishedPairs != 40 {
		t.Fatalf("uncut: verdict %q, confounded %v, finished %d", v.Verdict, v.Paired.BudgetConfounded, v.Paired.FinishedPairs)
	}
	s, err = summary.Summarize(varyingTrials(40, right, notLost, lost), summary.Params{BootstrapResamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	pr := s.Models[0].Variant("noop").Paired
	if v := s.Models[0].Variant("noop"); v.Verdict != summary.VerdictInconclusive || !pr.BudgetConfounded || !near(pr.CutVariantPct, 37.5) || pr.CutReferencePct != 0 {
		t.Errorf("cut: verdict %q, confounded %v, cut %v vs %v", v.Verdict, pr.BudgetConfounded, pr.CutVariantPct, pr.CutReferencePct)
	}
	if pr.FinishedPairs != 25 || pr.FinishedDropPP == nil || pr.FinishedDropPP.Value != 0 || pr.FinishedTest == nil {
		t.Errorf("finished on both sides: %d pairs, drop %+v", pr.FinishedPairs, pr.FinishedDropPP)
	}
}

// TestVerdictNonRandomized: from 20 templates the drop's test is
// randomized at ties; the verdict's conservative decision is reported
// beside it, its adjusted p at least the randomized one, never a stronger
// verdict, and not a signal when that p is above α.
func TestVerdictNonRandomized(t *testing.T) {
	for seed := range int64(8) {
		s, err := summary.Summarize(varyingTrials(20, func(int) bool { return true }, func(ti int) bool { return ti >= 5 }, never), summary.Params{BootstrapResamples: 50, Seed: seed + 1})
		if err != nil {
			t.Fatal(err)
		}
		m := s.Models[0]
		v := m.Variant("noop")
		if v.Paired.Test.TieU == 0 || m.VerdictPNonRandomized == nil || m.VerdictNonRandomized == "" {
			t.Fatalf("seed %d: tie_u %v, non-randomized %v %q", seed, v.Paired.Test.TieU, m.VerdictPNonRandomized, m.VerdictNonRandomized)
		}
		pn := *m.VerdictPNonRandomized
		// The conservative test is run again (u = 1) on its own Monte Carlo
		// stream: its p is the recorded p_non_randomized up to the draws' error.
		if pn < v.Paired.Test.PAdjusted || math.Abs(pn-v.Paired.Test.PNonRandomized) > 0.01 || stats.Severity(m.VerdictNonRandomized) > stats.Severity(m.Verdict) ||
			pn > s.Params.Alpha && stats.IsSignal(m.VerdictNonRandomized) {
			t.Errorf("seed %d: verdict %q (p %v), non-randomized %q (p %v)", seed, m.Verdict, v.Paired.Test.PAdjusted, m.VerdictNonRandomized, pn)
		}
	}
}

// TestVerdictPickedStrength: a model's verdict picked as the most severe of
// two variants reads its strength from the interval widened for the pick:
// never stronger than ClassifyDrop gives on that interval.
func TestVerdictPickedStrength(t *testing.T) {
	var ts []results.Trial
	for ti := range 24 {
		tpl := fmt.Sprintf("t%02d", ti)
		for inst := range 3 {
			for _, v := range []string{"base", "noop", "names"} {
				x := tr(tpl, v, inst, true)
				x.Question = fmt.Sprintf("%s %d %s", tpl, inst, v)
				x.StopReason = "eos"
				if v == "noop" && (ti < 9 && inst < 2 || ti < 4) {
					x.Correct = false
				}
				ts = append(ts, x)
			}
		}
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	m := s.Models[0]
	if m.VerdictPickedCI == nil || m.VerdictVariant != "noop" {
		t.Fatalf("verdict %q on %q, picked interval %+v", m.Verdict, m.VerdictVariant, m.VerdictPickedCI)
	}
	v := m.Variant("noop")
	picked := stats.ClassifyDrop(stats.Limits{Lo: m.VerdictPickedCI.Lo, Hi: m.VerdictPickedCI.Hi, OK: true}, v.Paired.Test.PAdjusted,
		stats.DropRule{Negligible: s.Params.NegligibleDropPP, Strong: s.Params.StrongDropPP, Alpha: s.Params.Alpha})
	if stats.IsSignal(v.Verdict) && stats.Severity(m.Verdict) > stats.Severity(picked) {
		t.Errorf("model verdict %q stronger than the picked interval %+v gives (%q); the variant's own: %q", m.Verdict, m.VerdictPickedCI, picked, v.Verdict)
	}
	if m.Verdict != v.Verdict && m.VerdictUnpicked != v.Verdict {
		t.Errorf("verdict %q changed from %q without saying so (%q)", m.Verdict, v.Verdict, m.VerdictUnpicked)
	}
}

// TestPairsWithSoleBase: a run that asks each original once (instance 0,
// as a run on released instances does) pairs every symbolic instance with
// it; a template with a base trial at each instance pairs by instance.
func TestPairsWithSoleBase(t *testing.T) {
	var ts []results.Trial
	for ti := range 4 {
		tpl := fmt.Sprintf("t%02d", ti)
		b := tr(tpl, "base", 0, true)
		b.Question = "original " + tpl
		ts = append(ts, b)
		for inst := range 3 {
			v := tr(tpl, "symbolic", inst, inst != 2)
			v.Question = fmt.Sprintf("%s %d", tpl, inst)
			ts = append(ts, v)
		}
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 20})
	if err != nil {
		t.Fatal(err)
	}
	pr := s.Models[0].Variant("symbolic").Paired
	if pr.Pairs != 12 || pr.Unmatched != 0 || !near(pr.BaseOnly.Count, 4) {
		t.Errorf("pairs %d, unmatched %d, base right → variant wrong %v; want 12, 0, 4", pr.Pairs, pr.Unmatched, pr.BaseOnly.Count)
	}
}
