package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fragility/fragility/probe/summary"
)

// narrativeIntro is the fixed paragraph on what the probe tests. It is the
// only text of the narrative with numbers that are not from the Summary (the
// citation).
const narrativeIntro = `This probe asks each model the same grade-school word problems in controlled surface variants and measures what changes. It follows the GSM-Symbolic method (Mirzadeh et al., 2024, "GSM-Symbolic: Understanding the Limitations of Mathematical Reasoning in Large Language Models", arXiv:2410.05229). Each template is instantiated with fresh names (names), fresh numbers with every answer recomputed (numbers), both (symbolic), or reworded phrasing (paraphrase). It can also get an irrelevant clause that does not change the answer (noop), or a clause that looks relevant but was reviewed not to change it (noop-seeming). Each is compared with its reference: the base instance, or, for a variant drawn on a re-drawn problem (noop, noop-seeming and paraphrase with the default --reference drawn), that same drawn problem without the change (symbolic), so that a pair differs in one factor only. A placebo asks that drawn problem again word for word under another wording of the instruction: the answers it changes are what other tokens alone do, and answer stability is read against it. The question is whether accuracy holds when only the surface of a problem changes: GSM-Symbolic reports that it often does not, above all when names or numbers change or an irrelevant clause is added. What the probe reports is what was observed on these problems; an absent drop does not show how a model arrives at its answers. Alongside exactness the probe reports how uncertain the model is while it answers (token entropy) and how an embedding classifier reads the prompt (DDC margin).`

// Narrative renders the summary as Markdown for a reader: what the probe
// tests; the run's denominators, unit of analysis, number of templates and
// interval methods, with a warning below Params.FewTemplates templates; per
// model a verdict with the interval and test it rests on and the flip rates
// beside it, accuracies (k/n distinct prompts), drops (in percentage points
// and relative percent, labelled), the paired flips with their test and the
// minimum detectable drop (robustness), entropy and DDC-margin shifts,
// accuracy by level, steps and relation (difficulty), output format versus
// computation; the paired differences between models when several ran; and
// the rules behind the wording.
//
// It is deterministic and uses nothing but s: every number printed, apart
// from the citation in the opening paragraph, is a field of s (rounded for
// display: percentages and pp to 1 decimal, bits and margins to 3, p-values
// to 3 or 4), so a narrative can be checked against summary.json.
func Narrative(s *summary.Summary) string {
	var b strings.Builder
	p := s.Params
	conf := fnum(100*p.Confidence, 0) + "%"

	b.WriteString("# Fragility report\n\n")
	if len(s.Models) > 0 {
		// The answer first: each model's verdict and what it rests on.
		b.WriteString("## Verdicts\n\n" + Verdicts(s) + "\n")
	}
	b.WriteString("## What this probe tests\n\n")
	if s.Documents != nil {
		b.WriteString(documentsIntro)
	} else {
		b.WriteString(narrativeIntro)
	}
	b.WriteString("\n\n## Run\n\n")
	fmt.Fprintf(&b, "- Trials: %d in %d model(s); %d skipped (not run, excluded from every statistic). Nothing is filtered to items a model solved in the base variant: every denominator counts all scored prompts.\n",
		s.Trials, len(s.Models), s.Skipped)
	if s.RunStatus != "" {
		fmt.Fprintf(&b, "- **This run is not complete** (status %q in manifest.json): every number below covers only the %d trials in results.csv, not the whole plan.\n", s.RunStatus, s.Trials)
	}
	b.WriteString(protocolLine(s))
	b.WriteString(leftOutLine(s))
	if o := s.Overrides; o != nil {
		fmt.Fprintf(&b, "- Label overrides (%s, sha256 %.12s): %d trials scored against a corrected answer, %d excluded from every statistic; results.csv keeps the original labels.\n",
			o.File, o.SHA256, o.Overridden, o.Excluded)
	}
	copies := 0
	for i := range s.Models {
		for j := range s.Models[i].Variants {
			copies += s.Models[i].Variants[j].Copies
		}
	}
	fmt.Fprintf(&b, "- Unit of analysis: a distinct prompt. Trials of one model and variant with the same question (for example the base instances of a template, which all use its base values) are one prompt, scored by the share of its copies answered right, so copies add no weight; %d copies were collapsed in this run. %s Variants: %s.\n",
		copies, clusterSentence(s), strings.Join(s.Variants, ", "))
	fmt.Fprintf(&b, "- Drops are the reference's accuracy minus the variant's in percentage points (pp; positive = worse than the reference: base, or the variant a row names after \"vs\", such as the drawn symbolic problem); the relative drop is that drop as a percentage of the reference's accuracy. Verdicts rest on the paired drop (the same templates and instances in both variants). Intervals are %s; how each is computed, the tests, multiplicity and power: **Methods**, at the end.\n", conf)
	if s.FewTemplates && s.Clusters > 0 {
		fmt.Fprintf(&b, "\n**Few %s: G = %d, below %d.** With this few clusters the percentile cluster bootstrap covers the true value less often than its nominal %s. Accuracies and shifts are therefore reported with cluster-t intervals on G − 1 degrees of freedom, and paired drops (what the verdicts rest on) with MOVER-Wilson intervals, which also use t on G − 1 degrees of freedom (lower limit at most the inverted sign-flip test's). Neither is exact with few %s: their coverage, measured by simulation, is under **Methods**. %s Read the verdicts with this in mind: `fragility plan --drop D` says how many %s a drop of D pp needs.\n",
			clusterNoun(s)+"s", s.Clusters, p.FewTemplates, conf, clusterNoun(s)+"s", minPSentence(s), clusterNoun(s)+"s")
	}

	if len(s.Models) == 0 {
		b.WriteString("\nNo trials: nothing to report.\n")
		return b.String()
	}
	if s.Documents != nil {
		writeDocuments(&b, s.Documents, conf)
	}
	for i := range s.Models {
		writeModel(&b, &s.Models[i], p, conf, s.RunStatus != "")
	}
	writePaper(&b, s.Paper, conf)
	if s.Calculator != nil {
		writeCalculator(&b, s.Calculator)
	}
	if s.Documents == nil {
		writeEffort(&b, s.Effort)
	}
	if len(s.Models) > 1 {
		writeComparison(&b, s, conf)
	}
	writeThresholds(&b, p, conf)
	writeMethods(&b, p, conf, s.FewTemplates && s.Clusters > 0)
	return b.String()
}

