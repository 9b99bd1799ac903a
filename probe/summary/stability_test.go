package summary_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/report"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/summary"
)

// stabilityTrials is one model over templates × instances of base, noop
// (which keeps the answer, 5) and placebo (the base problem in other
// tokens): every base answer is 5 and right; the noop answer is 7 (changed,
// wrong) on the first changed templates' pairs, the placebo's on the first
// placebo templates' pairs, else 5.
func stabilityTrials(templates, instances, changed, placebo int) []results.Trial {
	var ts []results.Trial
	for ti := range templates {
		tpl := fmt.Sprintf("t%02d", ti)
		for inst := range instances {
			b, v, pl := tr(tpl, "base", inst, true), tr(tpl, "noop", inst, true), tr(tpl, "placebo", inst, true)
			b.Question, v.Question = fmt.Sprintf("q %d %d", ti, inst), fmt.Sprintf("q %d %d noop", ti, inst)
			pl.Question = b.Question
			for _, x := range []*results.Trial{&b, &v, &pl} {
				x.Expected, x.Extracted = "5", "5"
			}
			if ti < changed {
				v.Extracted, v.Correct = "7", false
			}
			if ti < placebo {
				pl.Extracted, pl.Correct = "7", false
			}
			ts = append(ts, b, v, pl)
		}
	}
	return ts
}

// withoutPlacebo returns ts less the placebo's trials.
func withoutPlacebo(ts []results.Trial) []results.Trial {
	var out []results.Trial
	for _, x := range ts {
		if x.Variant != "placebo" {
			out = append(out, x)
		}
	}
	return out
}

// TestStabilityVerdict: answers unstable when the noop loses solved
// problems beyond the placebo (the excess's interval above 0, its test at
// α), stable when the excess's interval lies below the margin, not when
// the placebo changes as many; not assessed without a placebo or under
// sampling; the headline leads with a verdict that says something.
func TestStabilityVerdict(t *testing.T) {
	for _, c := range []struct {
		name                                  string
		templates, instances, change, placebo int
		temperature                           float64
		noPlacebo                             bool
		want, head                            string
	}{
		{"most changed", 20, 1, 15, 0, 0, false, summary.StabilityUnstable, "answers unstable under noop; "},
		{"none changed", 130, 2, 0, 0, 0, false, summary.StabilityStable, "answers stable under noop; "},
		{"the placebo changes as many", 20, 1, 15, 15, 0, false, summary.StabilityInconclusive, "strong fragility signal"},
		{"few pairs, none changed", 6, 1, 0, 0, 0, false, summary.StabilityInconclusive, "drop "},
		{"no placebo", 20, 1, 15, 0, 0, true, summary.StabilityNotAssessed, "strong fragility signal"},
		{"sampled", 20, 1, 15, 0, 0.7, false, summary.StabilityNotAssessed, "strong fragility signal"},
	} {
		ts := stabilityTrials(c.templates, c.instances, c.change, c.placebo)
		if c.noPlacebo {
			ts = withoutPlacebo(ts)
		}
		s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 100, Temperature: c.temperature})
		if err != nil {
			t.Fatal(err)
		}
		m := s.Models[0]
		sv := m.Stability
		if sv == nil || sv.Verdict != c.want || sv.MarginPct != summary.UnstableAnswerPct {
			t.Fatalf("%s: %+v", c.name, sv)
		}
		if c.want != summary.StabilityNotAssessed {
			x := sv.Excess
			n := c.templates * c.instances
			if sv.Variant != "noop" || sv.Among != 1 || x == nil || x.Pairs != n || !near(x.VariantLost, float64(c.change*c.instances)) ||
				!near(x.PlaceboLost, float64(c.placebo*c.instances)) || !near(x.ExcessPP.Value, 100*float64(c.change-c.placebo)/float64(c.templates)) ||
				sv.LossPct == nil || !near(*sv.LossPct, 100*float64(c.change)/float64(c.templates)) || sv.LossPairs != n {
				t.Errorf("%s: %+v excess %+v", c.name, sv, x)
			}
		} else if sv.Reason == "" {
			t.Errorf("%s: not assessed without a reason", c.name)
		}
		if !strings.HasPrefix(m.Headline, c.head) {
			t.Errorf("%s: headline %q, want it to start %q", c.name, m.Headline, c.head)
		}
	}
}

