package report

import (
	"fmt"
	"strings"

	"github.com/fragility/fragility/probe/summary"
)

// writeStability writes answer stability of every variant of m that has
// it: the loss of solved problems (summary.Paired.LossAmongSolved), the
// excess over the placebo with its interval and test (Paired.Excess), the
// changes of wrong answers apart (Paired.WrongChanged), all pairs'
// changed share (Paired.AnswerChanged), and the recall of the original's
// answer (Paired.OriginalRecalled); nothing when no variant has any.
func writeStability(b *strings.Builder, m *summary.ModelSummary, conf string) {
	var rows []string
	for i := range m.Variants {
		v := &m.Variants[i]
		pr := v.Paired
		if pr == nil || (pr.AnswerChanged == nil && pr.AnswerLeftOut == 0 && pr.OriginalRecalled == nil) {
			continue
		}
		lost := rateText(pr.LossAmongSolved)
		if pr.LossNoAnswer > 0 {
			lost += fmt.Sprintf("; %s of them with no answer", countNum(pr.LossNoAnswer))
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s |", v.Variant, lost, excessText(pr.Excess),
			rateText(pr.WrongChanged), changedText(pr), rateText(pr.OriginalRecalled)))
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### Answer stability\n\nRead on the problems the reference solved. *Solved, lost*: of the pairs whose reference answer was right, those whose variant gave another answer or none (cut by the budget, or no number: a problem the variant acted on is never left out). *Excess over the placebo*: that loss minus the placebo's on the same solved instances (the same problem asked in other words of the instruction), templates weighted equally, with its interval and Holm-adjusted sign-flip p; the stability verdict reads it. *Wrong answers changed*: the same among pairs whose reference was wrong; it measures how arbitrary wrong answers are, and no verdict reads it. *All pairs*: every pair answered on both sides, right or wrong (a pair with no answer on a side is left out). *Original's answer*: among pairs whose variant re-draws the numbers, those answered with the original's answer instead of their own. Shares with %s intervals.\n\n| variant | solved, lost | excess over the placebo, pp | wrong answers changed | all pairs changed | original's answer given |\n|---|---|---|---|---|---|\n", conf)
	b.WriteString(strings.Join(rows, "\n") + "\n")
}

// excessText is a stability excess's cell: "x [CI], p = …, n pairs", or
// "n/a".
func excessText(x *summary.StabilityExcess) string {
	if x == nil || x.ExcessPP == nil {
		return "n/a"
	}
	p := ""
	if x.Test != nil {
		p = ", p = " + pText(x.Test.PAdjusted)
	}
	return fmt.Sprintf("%s %s%s (%d pairs)", fnum(x.ExcessPP.Value, 1), estCI(x.ExcessPP, 1), p, x.Pairs)
}

// rateText is "k of n (share% [CI])", or "n/a" for no rate.
func rateText(r *summary.Rate) string {
	if r == nil {
		return "n/a"
	}
	return fmt.Sprintf("%s of %d (%s%% %s)", countNum(r.Count), r.Pairs, fnum(r.SharePct.Value, 1), estCI(r.SharePct, 1))
}

// changedText is answer stability's cell: rateText of pr.AnswerChanged
// with the pairs left out for no answer, or why there is no share when
// every pair was left out.
func changedText(pr *summary.Paired) string {
	if pr.AnswerChanged == nil && pr.AnswerLeftOut > 0 {
		return "n/a: no pair answered on both sides" + leftOutText(pr.AnswerLeftOut)
	}
	return rateText(pr.AnswerChanged) + leftOutText(pr.AnswerLeftOut)
}

// leftOutText is "; N pairs without an answer on a side left out", or ""
// when none was.
func leftOutText(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "; 1 pair without an answer on a side left out"
	}
	return fmt.Sprintf("; %d pairs without an answer on a side left out", n)
}

// pairName is the variant's name in the paired tables, with the variant it
// is compared with when that is not base ("noop (vs symbolic)").
func pairName(v *summary.VariantSummary) string {
	if v.Paired != nil && v.Paired.Reference != "" {
		return v.Variant + " (vs " + v.Paired.Reference + ")"
	}
	return v.Variant
}

// writeLevels writes the paired difficulty axis (ModelSummary.Levels):
// accuracy at two GSM-Symbolic levels over the original problems that have
// both, and the mean per-original drop with its interval and test; nothing
// without one.
func writeLevels(b *strings.Builder, m *summary.ModelSummary) {
	if len(m.Levels) == 0 {
		return
	}
	b.WriteString("\n### Difficulty: paired by original problem\n\nGSM-Symbolic's harder levels add clauses to the problem of a template (p1 one, p2 two): they are other problems, so this is the difficulty axis, not robustness. Each row compares two levels over the original GSM8K problems (id_orig) that have templates at both, with each original's accuracy the share of its scored trials right. The drop is the mean over originals of (easier − harder), clustered by original problem, with its cluster-t interval and the sign-flip test over originals (p, then Holm-adjusted over the level pairs).\n\n| levels | variant | originals | accuracy, easier | accuracy, harder | drop, pp [CI] | p (adjusted) |\n|---|---|---|---|---|---|---|\n")
	for _, d := range m.Levels {
		fmt.Fprintf(b, "| %s → %s | %s | %d | %s%% | %s%% | %s %s | %s |\n", d.From, d.To, d.Variant, d.Originals,
			fnum(d.FromPct, 1), fnum(d.ToPct, 1), fopt(d.DropPP, 1), estCI(d.DropPP, 1), testText(d.Test))
	}
}