// writeMethods writes the closing Methods section: how the intervals, the
// standard errors, the tests, multiplicity, power and answer extraction
// are done (summary.Params' statements), after the results a reader reads
// first; with coverage true (the few-template notice points here), the
// simulated coverage and power, a line per statistic
// (summary.Params.PairedDropCoverage).
func writeMethods(b *strings.Builder, p summary.Params, conf string, coverage bool) {
	b.WriteString("\n## Methods\n\n")
	fmt.Fprintf(b, "- Intervals: %s. Reported: %s. Standard errors: %s. Also computed for every statistic (in summary.json): the %s with B = %d resamples and seed %d; accuracies also get the %s.\n",
		conf, p.ReportedInterval, p.ClusterRobust, p.Bootstrap, p.BootstrapResamples, p.Seed, p.AccuracyInterval)
	fmt.Fprintf(b, "- Tests at α = %s: %s. Multiplicity: %s.\n", alphaText(p.Alpha), p.PermutationTest, p.Multiplicity)
	fmt.Fprintf(b, "- Power: the minimum detectable drop at %s power is %s.\n", fnum(100*p.Power, 0)+"%", p.MDE)
	if coverage && p.PairedDropCoverage != "" {
		b.WriteString("- Coverage and power, measured by simulation (summary.json: params.paired_drop_coverage), a line per statistic:\n")
		for _, x := range splitSentences(p.PairedDropCoverage) {
			b.WriteString("  - " + x + "\n")
		}
	}
	fmt.Fprintf(b, "- Answer extraction rules: %s.\n", p.ExtractionRules)
}

