package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fragility/fragility/probe/summary"
)

// Formatting of the summary's numbers for the narrative (and compare.md).

// accText is an accuracy with its distinct-prompt count, saying so when
// every prompt was answered wrong or right (where an interval from the
// clusters would collapse).
func accText(v *summary.VariantSummary) string {
	if v.AccuracyPct == nil {
		return fmt.Sprintf("n/a (%s/%d)", countNum(v.K), v.N)
	}
	switch {
	case v.K == 0:
		return fmt.Sprintf("%s%%, all trials wrong (0/%d)", fnum(v.AccuracyPct.Value, 1), v.N)
	case v.K == float64(v.N):
		return fmt.Sprintf("%s%%, all trials right (%d/%d)", fnum(v.AccuracyPct.Value, 1), v.N, v.N)
	}
	return fmt.Sprintf("%s%% (%s/%d)", fnum(v.AccuracyPct.Value, 1), countNum(v.K), v.N)
}

// flipText is the two discordant cells of a paired table, with shares,
// named after the pairs' reference (base or the drawn one).
func flipText(q *summary.Paired) string {
	ref := "base"
	if q.Reference != "" {
		ref = q.Reference
	}
	return fmt.Sprintf("%s right → variant wrong in %s of %d distinct pairs (%s%%) and %s wrong → variant right in %s (%s%%)",
		ref, countNum(q.BaseOnly.Count), q.Pairs, sharePct(q.BaseOnly), ref, countNum(q.VariantOnly.Count), sharePct(q.VariantOnly))
}

func sharePct(c summary.Cell) string {
	if c.SharePct == nil {
		return "n/a"
	}
	return fnum(c.SharePct.Value, 1)
}

// adjText describes a test's adjustment after its raw p.
func adjText(t *summary.Test) string {
	switch {
	case t.Adjustment == "none: primary variant":
		return " (primary variant, not adjusted)"
	case t.Family > 1:
		return fmt.Sprintf(", Holm-adjusted over %d variants %s", t.Family, pText(t.PAdjusted))
	}
	return ""
}

func cellText(c summary.Cell) string {
	if c.SharePct == nil {
		return countNum(c.Count)
	}
	return fmt.Sprintf("%s (%s%% %s)", countNum(c.Count), fnum(c.SharePct.Value, 1), estCI(c.SharePct, 1))
}

func shiftText(sh *summary.Shift) string {
	if sh == nil || sh.Shift == nil {
		return "n/a (no pairs)"
	}
	return shiftCell(sh.Shift, sh.Test, sh.Pairs, sh.Meaningful)
}

// shiftCell is a shift's table cell: the signed value with its interval,
// the test's p and the pairs, marked when meaningful.
func shiftCell(est *summary.Estimate, test *summary.Test, pairs int, meaningful bool) string {
	t := fmt.Sprintf("%s %s, p %s (n=%d)", signed(est.Value, 3), estCI(est, 3), testText(test), pairs)
	if meaningful {
		t += " **meaningful**"
	}
	return t
}

// testText is "p (adjusted)" of a test.
func testText(t *summary.Test) string {
	if t == nil {
		return "n/a"
	}
	if t.Family > 1 {
		return pText(t.P) + " (" + pText(t.PAdjusted) + ")"
	}
	return pText(t.P)
}

func mdeText(pw *summary.Power) string {
	if pw == nil || pw.MDEPP == nil {
		return "n/a"
	}
	t := fnum(*pw.MDEPP, 1)
	if *pw.MDEPP > 100 {
		t = "> 100 (none detectable)"
	}
	if !pw.Attainable {
		t += " (test cannot reach α)"
	}
	return t
}

// alphaText formats a test level with at most 4 decimals and no trailing
// zeros (0.05, 0.025, 0.0167).
func alphaText(a float64) string {
	return strconv.FormatFloat(math.Round(a*1e4)/1e4, 'f', -1, 64)
}