// errorKindNames are the error kinds' column names in the narrative, in
// anatomy.Kinds order.
var errorKindNames = map[string]string{"unfinished": "cut by the budget", "no_answer": "no answer", "arithmetic": "arithmetic slip",
	"clause_used": "clause applied", "original_recalled": "original's answer", "other": "other (relation or reading)"}

// writeErrors writes the error anatomy of every variant of m that has one
// (summary.VariantSummary.Errors); nothing when none has.
func writeErrors(b *strings.Builder, m *summary.ModelSummary) {
	var rows, kinds []string
	rules := ""
	for i := range m.Variants {
		e := m.Variants[i].Errors
		if e == nil {
			continue
		}
		rules = e.Rules
		if kinds == nil {
			for _, k := range e.Kinds {
				kinds = append(kinds, k.Kind)
			}
		}
		cells := []string{m.Variants[i].Variant, fmt.Sprint(e.Wrong)}
		for _, k := range e.Kinds {
			cells = append(cells, fmt.Sprintf("%d (%s%%)", k.Count, fnum(k.SharePct.Value, 0)))
		}
		rows = append(rows, "| "+strings.Join(cells, " | ")+" |")
	}
	if len(rows) == 0 {
		return
	}
	var head []string
	for _, k := range kinds {
		head = append(head, cmpOr(errorKindNames[k], k))
	}
	fmt.Fprintf(b, "\n### Error anatomy\n\nWhat went wrong in the wrong answers (trials), by the first rule that fires (%s). In order: the budget ended the answer before a final answer; no number given; an operation whose result is stated wrongly and carried into the answer (checked exactly); the answer the irrelevant clause's quantity would give; the original problem's answer to a re-drawn one; anything else. Shares are of the variant's wrong trials; summary.json has their intervals.\n\n| variant | wrong | %s |\n|---|---|%s\n",
		rules, strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	b.WriteString(strings.Join(rows, "\n") + "\n")
}

// protocolLine is the Run section's line on the frozen protocol and the
// template split: the protocol's hash when the run followed one, a warning
// when it ran the test split without one, "" otherwise.
func protocolLine(s *summary.Summary) string {
	split := "all templates"
	if s.Split != "" {
		split = "the " + s.Split + " split of the templates"
	}
	switch {
	case s.ProtocolSHA256 != "":
		return fmt.Sprintf("- Protocol: frozen before the run (sha256 %.12s; prompt, scoring rules, sampling, budget, variants and templates fixed), on %s.\n", s.ProtocolSHA256, split)
	case s.Split == "test":
		return "- **The test split without a frozen protocol:** instructions, prompts and parsers were not fixed before these test templates were run (`fragility protocol freeze` on the dev split, then `run --protocol`), so nothing here shows they were not chosen by their test scores.\n"
	case s.Split != "":
		return fmt.Sprintf("- Templates: %s.\n", split)
	}
	return ""
}

// CutShareNote is the share of a variant's scored trials cut by the output
// budget, in percent, from which the narrative says that it matters and
// what to raise.
const CutShareNote = 10.0

// writeCuts writes how many answers the output budget cut, per variant,
// and, when a variant's share reaches CutShareNote, that it matters;
// nothing when no answer was cut.
func writeCuts(b *strings.Builder, m *summary.ModelSummary) {
	var parts []string
	worst := 0.0
	for _, v := range m.Variants {
		share, ok := cutShare(&v)
		if !ok {
			continue
		}
		worst = max(worst, share)
		parts = append(parts, fmt.Sprintf("%s %d/%d (%s%%)", v.Variant, v.CutByBudget, v.Scored, fnum(share, 0)))
	}
	if worst == 0 {
		return
	}
	fmt.Fprintf(b, "\nCut by the output budget (trials that reached --max-tokens): %s.", strings.Join(parts, ", "))
	if worst >= CutShareNote {
		b.WriteString(" **That is enough to matter:** a cut answer without a final-answer line counts as no answer (extraction rules from extract/3 on), so accuracy falls with the budget itself; raise --max-tokens (a pilot's `results.csv` shows how long the answers run).")
	}
	b.WriteString("\n")
}

// leftOutLine is the Run section's line on the templates left out of the
// item set (refused when loaded, or unable to draw), with the first
// reasons; "" when none was.
func leftOutLine(s *summary.Summary) string {
	n := len(s.TemplatesLeftOut)
	if n == 0 {
		return ""
	}
	var first []string
	for _, x := range s.TemplatesLeftOut[:min(n, 3)] {
		name := x.Template
		if name == "" {
			name = x.Source
		}
		first = append(first, fmt.Sprintf("%s (%s)", name, x.Reason))
	}
	more := ""
	if n > 3 {
		more = fmt.Sprintf("; %d more in manifest.json", n-3)
	}
	return fmt.Sprintf("- Templates left out of the item set (not run, apart from skipped trials): %d: %s%s.\n", n, strings.Join(first, "; "), more)
}
