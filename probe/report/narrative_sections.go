package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fragility/fragility/probe/summary"
)

// writeCalculator writes the calculator section of the narrative.
func writeCalculator(b *strings.Builder, c *summary.CalculatorSummary) {
	limit := ""
	if c.CallLimit > 0 {
		limit = fmt.Sprintf(", at most %d calls per item", c.CallLimit)
	}
	b.WriteString("\n## Calculator condition\n\n")
	fmt.Fprintf(b, "Each item ran twice: the model alone (none) and with a calculator it calls by writing `<<EXPR=` (protocol %s%s): the exact result and `>>` are fed to it as if it had written them. Injected tokens are in no entropy statistic. A wrong answer the calculator fixes points at arithmetic; one it does not fix, at the reasoning. Counts are items matched by template, variant and instance; the paired accuracy differences with intervals are under \"Differences between models\" (the model against itself with the calculator).\n",
		c.Protocol, limit)
	for _, m := range c.Models {
		fmt.Fprintf(b, "\n### %s\n\n| variant | items | accuracy, none | accuracy, calculator | wrong answers fixed | right answers broken | calls per item | items with calls |\n|---|---|---|---|---|---|---|---|\n", m.Label)
		for _, v := range m.Variants {
			wrong := v.Items - v.NoneCorrect
			fmt.Fprintf(b, "| %s | %d | %s (%d/%d) | %s (%d/%d) | %s (%d/%d) | %d | %s | %d |\n", v.Variant, v.Items,
				pctText(v.NoneCorrect, v.Items), v.NoneCorrect, v.Items, pctText(v.CalcCorrect, v.Items), v.CalcCorrect, v.Items,
				pctText(v.Fixed, wrong), v.Fixed, wrong, v.Broken, fnum(v.CallsPerItem, 2), v.ItemsWithCalls)
		}
		writeCalcKinds(b, m.Variants)
	}
}

// writeCalcKinds writes the errors the calculator fixed by the error kind
// of the answer without it (summary.CalcVariantSummary.ByKind): fixed of
// wrong per kind; nothing when no row has kinds.
func writeCalcKinds(b *strings.Builder, rows []summary.CalcVariantSummary) {
	var kinds, lines []string
	for _, v := range rows {
		if v.ByKind == nil {
			continue
		}
		if kinds == nil {
			for _, k := range v.ByKind {
				kinds = append(kinds, k.Kind)
			}
		}
		cells := []string{v.Variant}
		for _, k := range v.ByKind {
			cells = append(cells, fmt.Sprintf("%d of %d", k.Fixed, k.Wrong))
		}
		lines = append(lines, "| "+strings.Join(cells, " | ")+" |")
	}
	if len(lines) == 0 {
		return
	}
	var head []string
	for _, k := range kinds {
		head = append(head, cmpOr(errorKindNames[k], k))
	}
	fmt.Fprintf(b, "\nErrors the calculator fixed, by the kind of the wrong answer without it (error anatomy): fixed of wrong. An arithmetic slip the calculator fixes is the expected case; a fixed answer of another kind means the calculator changed more than the arithmetic (a cut answer that now ends in time, a relation read anew).\n\n| variant | %s |\n|---|%s\n%s\n",
		strings.Join(head, " | "), strings.Repeat("---|", len(head)), strings.Join(lines, "\n"))
}

// pctText is k/n as a percentage with one decimal, "—" for n = 0.
func pctText(k, n int) string {
	if n == 0 {
		return "—"
	}
	return fnum(100*float64(k)/float64(n), 1) + "%"
}

// writeEffort writes the reasoning-effort section of the narrative.
func writeEffort(b *strings.Builder, es []summary.EffortSummary) {
	if len(es) == 0 {
		return
	}
	b.WriteString("\n## Reasoning effort\n\nEffort is the number of tokens a model spent before its answer: its thinking tokens when it reasons in a delimited block (`<think>…</think>` and the like), otherwise all its generated tokens up to the answer region's end (a run-on into a made-up problem excluded). Calculator results fed to the model are not counted. Reasoning models have been reported to think longer as problems get harder and then less near collapse; a fall is flagged below as observed, not explained.\n")
	for _, e := range es {
		src := map[string]string{"think": "thinking tokens (every response had a reasoning block)",
			"all": "all generated tokens (no response had a reasoning block)", "mixed": "thinking tokens where a response had a block, all generated tokens elsewhere"}[e.Source]
		fmt.Fprintf(b, "\n### %s\n\nEffort counted as %s.\n\n| axis | group | trials | mean effort, tokens | mean think entropy, bits | correct |\n|---|---|---|---|---|---|\n", e.Label, src)
		for _, g := range append(slices.Clone(e.ByVariant), e.Difficulty...) {
			ent := "—"
			if g.MeanThinkEntropy > 0 {
				ent = fnum(g.MeanThinkEntropy, 3)
			}
			fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %d/%d |\n", g.Axis, g.Group, g.Trials, fnum(g.MeanTokens, 1), ent, g.Correct, g.Trials)
		}
		if len(e.Falls) == 0 {
			b.WriteString("\nEffort did not fall from any difficulty group to the next harder one.\n")
		}
		for _, f := range e.Falls {
			fmt.Fprintf(b, "\n**Effort fell while difficulty rose:** %s %s → %s, %s → %s tokens on average.\n", f.Axis, f.From, f.To, fnum(f.FromTokens, 1), fnum(f.ToTokens, 1))
		}
	}
}

