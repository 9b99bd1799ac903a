package summary

import (
	"math"

	"github.com/fragility/fragility/probe/stats"
)

// moreSevere reports whether variant vs's verdict should replace the
// model's current one: more severe; as severe with a larger paired drop;
// as severe with an equal paired drop and a smaller unadjusted p-value of
// its test. A full tie keeps the current one (the earlier variant in the
// run's order). The narrative states this order (VerdictTieRule).
func moreSevere(vs *VariantSummary, m *ModelSummary) bool {
	sv, sm := VerdictRank(vs.Verdict), VerdictRank(m.Verdict)
	if m.Verdict == "" || sv > sm {
		return true
	}
	if sv < sm || vs.Paired.PairedDropPP == nil {
		return false
	}
	cur := m.Variant(m.VerdictVariant)
	if cur == nil || cur.Paired == nil || cur.Paired.PairedDropPP == nil {
		return true
	}
	d, dc := vs.Paired.PairedDropPP.Value, cur.Paired.PairedDropPP.Value
	if math.Abs(d-dc) > 1e-9*max(1, math.Abs(dc)) {
		return d > dc
	}
	if vs.Paired.Test != nil && cur.Paired.Test != nil && vs.Paired.Test.P != cur.Paired.Test.P {
		return vs.Paired.Test.P < cur.Paired.Test.P
	}
	// A full tie: the variant paired with the other (drawn on its
	// instance), which is the variant the user asked about; the reference's
	// own drop answers another question.
	return vs.Paired.Reference == cur.Variant
}

// VerdictTieRule says how the model's verdict variant is picked among
// variants with equally severe verdicts (moreSevere).
const VerdictTieRule = "among equally severe verdicts, the larger paired drop, then the smaller unadjusted p, then a variant over the variant it is paired with"

// VerdictRank orders verdicts for the model's verdict: VerdictFloor ranks
// with "no detectable drop" (every variant of a floor model has it), and
// so does VerdictUninformative (a variant that could show nothing).
func VerdictRank(v string) int {
	if v == VerdictFloor || v == VerdictUninformative {
		return 1
	}
	return stats.Severity(v)
}
