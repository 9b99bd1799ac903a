package stats

// Limits are the two limits of an interval, with ok false where it is
// undefined; in the unit of the values it was computed from.
type Limits struct {
	Lo, Hi float64
	OK     bool
}

// DropMethod names the rule by which PairedDropInterval built an interval.
type DropMethod int

// The rules of PairedDropInterval.
const (
	// DropNone: no interval (MOVER-Wilson undefined below fewClusters or
	// when every template mean is equal).
	DropNone DropMethod = iota
	// DropMOVERWilson: MOVER-Wilson alone (the sign-flip inversion
	// undefined: every template mean equal, or too few templates for the
	// test to reject).
	DropMOVERWilson
	// DropMOVERWilsonSignFlip: below fewClusters templates, MOVER-Wilson
	// with its lower limit lowered to the sign-flip inversion's where that
	// is lower.
	DropMOVERWilsonSignFlip
	// DropSignFlip: from fewClusters templates, the sign-flip inversion.
	DropSignFlip
)

// PairedDropInterval returns the reported interval of a paired drop (the
// mean over G templates of the template means of paired differences) and
// the rule that gave it, from the intervals it chooses between, all in one
// unit: mw the MOVER-Wilson interval (PairedMOVERWilson), sf the inverted
// sign-flip test on the template means (SignFlipInterval), se the CR1
// cluster-robust SE of the mean of the template means.
//
//   - From fewClusters templates, with se > 0 and sf defined: sf
//     (DropSignFlip). It excludes 0 exactly when the drop's sign-flip test
//     rejects, so a verdict that needs both reads one decision.
//   - Otherwise, with mw defined: [min(mw.Lo, sf.Lo), mw.Hi] where sf is
//     defined and se > 0 (DropMOVERWilsonSignFlip), mw where it is not
//     (DropMOVERWilson). MOVER recovers the variance of the difference
//     from the two accuracies' Wilson limits, whose asymmetries cancel when
//     the template means of the two accuracies are nearly perfectly
//     correlated and sit at different distances from 0 (a drop carried by
//     the few templates a model can solve, base [1 0 1 0 0 0] and variant
//     [0.4 0 0.4 0 0 0]: MOVER-Wilson [15.6, 55.8] pp around a drop of 20
//     pp): its lower limit then sits above the drops the template means
//     themselves cannot rule out. Lowering it to the sign-flip inversion's
//     keeps the verdict's decision unchanged (the signal needs the lower
//     limit above 0 AND the sign-flip test, and sf.Lo > 0 exactly when
//     that test rejects with a positive drop) while the interval covers
//     what either covers.
//
// ok is false when no rule applies (DropNone).
func PairedDropInterval(clusters, fewClusters int, se float64, mw, sf Limits) (Limits, DropMethod) {
	switch {
	case clusters >= fewClusters && se > 0 && sf.OK:
		return Limits{Lo: sf.Lo, Hi: sf.Hi, OK: true}, DropSignFlip
	case !mw.OK:
		return Limits{}, DropNone
	case sf.OK && se > 0:
		return Limits{Lo: min(mw.Lo, sf.Lo), Hi: mw.Hi, OK: true}, DropMOVERWilsonSignFlip
	}
	return mw, DropMOVERWilson
}
