package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fragility/fragility/probe/stats"
	"github.com/fragility/fragility/probe/summary"
)

// headline is the box the page opens with: per model the verdict and, per
// variant paired with a reference, the accuracies, the paired drop with its
// interval and test, answer stability and the share of answers the output
// budget cut. Every number is read from summary.json.
type headline struct {
	Label    string
	Verdict  string // ModelSummary.Headline (stability, then drop), else ModelSummary.Verdict; "" without one
	On       string // the variant the drop verdict rests on
	OnWhy    string // why that variant: pre-specified as primary, or picked by the verdict
	Severity string // CSS class of the verdict: "strong", "signal", "none" or "open"
	// Plain says in words what the verdict rests on (plainWords): the
	// stability verdict's share of changed answers and the drop verdict's
	// accuracies and interval; "" with neither.
	Plain string
	Rows  []headRow
	// Methods names the intervals' methods once, below the table
	// ("paired drop: …; answers changed: …"), not in every cell.
	Methods string
}

// headRow is one variant of a headline, as display text.
type headRow struct {
	Variant, Reference string
	RefAcc, VarAcc     string // "17.6% (12/68)"
	Drop, DropCI       string // paired drop in words ("drop of 4.4 pp", "gain of 1.5 pp") and its reported interval, without its method
	P                  string // adjusted p of the sign-flip test
	Verdict            string
	Stability          string // answers changed among pairs with the same answer; "" when the variant re-draws it
	RefCut, VarCut     string // share of scored answers cut by the budget, "k/n (x%)"
	CutWarn            bool   // the variant's answers were cut more often than the reference's, by more than the budget margin (summary.Paired.BudgetConfounded)
}

// headlines returns the headline of every model of s, in summary order.
func headlines(s *summary.Summary) []headline {
	var out []headline
	for i := range s.Models {
		m := &s.Models[i]
		h := headline{Label: m.Label, Verdict: m.Verdict, On: m.VerdictVariant, OnWhy: "the variant the verdict picked", Severity: severity(m.Verdict)}
		if v := m.Variant(m.VerdictVariant); v != nil && v.Primary {
			h.OnWhy = "the pre-specified primary variant"
		}
		if m.Verdict == summary.VerdictFloor {
			h.On = "" // the floor judges no variant's drop
		}
		if m.Headline != "" {
			h.Verdict = m.Headline
		}
		if m.Stability != nil && m.Stability.Verdict == summary.StabilityUnstable && h.Severity != "strong" {
			h.Severity = "signal"
		}
		var methods []string
		addMethod := func(what string, e *summary.Estimate) {
			if e != nil && e.CI != nil && e.CI.Method != "" && !slices.Contains(methods, what+": "+e.CI.Method) {
				methods = append(methods, what+": "+e.CI.Method)
			}
		}
		for j := range m.Variants {
			v := &m.Variants[j]
			if v.Paired == nil {
				continue
			}
			ref := m.Variant(referenceOf(v))
			h.Rows = append(h.Rows, headRowOf(ref, v))
			addMethod("paired drop", v.Paired.PairedDropPP)
			if a := v.Paired.AnswerChanged; a != nil {
				addMethod("answers changed", a.SharePct)
			}
		}
		h.Methods = strings.Join(methods, "; ")
		h.Plain = plainWords(m)
		out = append(out, h)
	}
	return out
}

// headRowOf is the headline row of variant v against its reference ref (nil
// when the summary lacks it).
func headRowOf(ref, v *summary.VariantSummary) headRow {
	r := headRow{Variant: v.Variant, Reference: referenceOf(v), VarAcc: accShort(v), Verdict: v.Verdict, VarCut: cutText(v)}
	if ref != nil {
		r.RefAcc, r.RefCut = accShort(ref), cutText(ref)
		// The budget rule of the verdicts (summary.Paired.BudgetConfounded:
		// the cut shares differ by more than the margin), the variant's
		// side cut more.
		r.CutWarn = v.Paired != nil && v.Paired.BudgetConfounded && v.Paired.CutVariantPct > v.Paired.CutReferencePct
	}
	if d := v.Paired.PairedDropPP; d != nil {
		r.Drop, r.DropCI = dropWords(d.Value), dropBoxCI(d)
	}
	if t := v.Paired.Test; t != nil {
		r.P = pText(t.PAdjusted)
	}
	switch a := v.Paired.AnswerChanged; {
	case a != nil:
		r.Stability = fmt.Sprintf("%s of %d changed (%s%% %s)", countNum(a.Count), a.Pairs, fnum(a.SharePct.Value, 1), boxCI(a.SharePct))
		if n := v.Paired.AnswerLeftOut; n > 0 {
			r.Stability += fmt.Sprintf("; %d pairs not answered on both sides left out", n)
		}
	case v.Paired.AnswerLeftOut > 0:
		r.Stability = fmt.Sprintf("n/a: no pair answered on both sides (%d left out)", v.Paired.AnswerLeftOut)
	}
	return r
}