// TestStabilityAmongSolved: the loss rate is read on solved problems only,
// the wrong answers' changes are reported apart (WrongChanged), and a
// variant whose changes all fall on wrong answers is not unstable although
// its pooled changed share is large.
func TestStabilityAmongSolved(t *testing.T) {
	ts := stabilityTrials(30, 1, 0, 0)
	for i := range ts {
		x := &ts[i]
		if x.TemplateID < "t20" { // 20 templates the model gets wrong: base 4, noop and placebo 6 or 4
			x.Extracted, x.Correct = "4", false
			if x.Variant != "base" {
				x.Extracted = map[bool]string{true: "6", false: "4"}[x.Variant == "noop" || x.TemplateID < "t10"]
			}
		}
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 100})
	if err != nil {
		t.Fatal(err)
	}
	m := s.Models[0]
	pr := m.Variant("noop").Paired
	if pr.AnswerChanged == nil || !near(pr.AnswerChanged.Count, 20) || pr.LossAmongSolved == nil || pr.LossAmongSolved.Pairs != 10 || pr.LossAmongSolved.Count != 0 ||
		pr.WrongChanged == nil || pr.WrongChanged.Pairs != 20 || !near(pr.WrongChanged.Count, 20) {
		t.Fatalf("changed %+v, among solved %+v, wrong %+v", pr.AnswerChanged, pr.LossAmongSolved, pr.WrongChanged)
	}
	if m.Stability == nil || m.Stability.Verdict == summary.StabilityUnstable || pr.Excess == nil || pr.Excess.Pairs != 10 {
		t.Errorf("wrong answers' changes alone: %+v", m.Stability)
	}
}

// TestStabilityHolm: with two answer-keeping variants each excess test is
// Holm-adjusted across the two, and the verdict names the one whose
// adjusted p is smallest.
func TestStabilityHolm(t *testing.T) {
	ts := stabilityTrials(20, 1, 12, 0)
	for _, x := range stabilityTrials(20, 1, 4, 0) {
		if x.Variant == "noop" {
			x.Variant, x.Question, x.ItemID = "names", x.Question+" names", x.ItemID+"n"
			ts = append(ts, x)
		}
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 100})
	if err != nil {
		t.Fatal(err)
	}
	m := s.Models[0]
	sv := m.Stability
	if sv == nil || sv.Among != 2 || sv.Variant != "noop" || sv.Verdict != summary.StabilityUnstable {
		t.Fatalf("%+v", sv)
	}
	for _, v := range []string{"noop", "names"} {
		x := m.Variant(v).Paired.Excess
		if x == nil || x.Test.Family != 2 || x.Test.PAdjusted < x.Test.P {
			t.Errorf("%s: excess test %+v", v, x.Test)
		}
	}
}