// pairs (4/48; 95% CI [0.0, 18.5], cluster-t over 24 items)".
func changeText(c *summary.AnswerChangeRate, conf string) string {
	e := c.ChangedPct
	src := "no interval"
	switch {
	case e == nil || e.CI == nil:
	case e.Degenerate:
		src = fmt.Sprintf("%s, as every one of the %d items gave the same share", e.CI.Method, e.Clusters)
	default:
		src = fmt.Sprintf("%s over %d items", e.CI.Method, e.Clusters)
	}
	return fmt.Sprintf("%s%% of pairs (%d/%d; %s CI %s, %s)", fopt(e, 1), c.Changed, c.Pairs, conf, ivOpt(e, 1), src)
}

// documentsIntro replaces narrativeIntro for a run on document items.
const documentsIntro = `This probe asks a model questions about passages of text, the user's own items, in controlled variants and measures what changes. It transfers the method of GSM-Symbolic (Mirzadeh et al., 2024, arXiv:2410.05229) from arithmetic templates to reading. The same question asked in the user's rewordings should get the same answer (paraphrase-k), and an on-topic passage that does not bear on the question should not change it (distractor-k, the retrieval form of GSM-NoOp's irrelevant clause). Shuffle reorders the passages, and distractor-shuffle does both. Each variant is compared with the item as written (base). In the statistics below a template is an item of the file (the cluster), and a prompt is one question with its passages in one order. What the probe reports is what was observed on these items; an absent drop does not show how a model arrives at its answers.`

// writeDocuments writes the narrative's section on document questions:
// per model, the answer-change sentences the wording asks for, and
// a table of accuracy, token F1 and "not stated" answers per variant.
func writeDocuments(b *strings.Builder, ds *summary.DocumentSummary, conf string) {
	b.WriteString("\n## Document questions\n\n")
	fmt.Fprintf(b, "%d items. Scoring: numbers compared exactly; text by exact match after normalisation (case, punctuation, the articles a/an/the, white space) against any accepted answer, with token F1 as a secondary measure; an answer of \"not stated\" is wrong and counted on its own. An answer changed when %s.\n",
		ds.Items, summary.ChangedRule)
	for i := range ds.Models {
		dm := &ds.Models[i]
		fmt.Fprintf(b, "\n### %s: answers under rewording and irrelevant passages\n\n", dm.Label)
		for _, c := range dm.Changes {
			c := c
			switch c.Group {
			case "reworded":
				fmt.Fprintf(b, "- Answers changed when the question was reworded in %s", changeText(&c, conf))
			case "distractor":
				fmt.Fprintf(b, "- An irrelevant passage changed the answer in %s", changeText(&c, conf))
			case "shuffled":
				fmt.Fprintf(b, "- Reordering the passages changed the answer in %s", changeText(&c, conf))
			case "distractor-shuffled":
				fmt.Fprintf(b, "- An irrelevant passage with the passages reordered changed the answer in %s", changeText(&c, conf))
			}
			fmt.Fprintf(b, "; right to wrong in %d, wrong to right in %d (variants: %s).\n", c.RightToWrong, c.WrongToRight, strings.Join(c.Variants, ", "))
		}
		if len(dm.Changes) == 0 {
			b.WriteString("- No variant other than base was paired with base: no change rate.\n")
		}
		b.WriteString("\n| variant | right (trials) | mean token F1 | not stated |\n|---|---|---|---|\n")
		for _, v := range dm.Variants {
			fmt.Fprintf(b, "| %s | %d/%d | %s | %d |\n", v.Variant, v.Correct, v.Scored, fnum(v.MeanF1, 3), v.NotStated)
		}
	}
}
