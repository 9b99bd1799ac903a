package summary

import (
	"math"

	"github.com/fragility/fragility/probe/stats"
)

// moreSevere reports whether variant vs's verdict should replace the
// model's current one: more severe, or as severe with a larger paired drop.
func moreSevere(vs *VariantSummary, m *ModelSummary) bool {
	sv, sm := VerdictRank(vs.Verdict), VerdictRank(m.Verdict)
	if m.Verdict == "" || sv > sm {
		return true
	}
	if sv < sm {
		return false
	}
	cur := math.Inf(-1)
	for i := range m.Variants {
		if v := &m.Variants[i]; v.Variant == m.VerdictVariant && v.Paired != nil && v.Paired.PairedDropPP != nil {
			cur = v.Paired.PairedDropPP.Value
		}
	}
	return vs.Paired.PairedDropPP != nil && vs.Paired.PairedDropPP.Value > cur
}

// VerdictRank orders verdicts for the model's verdict: VerdictFloor ranks
// with "no detectable drop" (every variant of a floor model has it).
func VerdictRank(v string) int {
	if v == VerdictFloor {
		return 1
	}
	return stats.Severity(v)
}