// TestSelectionAcrossModels: with three models each verdict test is
// Holm-adjusted across the models, the picked variant's interval is
// widened (1 − α/k), and the differences between models form one family.
func TestSelectionAcrossModels(t *testing.T) {
	var ts []results.Trial
	for mi, loss := range []int{0, 3, 9} {
		for ti := range 12 {
			tpl := fmt.Sprintf("t%02d", ti)
			for inst := range 3 {
				for _, v := range []string{"base", "noop", "names"} {
					x := tr(tpl, v, inst, true)
					x.ModelPath, x.ItemID = fmt.Sprintf("m%d.gguf", mi), fmt.Sprintf("m%d/%s/%s/%d", mi, tpl, v, inst)
					x.Question = fmt.Sprintf("%s %d %s", tpl, inst, v)
					if v == "noop" && ti < loss && inst <= ti%3 {
						x.Correct = false
					}
					ts = append(ts, x)
				}
			}
		}
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 100})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, mp := range s.ModelPairs {
		total += len(mp.Accuracy) + len(mp.Drop)
	}
	if len(s.ModelPairs) != 3 || s.ModelPairs[0].Family != total || s.ModelPairs[0].Drop[0].Test.Family != total {
		t.Fatalf("model pairs: %d, family %d of %d", len(s.ModelPairs), s.ModelPairs[0].Family, total)
	}
	for _, m := range s.Models[1:] {
		v := m.Variant(m.VerdictVariant)
		if m.VerdictPAcrossModels == nil || m.VerdictModels != 3 || *m.VerdictPAcrossModels < v.Paired.Test.PAdjusted {
			t.Errorf("%s: across models %v (%d) against %v", m.Label, m.VerdictPAcrossModels, m.VerdictModels, v.Paired.Test.PAdjusted)
		}
		ct := v.Paired.PairedDropPP.ClusterT
		if m.VerdictPickedCI == nil || m.VerdictPickedAmong != 2 || !(m.VerdictPickedCI.Hi-m.VerdictPickedCI.Lo > ct.Hi-ct.Lo) {
			t.Errorf("%s: picked interval %+v among %d, cluster-t %+v", m.Label, m.VerdictPickedCI, m.VerdictPickedAmong, ct)
		}
	}
	if m := s.Models[0]; m.VerdictPickedCI != nil {
		t.Errorf("a model whose drops do not vary got a picked interval %+v", m.VerdictPickedCI)
	}
	if math.IsNaN(*s.Models[2].VerdictPAcrossModels) {
		t.Error("NaN p")
	}
}

// TestStabilityLeavesOutUnanswered: pairs with no answer on a side (cut by
// the budget) are left out of answer stability, so a model that answers
// nothing is never called stable (a new user's run with --max-tokens 3
// printed "changed in 0 of 30 pairs"); the pairs answered on both sides
// keep their share.
func TestStabilityLeavesOutUnanswered(t *testing.T) {
	cut := func(x *results.Trial) {
		x.Extracted, x.Correct, x.Rule, x.StopReason = "", false, "none", "max_tokens"
	}
	// Every answer cut: no stability at all, whatever the templates.
	ts := withoutPlacebo(stabilityTrials(130, 2, 0, 0))
	for i := range ts {
		cut(&ts[i])
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	m := s.Models[0]
	if v := m.Variant("noop"); v.Paired.AnswerChanged != nil || v.Paired.AnswerLeftOut != 260 || m.Stability != nil {
		t.Errorf("every answer cut: answer changed %+v (%d left out), stability %+v", v.Paired.AnswerChanged, v.Paired.AnswerLeftOut, m.Stability)
	}
	md := report.Narrative(s)
	if !strings.Contains(md, "| noop | n/a | n/a | n/a | n/a: no pair answered on both sides; 260 pairs without an answer on a side left out | n/a |") {
		t.Errorf("the stability table does not say why noop has no share:\n%s", md)
	}
	// 20 templates, 15 changed; on 5 more the base answer is cut and on 5
	// the noop answer: 20 pairs counted, 10 left out.
	ts = withoutPlacebo(stabilityTrials(30, 1, 15, 0))
	for i := range ts {
		if tpl := ts[i].TemplateID; (tpl >= "t20" && tpl < "t25" && ts[i].Variant == "base") || (tpl >= "t25" && ts[i].Variant == "noop") {
			cut(&ts[i])
		}
	}
	if s, err = summary.Summarize(ts, summary.Params{BootstrapResamples: 50}); err != nil {
		t.Fatal(err)
	}
	pr := s.Models[0].Variant("noop").Paired
	r := pr.AnswerChanged
	if r == nil || r.Pairs != 20 || pr.AnswerLeftOut != 10 || !near(r.Count, 15) || !near(r.SharePct.Value, 75) {
		t.Errorf("answer changed %+v, want 15 of 20 with 10 left out", r)
	}
}