// plainWords is the headline's sentence in plain words: what the
// stability verdict rests on (when it is unstable or stable: "Given the
// same problem with and without the noop-seeming change, which keeps its
// answer, the model gave a different answer in 85.0% of the 40 pairs it
// answered on both sides [70.2, 94.3]."), then the drop verdict's variant:
// its reference's accuracy and its own, the paired drop in words with its
// interval, and the verdict.
func plainWords(m *summary.ModelSummary) string {
	var out []string
	if st := m.Stability; st != nil && (st.Verdict == summary.StabilityUnstable || st.Verdict == summary.StabilityStable) {
		if x := st.Excess; x != nil && x.ExcessPP != nil && st.LossPct != nil && st.PlaceboLossPct != nil {
			out = append(out, fmt.Sprintf("Of the problems the model solved, the %s change lost %s%% and the placebo (the same problem in other words of the instruction) %s%%: %s pp more (CI %s).",
				st.Variant, fnum(*st.LossPct, 1), fnum(*st.PlaceboLossPct, 1), fnum(x.ExcessPP.Value, 1), boxCI(x.ExcessPP)))
		}
	}
	if v := m.Variant(m.VerdictVariant); v != nil && v.Paired != nil && v.Paired.PairedDropPP != nil && m.Verdict != "" {
		ref := referenceOf(v)
		refAcc := "n/a"
		if r := m.Variant(ref); r != nil {
			refAcc = accShort(r)
		}
		out = append(out, fmt.Sprintf("Accuracy %s on %s and %s on %s: %s %s; the drop's verdict: %s.",
			refAcc, ref, accShort(v), v.Variant, pairedWords(v.Paired.PairedDropPP.Value), dropBoxCI(v.Paired.PairedDropPP), m.Verdict))
	}
	return strings.Join(out, " ")
}

// dropWords is a paired drop of x pp (reference − variant) in words, so
// that its sign cannot be misread: "drop of 4.4 pp", "gain of 1.5 pp" (a
// negative drop), "no change (0.0 pp)".
func dropWords(x float64) string {
	s := fnum(math.Abs(x), 1)
	switch {
	case strings.Trim(s, "0.") == "":
		return "no change (" + s + " pp)"
	case x > 0:
		return "drop of " + s + " pp"
	}
	return "gain of " + s + " pp"
}

// pairedWords is dropWords as the object of a sentence about a paired
// difference: "a paired drop of 4.4 pp", "a paired gain of 1.5 pp", or "no
// paired change (0.0 pp)" (never "a paired no change").
func pairedWords(x float64) string {
	w := dropWords(x)
	if rest, ok := strings.CutPrefix(w, "no change "); ok {
		return "no paired change " + rest
	}
	return "a paired " + w
}

// dropBoxCI is boxCI for a paired drop written by dropWords: on the
// scale of the words, so that a gain's interval is the gain's (the drop's
// interval negated: "gain of 15.9 pp [0.0, 31.8]", not [-31.8, 0.0]).
func dropBoxCI(e *summary.Estimate) string {
	if e == nil || e.CI == nil || !strings.HasPrefix(dropWords(e.Value), "gain") {
		return boxCI(e)
	}
	iv := *e.CI
	// 0 − x, not −x: a limit at 0 stays 0, not −0.
	iv.Lo, iv.Hi, iv.LoOpen, iv.HiOpen = 0-e.CI.Hi, 0-e.CI.Lo, e.CI.HiOpen, e.CI.LoOpen
	return ivText(&iv, 1)
}

// boxCI is an estimate's reported interval for the headline box, to one
// decimal, without its method (headline.Methods names it once), or estCI's
// statement when there is none.
func boxCI(e *summary.Estimate) string {
	if e != nil && e.CI != nil {
		return ivText(e.CI, 1)
	}
	return estCI(e, 1)
}

// accShort is an accuracy as "17.6% (12/68)", or "n/a (0/0)".
func accShort(v *summary.VariantSummary) string {
	if v.AccuracyPct == nil {
		return fmt.Sprintf("n/a (%s/%d)", countNum(v.K), v.N)
	}
	return fmt.Sprintf("%s%% (%s/%d)", fnum(v.AccuracyPct.Value, 1), countNum(v.K), v.N)
}

// cutText is the share of a variant's scored answers that the output budget
// cut (VariantSummary.CutByBudget) as "k/n (x%)".
func cutText(v *summary.VariantSummary) string {
	if v.Scored == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%d/%d (%s%%)", v.CutByBudget, v.Scored, fnum(100*float64(v.CutByBudget)/float64(v.Scored), 0))
}

// severity maps a verdict to the headline's colour class.
func severity(verdict string) string {
	switch verdict {
	case stats.VerdictStrong:
		return "strong"
	case stats.VerdictModerate, stats.VerdictUnclearSize:
		return "signal"
	case stats.VerdictNoDrop:
		return "none"
	}
	return "open"
}

// referenceOf is the variant v's pairs compare with: Paired.Reference, or
// base when it names none.
func referenceOf(v *summary.VariantSummary) string {
	if v.Paired != nil && v.Paired.Reference != "" {
		return v.Paired.Reference
	}
	return "base"
}
