package stats

// Verdicts on a drop (base accuracy − variant accuracy; positive = worse on
// the variant), from the least to the most severe; see ClassifyDrop. They
// describe what was observed, not how a model computes.
const (
	VerdictNoDrop       = "no detectable drop"
	VerdictInconclusive = "inconclusive"
	VerdictModerate     = "moderate fragility signal"
	VerdictUnclearSize  = "fragility signal of unclear size"
	VerdictStrong       = "strong fragility signal"
)

// DropRule holds the thresholds a drop verdict rests on, all in the unit of
// the drop (percentage points in fragility).
type DropRule struct {
	// Negligible is the margin under which a drop does not matter: an upper
	// bound below it gives VerdictNoDrop.
	Negligible float64
	// Strong is the drop from which a signal is strong: a lower bound at or
	// above it gives VerdictStrong; an interval that reaches it without its
	// lower bound clearing it leaves the strength open.
	Strong float64
	// Alpha is the level the (multiplicity-adjusted) test must reach for any
	// fragility signal, 1 − confidence.
	Alpha float64
}

// ClassifyDrop returns the verdict on a drop from its interval ci = [lo,
// hi] (not OK: none could be computed; an open limit, LoOpen or HiOpen,
// is outside it, so that "lo > 0" below includes (0, hi] and "hi < x"
// includes [lo, x)) and the multiplicity-adjusted p-value of its paired
// test, never from the point estimate alone:
//
//   - VerdictNoDrop: hi < r.Negligible (the interval rules out any drop of
//     the negligible margin or more; a variant that did better falls here).
//   - VerdictStrong: lo ≥ r.Strong and pAdjusted ≤ r.Alpha.
//   - VerdictModerate: lo > 0, hi < r.Strong and pAdjusted ≤ r.Alpha (a drop
//     is shown and a strong one ruled out).
//   - VerdictUnclearSize: lo > 0 and pAdjusted ≤ r.Alpha, but the interval
//     reaches r.Strong while lo is below it.
//   - VerdictInconclusive: everything else: no interval; an interval that
//     includes 0 (or lies below it) and reaches the negligible margin; or a
//     lower bound above 0 whose adjusted test does not reach r.Alpha.
//
// Requiring both the interval and the adjusted test keeps the family-wise
// rate of false signals at r.Alpha when the test is adjusted across the
// variants a verdict may pick from (Holm).
func ClassifyDrop(ci Limits, pAdjusted float64, r DropRule) string {
	switch {
	case !ci.OK:
		return VerdictInconclusive
	case ci.Below(r.Negligible):
		return VerdictNoDrop
	case !(ci.Above(0) && pAdjusted <= r.Alpha):
		return VerdictInconclusive
	case ci.Lo >= r.Strong:
		return VerdictStrong
	case ci.Hi < r.Strong:
		return VerdictModerate
	default:
		return VerdictUnclearSize
	}
}

// Severity ranks a verdict of ClassifyDrop from 1 (VerdictNoDrop) to 5
// (VerdictStrong); 0 for anything else.
func Severity(verdict string) int {
	switch verdict {
	case VerdictNoDrop:
		return 1
	case VerdictInconclusive:
		return 2
	case VerdictModerate:
		return 3
	case VerdictUnclearSize:
		return 4
	case VerdictStrong:
		return 5
	}
	return 0
}

// IsSignal reports whether a verdict claims a drop (moderate, unclear size
// or strong).
func IsSignal(verdict string) bool { return Severity(verdict) >= 3 }

// ShiftMeaningful reports whether a paired shift is meaningful: its interval
// lies entirely beyond the threshold on one side (lo ≥ threshold or hi ≤
// −threshold; the threshold applies to the bound, not to the point) and its
// multiplicity-adjusted test reaches alpha.
func ShiftMeaningful(lo, hi float64, hasInterval bool, pAdjusted, threshold, alpha float64) bool {
	return hasInterval && (lo >= threshold || hi <= -threshold) && pAdjusted <= alpha
}
