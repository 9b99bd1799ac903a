package summary_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/summary"
)

// strataTrials: 10 templates × 3 instances of base and noop. Instance 0 is
// right in both; instance 1 right in base and wrong in noop; instance 2
// wrong in both. A right answer's answer-token entropy is 0.5 + 0.02·t, a
// wrong one's 1.5 + 0.02·t, in base and noop alike, plus 0.1 in noop on the
// both-wrong pairs: the overall shift is the drop measured again (+0.367),
// the both-right shift 0, the both-wrong shift +0.1.
func strataTrials() []results.Trial {
	var ts []results.Trial
	for ti := range 10 {
		tpl := fmt.Sprintf("t%02d", ti)
		for inst := range 3 {
			b, v := tr(tpl, "base", inst, inst != 2), tr(tpl, "noop", inst, inst == 0)
			for _, x := range []*results.Trial{&b, &v} {
				x.AnswerEntropyMean = 0.5 + 0.02*float64(ti)
				if !x.Correct {
					x.AnswerEntropyMean++
				}
				x.EntropyMean = 1
			}
			if inst == 2 {
				v.AnswerEntropyMean += 0.1 + 0.001*float64(ti)
			}
			ts = append(ts, b, v)
		}
	}
	return ts
}

// TestShiftStrata: the shift within pairs both right and both wrong, and
// the shifts' Holm families.
func TestShiftStrata(t *testing.T) {
	s, err := summary.Summarize(strataTrials(), summary.Params{BootstrapResamples: 200})
	if err != nil {
		t.Fatal(err)
	}
	sh := s.Models[0].Variant("noop").AnswerEntropyShift
	if sh.Pairs != 30 || !near(sh.Shift.Value, (1+0.1+0.0045)/3) || !sh.Meaningful {
		t.Fatalf("overall: %+v %+v", sh, sh.Shift)
	}
	r, w := sh.BothRight, sh.BothWrong
	if r == nil || w == nil || r.Pairs != 10 || w.Pairs != 10 {
		t.Fatalf("strata %+v %+v", r, w)
	}
	if r.Shift.Value != 0 || r.Meaningful || !near(r.BaseMean, r.VariantMean) {
		t.Errorf("both right: %+v %+v", r, r.Shift)
	}
	if !near(w.Shift.Value, 0.1045) || !w.Shift.CI.Excludes0() || w.Test.P > 0.01 {
		t.Errorf("both wrong: %+v %+v %+v", w, w.Shift, w.Test)
	}
	// Families: the main shifts over 3 measures (the DDC margin is
	// undefined here, so 2 tests); the strata over 2 kinds × 2 measures.
	if sh.Test.Family != 2 || sh.Test.Adjustment != "holm across measures and variants" || w.Test.Family != 4 {
		t.Errorf("families: %+v %+v", sh.Test, w.Test)
	}
	if w.Test.PAdjusted < w.Test.P {
		t.Errorf("adjusted p %v below p %v", w.Test.PAdjusted, w.Test.P)
	}
}

// TestShiftMargin: the margin is 0.2 between-template SDs of the reference
// side's template means, with the fixed threshold as its floor.
func TestShiftMargin(t *testing.T) {
	s, err := summary.Summarize(strataTrials(), summary.Params{BootstrapResamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	sh := s.Models[0].Variant("noop").AnswerEntropyShift
	// Base template means: (0.5 + 0.5 + 1.5)/3 + 0.02·t, SD 0.02·SD(0..9).
	var m, ss float64
	for i := range 10 {
		m += float64(i) / 10
	}
	for i := range 10 {
		ss += (float64(i) - m) * (float64(i) - m)
	}
	sd := 0.02 * math.Sqrt(ss/9)
	if !near(sh.ReferenceSD, sd) || sh.ThresholdFloor != summary.EntropyShiftThresholdBits || !near(sh.Threshold, math.Max(0.02, 0.2*sd)) {
		t.Errorf("margin %v (floor %v, SD %v), want SD %v", sh.Threshold, sh.ThresholdFloor, sh.ReferenceSD, sd)
	}
	// A wider spread between templates raises the margin above the floor.
	ts := strataTrials()
	for i := range ts {
		var ti int
		fmt.Sscanf(ts[i].TemplateID, "t%d", &ti)
		ts[i].AnswerEntropyMean += float64(ti)
	}
	s, err = summary.Summarize(ts, summary.Params{BootstrapResamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	sh = s.Models[0].Variant("noop").AnswerEntropyShift
	if !(sh.ReferenceSD > 3) || !near(sh.Threshold, 0.2*sh.ReferenceSD) || sh.Meaningful {
		t.Errorf("spread templates: margin %v, SD %v, meaningful %v", sh.Threshold, sh.ReferenceSD, sh.Meaningful)
	}
}