// splitSentences splits text at the ends of its sentences (". ").
func splitSentences(text string) []string {
	parts := strings.SplitAfter(strings.TrimSpace(text), ". ")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// pairedRule states, in brief and in two sentences, the rule by which
// every paired drop's interval is built (stats.PairedDropInterval, as
// summary.Params.ReportedInterval states it in full).
func pairedRule(p summary.Params) string {
	return fmt.Sprintf("From %d templates that interval is the inverted sign-flip test on the template means, randomized at ties (a limit in round brackets is itself excluded), its upper limit raised to the skew-corrected t's where higher. Below %d it is MOVER-Wilson, its lower limit lowered to the sign-flip inversion's where lower; with a single template, the difference of Wilson intervals.", p.FewTemplates, p.FewTemplates)
}

// clusterNoun is what a cluster of the run is: an item of the document
// file for a document run, else a template.
func clusterNoun(s *summary.Summary) string {
	if s.Documents != nil {
		return "item"
	}
	return "template"
}

// clusterSentence names the run's cluster and their number G.
func clusterSentence(s *summary.Summary) string {
	if s.Documents != nil {
		return fmt.Sprintf("The cluster is the item of the document file (a \"template\" in the tables below): G = %d items.", s.Clusters)
	}
	return fmt.Sprintf("The cluster is the template: G = %d templates.", s.Clusters)
}

// minPSentence states the smallest attainable p of the sign-flip tests of
// the run's paired drops, and whether the adjusted tests can reach α.
func minPSentence(s *summary.Summary) string {
	var t *summary.Test
	unreachable := false
	for i := range s.Models {
		for j := range s.Models[i].Variants {
			if pr := s.Models[i].Variants[j].Paired; pr != nil && pr.Test != nil {
				if t == nil || pr.Test.Templates > t.Templates {
					t = pr.Test
				}
				if !pr.Test.Reachable {
					unreachable = true
				}
			}
		}
	}
	if t == nil {
		return ""
	}
	out := fmt.Sprintf("The sign-flip test's smallest attainable p-value with %d %ss is %s.", t.Templates, clusterNoun(s), pText(t.MinP))
	if unreachable {
		out += fmt.Sprintf(" Some tests here cannot reach α = %s whatever the data (their smallest attainable p, times the number of tests they are adjusted over, exceeds α): more templates, or a single pre-specified primary variant (`run --primary VARIANT`), lift this.", alphaText(s.Params.Alpha))
	}
	return out
}

// writeModel writes one model's section; unfinished is true when the run
// is not complete (summary.Summary.RunStatus), so a variant missing from
// the results may be one not yet reached.
func writeModel(b *strings.Builder, m *summary.ModelSummary, p summary.Params, conf string, unfinished bool) {
	fmt.Fprintf(b, "\n## %s\n\n", m.Label)
	if m.Path != "" {
		fmt.Fprintf(b, "File `%s`; ", m.Path)
	}
	fmt.Fprintf(b, "%d trials, %d skipped; %d distinct prompts (%d copies collapsed) in %d templates.\n\n", m.Trials, m.Skipped, m.N, m.Copies, m.Templates)
	base := m.Variant(summary.BaseVariant)
	writeVerdict(b, m, base, p, conf, unfinished)
	writeAccuracy(b, m, p, conf)
	writeCuts(b, m)
	if base == nil || len(m.Variants) < 2 {
		writeDifficulty(b, m, p, conf)
		return
	}
	writeFlips(b, m, p, conf)
	writeStability(b, m, conf)
	writeErrors(b, m)
	writeShifts(b, m, p, conf)
	writeAnswerProb(b, m, conf)
	writeDifficulty(b, m, p, conf)
}

// floorAdvice is what to do about base accuracy at the floor, by its
// cause: when the output budget cut a tenth or more of base's scored
// answers, raise --max-tokens first (a cut answer is mostly no answer);
// otherwise a stronger model, worked examples or easier templates.
func floorAdvice(base *summary.VariantSummary) string {
	if x, ok := cutShare(base); ok && x >= CutShareNote {
		return fmt.Sprintf("The output budget cut %d of its %d scored answers: raise --max-tokens first, then see whether the model solves them.", base.CutByBudget, base.Scored)
	}
	return "Run a stronger model, add worked examples (--shots) or use easier templates."
}

// writeVerdict writes a model's verdict paragraph: the verdict with the
// evidence it rests on, or why there is none (no base, no variant, base at
// the floor).
func writeVerdict(b *strings.Builder, m *summary.ModelSummary, base *summary.VariantSummary, p summary.Params, conf string, unfinished bool) {
	v := m.Variant(m.VerdictVariant)
	switch {
	case base == nil && unfinished:
		b.WriteString("**No base trial yet:** the run stopped before any base item of this model finished; drops, pairs and verdicts need them and are not computed (`fragility run --resume` goes on).\n\n")
	case base == nil:
		b.WriteString("**No base variant in this run:** drops, pairs and verdicts need one and are not computed.\n\n")
	case m.Verdict == "" || v == nil:
		b.WriteString("**No verdict:** no variant other than base with matched pairs, or no scored trials.\n\n")
	case m.Verdict == summary.VerdictFloor:
		fmt.Fprintf(b, "**Verdict: %s.** Base accuracy %s is below %s%%: the model rarely solves the problems as authored, so it has no accuracy to lose and the drops below say nothing about its robustness. %s%s\n\n",
			verdictHead(m), accText(base), fnum(summary.FloorAccuracyPct, 0), floorAdvice(base), stabilityVerdictSentence(m, p, conf))
	default:
		from := "the most severe of its variants after Holm's adjustment; " + summary.VerdictTieRule
		if m.VerdictRule == "primary" {
			from = "the pre-specified primary variant, tested alone"
		}
		pr := v.Paired
		refName, ref := "Base", base
		if r := m.Variant(pr.Reference); r != nil {
			refName, ref = "Its reference "+r.Variant+" (the same drawn problems without the change)", r
		}
		fmt.Fprintf(b, "**Verdict: %s** (the drop on %s, %s). %s accuracy %s, %s %s. On %s, %s: a paired drop of %s pp, %s CI %s (%s). Its sign-flip p = %s%s. %s",
			verdictHead(m), v.Variant, from, refName, accText(ref), v.Variant, accText(v),
			v.Variant, flipText(pr), fopt(pr.PairedDropPP, 1), conf, ivOpt(pr.PairedDropPP, 1), ciSource(pr.PairedDropPP), pText(pr.Test.P), adjText(pr.Test),
			verdictReason(pr, v.Verdict, p))
		if pw := pr.Power; pw != nil {
			b.WriteString(" " + powerSentence(pw))
		}
		b.WriteString(budgetSentence(pr, p, conf))
		b.WriteString(selectionSentence(m, p))
		b.WriteString(stabilityVerdictSentence(m, p, conf))
		b.WriteString(answerProbSentence(m, conf))
		b.WriteString("\n\n")
	}
}

// writeAccuracy writes a model's table of accuracy and drops by variant.
func writeAccuracy(b *strings.Builder, m *summary.ModelSummary, p summary.Params, conf string) {
	fmt.Fprintf(b, "### Accuracy and drops\n\nAccuracy over distinct prompts (k/n). The %s CI is the reported interval (cluster-t below %d templates, bootstrap from %d; a fallback is named in its cell); Wilson treats the prompts as independent. SE is the CR1 cluster-robust standard error. The accuracy drop is the reference's accuracy minus the variant's over all the distinct prompts of each, matched or not, every prompt weighted equally, with an interval by the same rule (cluster-t or bootstrap), as is the relative drop. It is not the drop the verdict reads: the verdict reads the **paired drop** (matched pairs only, every template weighted equally), in the verdict and under **Robustness** below, with its own interval. %s The two can agree in value and still differ in interval: they are built differently.\n\n", conf, p.FewTemplates, p.FewTemplates, pairedRule(p))
	fmt.Fprintf(b, "| variant | accuracy (k/n) | %s CI | Wilson | SE, pp | accuracy drop (all prompts, not the verdict's), pp [%s CI] | relative drop, %% of reference [%s CI] | copies | skipped |\n|---|---|---|---|---|---|---|---|---|\n", conf, conf, conf)
	for i := range m.Variants {
		v := &m.Variants[i]
		drop, rel := "—", "—"
		if v.Variant != summary.BaseVariant {
			drop = strings.TrimSpace(fopt(v.DropPP, 1) + " " + estCI(v.DropPP, 1))
			rel = strings.TrimSpace(fopt(v.RelativeDropPct, 1) + " " + estCI(v.RelativeDropPct, 1))
		}
		wil, se := "n/a", "n/a"
		if v.AccuracyPct != nil {
			wil = ivText(v.AccuracyPct.Wilson, 1)
			se = seText(v.AccuracyPct, 1)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %d | %d |\n", pairName(v), accText(v), estCI(v.AccuracyPct, 1), wil, se, drop, rel, v.Copies, v.Skipped)
	}
}

// writeFlips writes a model's table of paired flips against the reference by
// variant, then which pairs were left out.
func writeFlips(b *strings.Builder, m *summary.ModelSummary, p summary.Params, conf string) {
	fmt.Fprintf(b, "\n### Robustness: paired flips against the reference\n\nA pair is the same template and instance in base (or in the reference named after \"vs\": the drawn problem the variant changes in one factor) and the variant, both scored; identical pairs count once (copies in brackets). Shares are of the distinct pairs with %s intervals. The paired drop is the share reference right → variant wrong minus the reverse, each template weighted equally, with the interval the verdict reads (its rule is under **Accuracy and drops** above); its test is the sign-flip test over templates (p, then adjusted). MDE: the minimum detectable paired drop at %s power.\n\n", conf, fnum(100*p.Power, 0)+"%")
	b.WriteString("| variant | pairs | both right | reference right → variant wrong | reference wrong → variant right | both wrong | paired drop, pp [" + conf + " CI] | p (adjusted) | MDE, pp | verdict |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for i := range m.Variants {
		v := &m.Variants[i]
		if v.Paired == nil {
			continue
		}
		q := v.Paired
		verdict := cmpOr(v.Verdict, "n/a")
		if v.Primary {
			verdict += " (primary)"
		}
		fmt.Fprintf(b, "| %s | %d (%d) | %s | %s | %s | %s | %s | %s | %s | %s |\n", pairName(v), q.Pairs, q.Copies,
			cellText(q.BothCorrect), cellText(q.BaseOnly), cellText(q.VariantOnly), cellText(q.BothWrong),
			fopt(q.PairedDropPP, 1)+" "+estCI(q.PairedDropPP, 1), testText(q.Test), mdeText(q.Power), verdict)
	}
	skipped := false
	for i := range m.Variants {
		if q := m.Variants[i].Paired; q != nil && (q.SkippedPairs > 0 || q.Unmatched > 0) {
			skipped = true
		}
	}
	if skipped {
		b.WriteString("\nLeft out of the pairs: ")
		var parts []string
		for i := range m.Variants {
			if q := m.Variants[i].Paired; q != nil && (q.SkippedPairs > 0 || q.Unmatched > 0) {
				parts = append(parts, fmt.Sprintf("%s %d with a skipped trial, %d without a base partner", m.Variants[i].Variant, q.SkippedPairs, q.Unmatched))
			}
		}
		b.WriteString(strings.Join(parts, "; ") + ".\n")
	}
}

// writeShifts writes a model's table of entropy and DDC-margin shifts
// against the reference by variant, then the meaningful ones in words.
func writeShifts(b *strings.Builder, m *summary.ModelSummary, p summary.Params, conf string) {
	fmt.Fprintf(b, "\n### Uncertainty and reading: shifts against the reference\n\nMean over distinct pairs of (variant − reference): entropy in bits per token over the answer tokens and over all generated tokens; DDC margin in cosine units. Each comes with the %s cluster-t interval (at every number of templates: the percentile bootstrap under-covers these skewed shifts), the sign-flip p (then Holm-adjusted across the three measures and the variants) and the number of pairs. Marked **meaningful** when the whole interval lies beyond the measure's margin (below) and the adjusted test reaches α.\n\n", conf)
	b.WriteString("| variant | answer-token entropy, bits | all-token entropy, bits | DDC margin |\n|---|---|---|---|\n")
	var flagged []string
	for i := range m.Variants {
		v := &m.Variants[i]
		if v.Paired == nil {
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", v.Variant, shiftText(v.AnswerEntropyShift), shiftText(v.EntropyShift), shiftText(v.DDCMarginShift))
		for _, x := range []struct {
			name, unit string
			sh         *summary.Shift
		}{{"answer-token entropy", " bits", v.AnswerEntropyShift}, {"all-token entropy", " bits", v.EntropyShift}, {"DDC margin", "", v.DDCMarginShift}} {
			if x.sh != nil && x.sh.Meaningful {
				dir := "rises"
				if x.sh.Shift.Value < 0 {
					dir = "falls"
				}
				flagged = append(flagged, fmt.Sprintf("%s %s by %s%s on %s (%s → %s)", x.name, dir, fnum(math.Abs(x.sh.Shift.Value), 3), x.unit, v.Variant, fnum(x.sh.BaseMean, 3), fnum(x.sh.VariantMean, 3)))
			}
		}
	}
	if len(flagged) == 0 {
		b.WriteString("\nNo meaningful shift: no interval lies beyond its margin with an adjusted test at α.\n")
	} else {
		b.WriteString("\nMeaningful shifts: " + strings.Join(flagged, "; ") + ".\n")
	}
	writeShiftStrata(b, m, p, conf)
}

// writeDifficulty writes accuracy by level, steps and relation where the
// data has more than one group (or a level at all), the flips within each
// group, and the format-versus-computation table.
func writeDifficulty(b *strings.Builder, m *summary.ModelSummary, p summary.Params, conf string) {
	for _, axis := range summary.DifficultyAxes {
		var groups []string
		cell := map[[2]string]*summary.GroupAccuracy{}
		anyLevel := false
		for i := range m.Difficulty {
			g := &m.Difficulty[i]
			if g.Axis != axis {
				continue
			}
			if !slices.Contains(groups, g.Group) {
				groups = append(groups, g.Group)
			}
			if g.Group != "" {
				anyLevel = true
			}
			cell[[2]string{g.Group, g.Variant}] = g
		}
		if len(groups) < 2 && !(axis == "level" && anyLevel) {
			continue
		}
		fmt.Fprintf(b, "\n### Difficulty: accuracy by %s\n\nThe difficulty axis, apart from robustness: accuracy (k/n distinct prompts) of the templates in each group, with the number of templates.\n\n| %s | templates |", axis, axis)
		for _, v := range m.Variants {
			fmt.Fprintf(b, " %s |", v.Variant)
		}
		b.WriteString("\n|---|---|" + strings.Repeat("---|", len(m.Variants)) + "\n")
		for _, g := range groups {
			tm := 0
			for _, v := range m.Variants {
				if x := cell[[2]string{g, v.Variant}]; x != nil {
					tm = max(tm, x.Templates)
				}
			}
			fmt.Fprintf(b, "| %s | %d |", cmpOr(g, "(none)"), tm)
			for _, v := range m.Variants {
				x := cell[[2]string{g, v.Variant}]
				if x == nil || x.Accuracy == nil {
					b.WriteString(" — |")
					continue
				}
				fmt.Fprintf(b, " %s%% (%s/%d) |", fnum(x.Accuracy.Value, 1), countNum(x.K), x.N)
			}
			b.WriteString("\n")
		}
		var rows []string
		for _, g := range groups {
			for _, v := range m.Variants {
				x := cell[[2]string{g, v.Variant}]
				if x == nil || v.Variant == summary.BaseVariant || x.Pairs == 0 {
					continue
				}
				p := "—"
				if x.Test != nil {
					p = pText(x.Test.P)
				}
				rows = append(rows, fmt.Sprintf("| %s | %s | %d | %s | %s | %s %s | %s |", cmpOr(g, "(none)"), v.Variant, x.Pairs,
					countNum(x.BaseOnly), countNum(x.VariantOnly), fopt(x.PairedDropPP, 1), methodCI(x.PairedDropPP, 1), p))
			}
		}
		if len(rows) > 0 {
			fmt.Fprintf(b, "\nRobustness within each %s group (distinct pairs against each variant's reference). The paired drop's interval follows the rule of the variant's paired drop (under **Robustness** above) on the group's templates, so from %d templates the inverted sign-flip test and below MOVER-Wilson; the method is named in each cell. Its p is the sign-flip test of the group's drop on the same sign vectors, so that from %d templates the interval leaves 0 out exactly when p ≤ α. These intervals and p-values are not adjusted for the number of groups.\n\n| %s | variant | pairs | reference right → variant wrong | reference wrong → variant right | paired drop, pp [%s CI] | sign-flip p (unadjusted) |\n|---|---|---|---|---|---|---|\n%s\n", axis, p.FewTemplates, p.FewTemplates, axis, conf, strings.Join(rows, "\n"))
		}
	}
	writeLevels(b, m)
	b.WriteString("\n### Format versus computation\n\nWhether the expected value appears anywhere in the output, next to whether the extracted final answer is correct, over scored trials (copies included): a gap means the model wrote the right number but gave another as its answer (or the answer was not where the extraction rules look). A run with the calculator condition (`--conditions none,calculator`) measures the exact-arithmetic axis separately, in its own section.\n\n| variant | correct (trials) | expected value anywhere (trials) |\n|---|---|---|\n")
	for _, v := range m.Variants {
		fmt.Fprintf(b, "| %s | %d/%d | %d/%d |\n", v.Variant, v.CorrectTrials, v.Scored, v.ExpectedAnywhere, v.Scored)
	}
}

func writeComparison(b *strings.Builder, s *summary.Summary, conf string) {
	b.WriteString("\n## Cross-model comparison\n\nModels ordered from the least to the most severe verdict, then by the paired drop on the variant the verdict comes from. Whether two models differ is tested below, on the prompts both were given.\n\n")
	fmt.Fprintf(b, "| model | base accuracy (k/n) | verdict variant | paired drop, pp [%s CI] | reference right → variant wrong | reference wrong → variant right | verdict |\n|---|---|---|---|---|---|---|\n", conf)
	order := make([]*summary.ModelSummary, len(s.Models))
	for i := range s.Models {
		order[i] = &s.Models[i]
	}
	drop := func(m *summary.ModelSummary) float64 {
		if v := m.Variant(m.VerdictVariant); v != nil && v.Paired != nil && v.Paired.PairedDropPP != nil {
			return v.Paired.PairedDropPP.Value
		}
		return math.Inf(-1)
	}
	slices.SortStableFunc(order, func(x, y *summary.ModelSummary) int {
		if c := summary.VerdictRank(x.Verdict) - summary.VerdictRank(y.Verdict); c != 0 {
			return c
		}
		dx, dy := drop(x), drop(y)
		switch {
		case dx < dy:
			return -1
		case dx > dy:
			return 1
		}
		return 0
	})
	var robust, fragile, unclear, floor, none []string
	for _, m := range order {
		base, v := m.Variant(summary.BaseVariant), m.Variant(m.VerdictVariant)
		baseText, wv, d, bo, vo := "n/a", "—", "n/a", "—", "—"
		if base != nil {
			baseText = accText(base)
		}
		if v != nil && v.Paired != nil {
			wv = v.Variant
			d = fopt(v.Paired.PairedDropPP, 1) + " " + estCI(v.Paired.PairedDropPP, 1)
			bo, vo = cellText(v.Paired.BaseOnly), cellText(v.Paired.VariantOnly)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", m.Label, baseText, wv, d, bo, vo, cmpOr(m.Verdict, "n/a"))
		switch m.Verdict {
		case summary.VerdictNoDrop:
			robust = append(robust, m.Label)
		case summary.VerdictModerate, summary.VerdictUnclearSize, summary.VerdictStrong:
			fragile = append(fragile, fmt.Sprintf("%s (%s on %s)", m.Label, m.Verdict, wv))
		case summary.VerdictInconclusive, summary.VerdictUninformative:
			unclear = append(unclear, m.Label)
		case summary.VerdictFloor:
			floor = append(floor, m.Label)
		default:
			none = append(none, m.Label)
		}
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "- No detectable drop on any variant: %s.\n", listOr(robust))
	fmt.Fprintf(b, "- A fragility signal on at least one variant: %s.\n", listOr(fragile))
	if len(unclear) > 0 {
		fmt.Fprintf(b, "- Inconclusive or uninformative (a drop the data can neither show nor rule out): %s.\n", listOr(unclear))
	}
	if len(floor) > 0 {
		fmt.Fprintf(b, "- Not assessable (base accuracy below %s%%): %s.\n", fnum(summary.FloorAccuracyPct, 0), listOr(floor))
	}
	if len(none) > 0 {
		fmt.Fprintf(b, "- No verdict (no base or no other variant): %s.\n", listOr(none))
	}
	if len(s.ModelPairs) > 0 {
		b.WriteString("\n### Paired differences between models\n\n")
		writeModelPairs(b, s.ModelPairs, conf, s.Params.Alpha)
	}
}

// writeModelPairs writes the paired differences between models: a table
// and the differences shown, in words.
func writeModelPairs(b *strings.Builder, mps []summary.ModelPair, conf string, alpha float64) {
	fmt.Fprintf(b, "A − B on the distinct prompts (accuracy) or pairs (paired drop) both models were given, clustered by template, with %s intervals and the sign-flip test over templates, Holm-adjusted across the %d differences of every model pair together (one family). A positive accuracy difference means A is more accurate; a positive drop difference means A loses more than B on that variant.\n\n", conf, mps[0].Family)
	fmt.Fprintf(b, "| A | B | measure | variant | units | A higher / B higher | A − B, pp [%s CI] | p (adjusted) |\n|---|---|---|---|---|---|---|---|\n", conf)
	var shown []string
	for _, mp := range mps {
		for _, x := range []struct {
			name string
			ds   []summary.ModelDifference
		}{{"accuracy", mp.Accuracy}, {"paired drop", mp.Drop}} {
			for _, d := range x.ds {
				fmt.Fprintf(b, "| %s | %s | %s | %s | %d | %s / %s | %s %s | %s |\n", mp.A, mp.B, x.name, d.Variant, d.Units,
					countNum(d.AHigher), countNum(d.BHigher), signedOpt(d.DiffPP, 1), estCI(d.DiffPP, 1), testText(d.Test))
				if d.Shown {
					var what string
					if x.name == "accuracy" {
						what = fmt.Sprintf("%s is %s pp %s accurate than %s on %s", mp.A, fnum(math.Abs(d.DiffPP.Value), 1), moreLess(d.DiffPP.Value), mp.B, d.Variant)
					} else {
						what = fmt.Sprintf("%s's paired drop on %s is %s pp %s than %s's", mp.A, d.Variant, fnum(math.Abs(d.DiffPP.Value), 1), largerSmaller(d.DiffPP.Value), mp.B)
					}
					shown = append(shown, fmt.Sprintf("%s (%s %s, adjusted p = %s)", what, conf, ivText(d.DiffPP.CI, 1), pText(d.Test.PAdjusted)))
				}
			}
		}
	}
	if len(shown) == 0 {
		fmt.Fprintf(b, "\nNo difference between models is shown: no interval excludes 0 with an adjusted test at α = %s.\n", alphaText(alpha))
	} else {
		b.WriteString("\nDifferences shown (interval excludes 0, adjusted test at α):\n\n")
		for _, x := range shown {
			b.WriteString("- " + x + ".\n")
		}
	}
}

func moreLess(x float64) string {
	if x > 0 {
		return "more"
	}
	return "less"
}

func largerSmaller(x float64) string {
	if x > 0 {
		return "larger"
	}
	return "smaller"
}

func writeThresholds(b *strings.Builder, p summary.Params, conf string) {
	neg, strong := fnum(p.NegligibleDropPP, 1), fnum(p.StrongDropPP, 1)
	a := alphaText(p.Alpha)
	b.WriteString("\n## How the wording is decided\n\n")
	fmt.Fprintf(b, "Every verdict rests on the %s interval of the paired drop and on its sign-flip test after adjustment, never on the point estimate alone.\n\n", conf)
	fmt.Fprintf(b, "- *%s*: the interval's upper bound is below the negligible margin of %s pp (a variant that scored higher falls here too).\n", summary.VerdictNoDrop, neg)
	fmt.Fprintf(b, "- *%s*: the interval lies above 0 and below %s pp, and the adjusted test reaches α = %s: a drop is shown, a strong one ruled out.\n", summary.VerdictModerate, strong, a)
	fmt.Fprintf(b, "- *%s*: the interval lies above 0 and the adjusted test reaches α, but the interval reaches %s pp while its lower bound is below it.\n", summary.VerdictUnclearSize, strong)
	fmt.Fprintf(b, "- *%s*: the interval's lower bound is at least %s pp and the adjusted test reaches α.\n", summary.VerdictStrong, strong)
	fmt.Fprintf(b, "- *%s*: anything else: the interval includes 0 and reaches %s pp, or it lies above 0 but the adjusted test does not reach α, or no interval could be computed.\n", summary.VerdictInconclusive, neg)
	fmt.Fprintf(b, "- *%s*: in place of *%s* or *%s* when the minimum detectable drop is at or above the reference's accuracy (no drop there is could be detected) or none is detectable.\n", summary.VerdictUninformative, summary.VerdictInconclusive, summary.VerdictNoDrop)
	fmt.Fprintf(b, "- *%s*: base accuracy below %s%%; no robustness verdict.\n", summary.VerdictFloor, fnum(summary.FloorAccuracyPct, 0))
	if p.Primary != "" {
		fmt.Fprintf(b, "- A model's verdict is that of the primary variant %s, pre-specified before the run and tested alone at α; the other variants' verdicts are secondary (Holm among themselves).\n", p.Primary)
	} else {
		fmt.Fprintf(b, "- A model's verdict is the most severe of its variants' verdicts, each with its test Holm-adjusted across the model's variants, so picking the worst variant does not inflate the rate of false signals.\n")
	}
	fmt.Fprintf(b, "- A shift is meaningful when its whole interval lies beyond ±margin and its test, Holm-adjusted across the three measures and the variants, reaches α. The margin is %s between-template standard deviations of the measure on the reference side (a small standardized effect, Cohen 1988), at least %s bits for an entropy and %s for the DDC margin; the same margin applies within pairs both right and both wrong.\n",
		fnum(p.ShiftMarginSD, 1), fnum(p.EntropyShiftBits, 3), fnum(p.DDCMarginShift, 3))
	writeStabilityRule(b, p)
	fmt.Fprintf(b, "- A paired drop's interval is, from %d templates, the inverted sign-flip test on the template means, randomized at ties so that its level is exactly α. A limit in round brackets is itself excluded: the test rejects it but not the drops beside it. The interval excludes 0 exactly when that test rejects; its upper limit is raised to the skew-corrected t interval's where that is higher (a drop carried by a few templates skews the template means). Below %d templates, and when every template mean is equal, it is MOVER-Wilson: asymmetric near 0%% and 100%% accuracy and never [0, 0], even when every pair agrees. Its lower limit is lowered to the inverted sign-flip test's where that is lower, which changes no verdict. When every template gives the same value the other clustered intervals are degenerate and are not printed as certain. An accuracy then gets its Wilson interval, a difference between models the Wilson bounds of its two discordant shares (units treated as independent), and an interval that cannot be computed is shown as such.\n", p.FewTemplates, p.FewTemplates)
}

// verdictReason says which rule of stats.ClassifyDrop gave the verdict, with
// the numbers it rests on.
func verdictReason(pr *summary.Paired, verdict string, p summary.Params) string {
	neg, strong := fnum(p.NegligibleDropPP, 1), fnum(p.StrongDropPP, 1)
	a := alphaText(p.Alpha)
	d := pr.PairedDropPP
	var ci *summary.Interval
	if d != nil {
		ci = d.CI
	}
	switch verdict {
	case summary.VerdictNoDrop:
		out := "The interval's upper bound, " + fnum(ci.Hi, 1) + " pp, is below the negligible margin of " + neg + " pp: no drop of that size was detected."
		if ci.Hi < 0 {
			out += " The variant scored higher than base."
		}
		return out
	case summary.VerdictUninformative:
		mde := "none is detectable with these templates"
		if pr.Power != nil && pr.Power.MDEPP != nil {
			mde = "the minimum detectable drop, " + fnum(*pr.Power.MDEPP, 1) + " pp, is at or above the reference's accuracy, the largest drop there can be"
		}
		return "No drop this run could detect: " + mde + ". `fragility plan` sizes a run that could (more instances, or templates at a level the model solves)."
	case summary.VerdictInconclusive:
		switch {
		case ci == nil || pr.Test == nil:
			return "No interval could be computed, so nothing can be said either way."
		case ci.Excludes0() && ci.Lo >= 0 && !pr.Test.Reachable:
			return fmt.Sprintf("The interval lies above 0, but the adjusted sign-flip test cannot reach α = %s with %d templates: its smallest attainable p, %s, times the %d tests it is adjusted over, exceeds α. More templates or a pre-specified primary variant (`run --primary`) are needed to call it a signal.",
				alphaText(p.Alpha), pr.Test.Templates, pText(pr.Test.MinP), pr.Test.Family)
		case ci.Excludes0() && ci.Lo >= 0: // (0, hi] too
			return "The interval lies above 0, but the adjusted sign-flip test does not reach α = " + a + ": the drop is not shown."
		default:
			return "The interval includes 0 and its upper bound, " + fnum(ci.Hi, 1) + " pp, reaches the negligible margin of " + neg + " pp: a drop is neither shown nor ruled out."
		}
	case summary.VerdictModerate:
		return "The interval lies above 0 and below the strong threshold of " + strong + " pp, and the adjusted test reaches α = " + a + ": a drop is shown and a strong one ruled out."
	case summary.VerdictUnclearSize:
		return "The interval lies above 0 and the adjusted test reaches α = " + a + ", so a drop is shown; the interval reaches the strong threshold of " + strong + " pp while its lower bound, " + fnum(ci.Lo, 1) + " pp, is below it, so whether it is strong is open."
	case summary.VerdictStrong:
		return "The interval's lower bound, " + fnum(ci.Lo, 1) + " pp, clears the strong threshold of " + strong + " pp and the adjusted test reaches α = " + a + "."
	}
	return ""
}

// powerSentence states the minimum detectable drop of a variant's pairs.
func powerSentence(pw *summary.Power) string {
	if pw.MDEPP == nil && pw.Templates >= 2 {
		return fmt.Sprintf("No drop is detectable at this size: only %d of the %d templates were solved in any pair, too few for the sign-flip test to reach α = %s.",
			pw.InformativeTemplates, pw.Templates, alphaText(pw.Alpha))
	}
	if pw.MDEPP == nil {
		return "No minimum detectable drop can be stated with fewer than 2 templates."
	}
	src := "the variance components observed in this run"
	if pw.Source != "observed" {
		src = "the planning defaults for the variance components, as the pairs show no variation to estimate them from"
	}
	size := fmt.Sprintf("At this size (%d templates, %s distinct pairs per template)", pw.Templates, fnum(pw.PairsPerTemplate, 1))
	out := fmt.Sprintf("%s a drop must be about %s pp for the test at α = %s to detect it with %s power (from %s).",
		size, fnum(*pw.MDEPP, 1), alphaText(pw.Alpha), fnum(100*pw.Power, 0)+"%", src)
	if *pw.MDEPP > 100 {
		// A number above 100 pp read as a drop; it is only the formula's.
		out = fmt.Sprintf("%s no drop, not even one of 100 pp, is large enough for the test at α = %s to detect it with %s power (from %s). The minimum detectable drop's formula gives %s pp, above what a drop can be.",
			size, alphaText(pw.Alpha), fnum(100*pw.Power, 0)+"%", src, fnum(*pw.MDEPP, 0))
	}
	if !pw.Attainable {
		out += " The sign-flip test cannot reach that level at all with this many templates."
	}
	return out
}

// budgetSentence says what the output budget did to a variant's pairs: when
// the two sides' cut shares differ by more than the negligible margin, that
// the budget may carry the difference (and the verdict does not call a
// drop shown); and the paired drop on the pairs finished on both sides
// when some pair was cut.
func budgetSentence(pr *summary.Paired, p summary.Params, conf string) string {
	var out string
	if pr.BudgetConfounded {
		out = fmt.Sprintf(" **The budget may carry the difference:** the output budget cut %s%% of the reference's answers and %s%% of the variant's, more than %s pp apart, so no drop is called shown; raise --max-tokens.",
			fnum(pr.CutReferencePct, 1), fnum(pr.CutVariantPct, 1), fnum(p.NegligibleDropPP, 1))
	}
	if d := pr.FinishedDropPP; d != nil {
		out += fmt.Sprintf(" On the %d of %d pairs finished on both sides the paired drop is %s pp, %s CI %s (sign-flip p = %s, unadjusted).",
			pr.FinishedPairs, pr.Pairs, fnum(d.Value, 1), conf, ivOpt(d, 1), pText(pr.FinishedTest.P))
	}
	return out
}