// ciSource says where an estimate's reported interval comes from and over
// how many templates.
func ciSource(e *summary.Estimate) string {
	switch {
	case e == nil || e.CI == nil:
		return fmt.Sprintf("%d templates", clustersOf(e))
	case e.Degenerate:
		return fmt.Sprintf("%s, as every one of the %d templates gave the same value", e.CI.Method, e.Clusters)
	}
	return fmt.Sprintf("%s, %d templates", e.CI.Method, e.Clusters)
}

// ivOpt is the reported interval of an estimate without its method, or a
// plain statement when there is none.
func ivOpt(e *summary.Estimate, prec int) string {
	if e == nil || e.CI == nil {
		return estCI(e, prec)
	}
	return ivText(e.CI, prec)
}

func clustersOf(e *summary.Estimate) int {
	if e == nil {
		return 0
	}
	return e.Clusters
}

// pText formats a p-value: 3 decimals, 4 below 0.01.
func pText(p float64) string {
	if p < 0.01 {
		return fnum(p, 4)
	}
	return fnum(p, 3)
}

// confText formats a confidence level in percent to one decimal without a
// trailing ".0" (95, 97.5, 99.4), as the other intervals name theirs.
func confText(pct float64) string {
	return strconv.FormatFloat(math.Round(pct*10)/10, 'f', -1, 64)
}

// countNum formats a count that is an integer unless copies disagreed.
func countNum(x float64) string {
	if x == math.Trunc(x) {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return fnum(x, 2)
}

func seText(e *summary.Estimate, prec int) string {
	if e == nil || e.SE == nil {
		return "n/a"
	}
	return fnum(*e.SE, prec)
}

func fopt(e *summary.Estimate, prec int) string {
	if e == nil {
		return "n/a"
	}
	return fnum(e.Value, prec)
}

func signedOpt(e *summary.Estimate, prec int) string {
	if e == nil {
		return "n/a"
	}
	return signed(e.Value, prec)
}

// estCI is the reported interval of an estimate, with its method when it
// is not a clustered one, and a plain statement when there is none.
func estCI(e *summary.Estimate, prec int) string {
	if e == nil {
		return ""
	}
	if e.CI == nil {
		switch {
		case e.Degenerate:
			return "[no interval: no variation between templates]"
		case e.NoCI != "":
			return "[no interval: " + e.NoCI + "]"
		}
		return "[n/a]"
	}
	t := ivText(e.CI, prec)
	if e.CI.Method != summary.MethodClusterT && e.CI.Method != summary.MethodBootstrap {
		t += " " + e.CI.Method
	}
	return t
}

// methodCI is estCI with the interval's method named whatever it is
// (cluster-t and bootstrap too), for a table whose cells may differ in
// method.
func methodCI(e *summary.Estimate, prec int) string {
	t := estCI(e, prec)
	if e != nil && e.CI != nil && (e.CI.Method == summary.MethodClusterT || e.CI.Method == summary.MethodBootstrap) {
		t += " " + e.CI.Method
	}
	return t
}

// ivText formats an interval as "[lo, hi]", with "(" or ")" for a limit
// that is itself outside it (Interval.LoOpen, HiOpen: "(0.0, 12.3]" where
// the randomized sign-flip test rejects a drop of 0).
func ivText(iv *summary.Interval, prec int) string {
	if iv == nil {
		return "[n/a]"
	}
	open, close := "[", "]"
	if iv.LoOpen {
		open = "("
	}
	if iv.HiOpen {
		close = ")"
	}
	return open + fnum(iv.Lo, prec) + ", " + fnum(iv.Hi, prec) + close
}

// fnum formats x with prec decimals.
func fnum(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

// signed formats x with prec decimals and an explicit "+" when positive.
func signed(x float64, prec int) string {
	s := fnum(x, prec)
	if !strings.HasPrefix(s, "-") && strings.Trim(s, "0.") != "" {
		s = "+" + s
	}
	return s
}

func listOr(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
