package summary

import "testing"

// TestMoreSevereTies: the verdict variant among equally severe verdicts is
// the larger paired drop, then the smaller unadjusted p; a full tie keeps
// the earlier variant unless the later one is paired with it (drawn on its
// instance); a more severe verdict wins whatever its drop.
func TestMoreSevereTies(t *testing.T) {
	v := func(name, verdict string, drop, p float64) VariantSummary {
		return VariantSummary{Variant: name, Verdict: verdict, Paired: &Paired{PairedDropPP: &Estimate{Value: drop}, Test: &Test{P: p}}}
	}
	cur := v("symbolic", VerdictInconclusive, 300.0/68, 0.548)
	m := &ModelSummary{Verdict: cur.Verdict, VerdictVariant: cur.Variant, Variants: []VariantSummary{cur}}
	for _, c := range []struct {
		vs   VariantSummary
		want bool
	}{
		{v("noop-seeming", VerdictInconclusive, 300.0/68, 0.503), true},                      // equal drop, smaller p
		{v("noop-seeming", VerdictInconclusive, 300.0/68, 0.6), false},                       // equal drop, larger p
		{v("noop-seeming", VerdictInconclusive, 300.0/68, 0.548), false},                     // full tie: the earlier stays
		{v("noop-seeming", VerdictInconclusive, 5, 0.9), true},                               // larger drop
		{v("noop-seeming", VerdictInconclusive, 4, 0.01), false},                             // smaller drop
		{v("noop-seeming", VerdictStrong, 1, 0.9), true},                                     // more severe
		{drawnOn(v("noop-seeming", VerdictInconclusive, 300.0/68, 0.548), "symbolic"), true}, // full tie, paired with it
		{drawnOn(v("placebo", VerdictInconclusive, 300.0/68, 0.548), "base"), false},         // full tie, paired with another
	} {
		vs := c.vs
		if got := moreSevere(&vs, m); got != c.want {
			t.Errorf("%s drop %.2f p %.3f: %v, want %v", vs.Verdict, vs.Paired.PairedDropPP.Value, vs.Paired.Test.P, got, c.want)
		}
	}
}

// drawnOn sets the variant a VariantSummary is paired with.
func drawnOn(v VariantSummary, ref string) VariantSummary {
	v.Paired.Reference = ref
	return v
}
