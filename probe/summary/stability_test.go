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

// stabilityTrials is one model over templates × instances of base and
// noop (which keeps the answer, 5): every base answer is 5 and right; the
// noop answer is 7 (changed, wrong) on the first changed templates' pairs,
// else 5.
func stabilityTrials(templates, instances, changed int) []results.Trial {
	var ts []results.Trial
	for ti := range templates {
		tpl := fmt.Sprintf("t%02d", ti)
		for inst := range instances {
			b, v := tr(tpl, "base", inst, true), tr(tpl, "noop", inst, true)
			b.Question, v.Question = fmt.Sprintf("q %d %d", ti, inst), fmt.Sprintf("q %d %d noop", ti, inst)
			b.Expected, v.Expected, b.Extracted, v.Extracted = "5", "5", "5", "5"
			if ti < changed {
				v.Extracted, v.Correct = "7", false
			}
			ts = append(ts, b, v)
		}
	}
	return ts
}

// TestStabilityVerdict: answers unstable when the changed share's interval
// lies above the margin, stable when below, not assessed under sampling,
// and the headline leads with it.
func TestStabilityVerdict(t *testing.T) {
	for _, c := range []struct {
		name                         string
		templates, instances, change int
		temperature                  float64
		want, head                   string
	}{
		{"most changed", 20, 1, 15, 0, summary.StabilityUnstable, "answers unstable under noop; "},
		{"none changed", 130, 2, 0, 0, summary.StabilityStable, "answers stable under noop; "},
		// With no change the interval counts each template as one unit
		// (Clopper–Pearson on 40: up to 8.8%), however many pairs each holds.
		{"none changed, 40 templates", 40, 5, 0, 0, summary.StabilityInconclusive, ""},
		{"few pairs, none changed", 10, 1, 0, 0, summary.StabilityInconclusive, "drop "},
		{"sampled", 20, 1, 15, 0.7, summary.StabilityNotAssessed, ""},
	} {
		s, err := summary.Summarize(stabilityTrials(c.templates, c.instances, c.change), summary.Params{BootstrapResamples: 100, Temperature: c.temperature})
		if err != nil {
			t.Fatal(err)
		}
		m := s.Models[0]
		sv := m.Stability
		if sv == nil || sv.Verdict != c.want || sv.Variant != "noop" || sv.Among != 1 || sv.MarginPct != summary.UnstableAnswerPct || sv.CI == nil {
			t.Fatalf("%s: %+v", c.name, sv)
		}
		if sv.Pairs != c.templates*c.instances || !near(sv.ChangedPct, 100*float64(c.change)/float64(c.templates)) {
			t.Errorf("%s: pairs %d, changed %v", c.name, sv.Pairs, sv.ChangedPct)
		}
		if c.head != "" && (len(m.Headline) < len(c.head) || m.Headline[:len(c.head)] != c.head) {
			t.Errorf("%s: headline %q, want it to start %q", c.name, m.Headline, c.head)
		}
		if c.want == summary.StabilityNotAssessed && m.Headline != m.Verdict && m.Headline != "drop "+m.Verdict {
			t.Errorf("%s: headline %q claims stability", c.name, m.Headline)
		}
	}
}

// TestStabilityIntervalBonferroni: with two answer-keeping variants the
// stability interval is at 1 − α/2, wider than the reported 95% one.
func TestStabilityIntervalBonferroni(t *testing.T) {
	ts := stabilityTrials(20, 1, 12)
	for _, x := range stabilityTrials(20, 1, 4) {
		if x.Variant == "noop" {
			x.Variant, x.Question = "names", x.Question+" names"
			ts = append(ts, x)
		}
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 100})
	if err != nil {
		t.Fatal(err)
	}
	m := s.Models[0]
	sv := m.Stability
	if sv == nil || sv.Among != 2 || sv.Variant != "noop" || !near(sv.ConfidencePct, 97.5) || sv.Verdict != summary.StabilityUnstable {
		t.Fatalf("%+v", sv)
	}
	e := m.Variant("noop").Paired.AnswerChanged.SharePct
	if !(sv.CI.Hi-sv.CI.Lo > e.ClusterT.Hi-e.ClusterT.Lo) {
		t.Errorf("Bonferroni interval %+v not wider than the 95%% cluster-t %+v", sv.CI, e.ClusterT)
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

// TestStabilityAcrossModels: with two models the stability intervals are
// at 1 − α/(k·M), M = 2.
func TestStabilityAcrossModels(t *testing.T) {
	ts := stabilityTrials(20, 1, 15)
	for _, x := range stabilityTrials(20, 1, 2) {
		x.ModelPath, x.ItemID = "n.gguf", "n/"+x.ItemID
		ts = append(ts, x)
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range s.Models {
		if sv := m.Stability; sv == nil || sv.Models != 2 || !near(sv.ConfidencePct, 97.5) {
			t.Errorf("%s: %+v", m.Label, sv)
		}
	}
	if s.Models[0].Stability.Verdict != summary.StabilityUnstable {
		t.Errorf("15 of 20 changed: %+v", s.Models[0].Stability)
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
	ts := stabilityTrials(130, 2, 0)
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
	if !strings.Contains(md, "| noop | n/a: no pair answered on both sides; 260 pairs without an answer on a side left out | n/a |") {
		t.Errorf("the stability table does not say why noop has no share:\n%s", md)
	}
	// 20 templates, 15 changed; on 5 more the base answer is cut and on 5
	// the noop answer: 20 pairs counted, 10 left out.
	ts = stabilityTrials(30, 1, 15)
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
