package report

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/compare"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/summary"
)

// richTrials is a two-model run over 16 templates × 15 instances: "Robust"
// answers every variant as it answers base except one flip each way
// (template 2 instance 4 base right → variant wrong, template 7 instance 3
// the reverse); "Fragile" solves base, half of symbolic and none of noop,
// with a large answer-entropy rise on noop. The DDC margin falls by about
// 0.05 on noop for both.
func richTrials() []results.Trial {
	var ts []results.Trial
	for _, m := range []struct{ path, name, quant string }{{"models/robust-q8_0.gguf", "Robust", "Q8_0"}, {"models/fragile-q4_k_m.gguf", "Fragile", "Q4_K_M"}} {
		fragile := m.name == "Fragile"
		for ti := range 16 {
			tpl := fmt.Sprintf("t%02d", ti)
			for inst := range 15 {
				baseOK := (ti+inst)%5 != 0
				for _, v := range []string{"noop", "base", "symbolic"} {
					ok := baseOK
					ent := 0.4 + 0.05*float64(ti%6) + 0.01*float64(inst%4)
					margin := 0.12 + 0.01*float64(ti%6)
					if fragile {
						switch v {
						case "noop":
							ok = false
							ent += 0.3 + 0.02*float64(inst%4) + 0.01*float64(ti)
						case "symbolic":
							ok = baseOK && inst%2 == 0
						}
					} else if v != "base" {
						ent += 0.004
						if (ti == 2 && inst == 4) || (ti == 7 && inst == 3) {
							ok = !ok
						}
					}
					if v == "noop" {
						margin -= 0.05 + 0.001*float64(ti)
					}
					steps := 2
					if ti >= 6 {
						steps = 3
					}
					rel := "sum"
					if ti%2 == 1 {
						rel = "ratio"
					}
					ts = append(ts, results.Trial{
						ItemID: m.name + "/" + tpl + "/" + v + "/" + strconv.Itoa(inst), ModelPath: m.path, ModelName: m.name, Quantization: m.quant,
						TemplateID: tpl, Relation: rel, Steps: steps, Variant: v, Instance: inst,
						Correct: ok, ExpectedAnywhere: ok || inst == 1, Tokens: 50,
						AnswerEntropyMean: ent, EntropyMean: 1 + ent/2, DDCTop: "500", DDCRunnerUp: "300", DDCMargin: margin,
					})
				}
			}
		}
	}
	ts[5].SkipReason = "prompt too long"
	return ts
}

var reNarrativeNumber = regexp.MustCompile(`[+-]?[0-9]+(?:\.[0-9]+)?`)

// numbersIn returns the numbers in text that are not glued to a preceding
// letter, digit, point or underscore ("Q8_0", "t3", "q4" are names).
func numbersIn(text string) []string {
	var out []string
	for _, loc := range reNarrativeNumber.FindAllStringIndex(text, -1) {
		if loc[0] > 0 {
			c := text[loc[0]-1]
			if c == '.' || c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') {
				continue
			}
		}
		out = append(out, strings.TrimPrefix(text[loc[0]:loc[1]], "+"))
	}
	return out
}

// summaryNumbers collects every number in the summary's JSON, formatted with
// 0 to 4 decimals (and in absolute value), every number written inside its
// strings, and the lengths of its arrays.
func summaryNumbers(t *testing.T, s *summary.Summary) map[string]bool {
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	addNum := func(x float64) {
		for d := 0; d <= 4; d++ {
			set[strconv.FormatFloat(x, 'f', d, 64)] = true
			set[strconv.FormatFloat(math.Abs(x), 'f', d, 64)] = true
		}
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case float64:
			addNum(x)
		case string:
			for _, n := range numbersIn(x) {
				set[n] = true
			}
		case []any:
			addNum(float64(len(x)))
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	addNum(100 * s.Params.Confidence) // "95%"
	addNum(100 * s.Params.Power)      // "80%"
	return set
}

// TestNarrativeNumbersFromSummary: every number in the narrative, outside the
// fixed opening paragraph and its citation, is a number of the summary.
func TestNarrativeNumbersFromSummary(t *testing.T) {
	s, err := summary.Summarize(richTrials(), summary.Params{BootstrapResamples: 300, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	md := Narrative(s)
	if !strings.Contains(md, narrativeIntro) {
		t.Fatal("opening paragraph missing")
	}
	body := strings.Replace(md, narrativeIntro, "", 1)
	allowed := summaryNumbers(t, s)
	nums := numbersIn(body)
	if len(nums) < 100 {
		t.Fatalf("only %d numbers in the narrative", len(nums))
	}
	for _, n := range nums {
		if !allowed[n] {
			t.Errorf("narrative number %s is not in the summary", n)
		}
	}
	if Narrative(s) != md {
		t.Fatal("narrative is not deterministic")
	}

	// Changing a summary number changes the narrative accordingly.
	s.Models[1].Variants[2].DropPP.Value = 77.77
	if !strings.Contains(Narrative(s), "77.8") {
		t.Error("narrative does not print the summary's drop")
	}
}

// TestNarrativeContent checks the verdicts, labels and statements against
// the summary.
func TestNarrativeContent(t *testing.T) {
	s, err := summary.Summarize(richTrials(), summary.Params{BootstrapResamples: 300, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	md := Narrative(s)
	robust, fragile := s.Models[0], s.Models[1]
	if robust.Label != "Robust Q8_0" || fragile.Label != "Fragile Q4_K_M" {
		t.Fatalf("labels %q %q", robust.Label, fragile.Label)
	}
	if robust.Verdict != summary.VerdictNoDrop || fragile.Verdict != summary.VerdictStrong || fragile.VerdictVariant != "noop" {
		t.Fatalf("verdicts %q, %q (%s)", robust.Verdict, fragile.Verdict, fragile.VerdictVariant)
	}
	noop := fragile.Variant("noop")
	base := fragile.Variant("base")
	rsym := robust.Variant("symbolic")
	for _, want := range []string{
		"## Robust Q8_0", "## Fragile Q4_K_M",
		"**Verdict: no detectable drop** (the drop on ",
		"**Verdict: strong fragility signal** (the drop on noop, the most severe of its variants after Holm's adjustment; among equally severe verdicts, the larger paired drop, then the smaller unadjusted p, then a variant over the variant it is paired with)",
		// Accuracy with k/n distinct prompts, the drops in pp and the relative drop, labelled.
		"Base accuracy " + fnum(base.AccuracyPct.Value, 1) + "% (" + countNum(base.K) + "/" + strconv.Itoa(base.N) + ")",
		"a paired drop of " + fnum(noop.Paired.PairedDropPP.Value, 1) + " pp, 95% CI " + ivText(noop.Paired.PairedDropPP.CI, 1),
		"| noop | 0.0%, all trials wrong (0/" + strconv.Itoa(noop.N) + ")",
		// Flip rates beside the verdict.
		"base right → variant wrong in " + countNum(noop.Paired.BaseOnly.Count) + " of " + strconv.Itoa(noop.Paired.Pairs) + " distinct pairs",
		"The interval's upper bound, " + fnum(rsym.Paired.PairedDropPP.CI.Hi, 1) + " pp, is below the negligible margin of 3.0 pp",
		// The large answer-entropy rise on noop is flagged; the robust model's 0.004-bit shift is not.
		"answer-token entropy rises by " + fnum(noop.AnswerEntropyShift.Shift.Value, 3) + " bits on noop",
		"- No detectable drop on any variant: Robust Q8_0.",
		"- A fragility signal on at least one variant: Fragile Q4_K_M (strong fragility signal on noop).",
		"### Difficulty: accuracy by steps", "### Difficulty: accuracy by relation",
		"### Paired differences between models",
		"B = 300 resamples and seed 11",
		"G = 16 templates",
		"**Few templates: G = 16, below 20.**",
		"at 80% power",
		"1 skipped",
		// The picked variant's widened interval, the test across models,
		// the shifts within pairs both right and both wrong, and margins.
		"Picked as the most severe of 2 variants, its paired drop's interval widened for the choice (cluster-t, Bonferroni 1 − α/2) is " + ivText(robust.VerdictPickedCI, 1),
		"Across the 2 models' verdicts (Holm over each model's adjusted p): p = " + pText(*fragile.VerdictPAcrossModels) + ".",
		"| noop | both right | ",
		"Margins (the larger of the floor and 0.2 between-template SDs",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("narrative lacks %q", want)
		}
	}
	for _, not := range []string{"computing, not pattern-matching", "not tested here", "[0.0, 0.0]"} {
		if strings.Contains(md, not) {
			t.Errorf("narrative still says %q", not)
		}
	}
	rnoop := robust.Variant("noop")
	if rnoop.AnswerEntropyShift.Meaningful || !noop.AnswerEntropyShift.Meaningful {
		t.Errorf("entropy flags: robust %+v, fragile %+v", rnoop.AnswerEntropyShift, noop.AnswerEntropyShift)
	}
	if !rnoop.DDCMarginShift.Meaningful || !strings.Contains(md, "DDC margin falls by "+fnum(-rnoop.DDCMarginShift.Shift.Value, 3)+" on noop") {
		t.Errorf("DDC margin shift not reported: %+v", rnoop.DDCMarginShift)
	}
	// The robust model section flags no entropy shift.
	rsec := md[strings.Index(md, "## Robust Q8_0"):strings.Index(md, "## Fragile Q4_K_M")]
	if strings.Contains(rsec, "entropy rises") || strings.Contains(rsec, "entropy falls") {
		t.Error("robust model's 0.004-bit entropy shift flagged")
	}
}

func TestNarrativeEdgeCases(t *testing.T) {
	empty, _ := summary.Summarize(nil, summary.Params{})
	if md := Narrative(empty); !strings.Contains(md, "No trials") {
		t.Errorf("empty: %s", md)
	}
	// Only base: no verdict, no pairs, but accuracy.
	var ts []results.Trial
	for _, x := range richTrials() {
		if x.Variant == "base" && x.ModelName == "Robust" {
			ts = append(ts, x)
		}
	}
	s, err := summary.Summarize(ts, summary.Params{BootstrapResamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	md := Narrative(s)
	if !strings.Contains(md, "No verdict") || strings.Contains(md, "Cross-model") {
		t.Errorf("base only:\n%s", md)
	}
	// No base: stated plainly.
	ts = ts[:0]
	for _, x := range richTrials() {
		if x.Variant == "noop" {
			ts = append(ts, x)
		}
	}
	s, _ = summary.Summarize(ts, summary.Params{BootstrapResamples: 50})
	if md := Narrative(s); !strings.Contains(md, "No base variant") {
		t.Errorf("no base:\n%s", md)
	}
	// An interrupted run whose base items have not finished yet is not a
	// run without base.
	s.RunStatus = "interrupted"
	if md := Narrative(s); !strings.Contains(md, "No base trial yet") || strings.Contains(md, "No base variant") {
		t.Errorf("no base yet in an interrupted run:\n%s", md)
	}
}

// TestNarrativeRunStatusAndOverrides: the narrative says when the run it
// renders is not complete and how many trials label overrides changed.
func TestNarrativeRunStatusAndOverrides(t *testing.T) {
	s := &summary.Summary{RunStatus: "interrupted", Overrides: &summary.OverrideCounts{File: "o.jsonl", Overridden: 2, Excluded: 2}}
	n := Narrative(s)
	for _, w := range []string{`**This run is not complete** (status "interrupted"`, "2 trials scored against a corrected answer, 2 excluded"} {
		if !strings.Contains(n, w) {
			t.Errorf("narrative lacks %q:\n%s", w, n)
		}
	}
	if strings.Contains(Narrative(&summary.Summary{}), "not complete") {
		t.Error("a complete run is said to be incomplete")
	}
}

// TestCompareNarrative: compare.md has its heading and a row per variant.
func TestCompareNarrative(t *testing.T) {
	c := &compare.Comparison{Variants: []string{"base"}, ReferenceRule: "the first model",
		Models: []compare.ModelComparison{{Path: "a.gguf", Label: "a", Reference: true, Accuracy: []compare.VariantAccuracy{{Variant: "base", K: 1, N: 2}}}}}
	md := CompareNarrative(c)
	if !strings.Contains(md, "## Quantization comparison") || !strings.Contains(md, "| base |") {
		t.Errorf("compare.md:\n%s", md)
	}
}

// TestNarrativeBudgetCuts: the cut share per variant is printed, called out
// from 10%, and the verdict says when the two sides' cut shares differ by
// more than the margin, with the drop on the pairs finished on both sides.
func TestNarrativeBudgetCuts(t *testing.T) {
	m := &summary.ModelSummary{Variants: []summary.VariantSummary{
		{Variant: "base", Scored: 20, CutByBudget: 1}, {Variant: "noop", Scored: 20, CutByBudget: 6}}}
	var b strings.Builder
	writeCuts(&b, m)
	if s := b.String(); !strings.Contains(s, "base 1/20 (5%), noop 6/20 (30%)") || !strings.Contains(s, "That is enough to matter") {
		t.Errorf("cuts: %q", s)
	}
	p := summary.DefaultParams(1)
	pr := &summary.Paired{Pairs: 20, CutReferencePct: 5, CutVariantPct: 30, BudgetConfounded: true, FinishedPairs: 14,
		FinishedDropPP: &summary.Estimate{Value: 2.5, CI: &summary.Interval{Lo: -4, Hi: 9}}, FinishedTest: &summary.Test{P: 0.4}}
	if s := budgetSentence(pr, p, "95%"); !strings.Contains(s, "cut 5.0% of the reference's answers and 30.0% of the variant's") ||
		!strings.Contains(s, "no drop is called shown") || !strings.Contains(s, "On the 14 of 20 pairs finished on both sides the paired drop is 2.5 pp") {
		t.Errorf("verdict sentence: %q", s)
	}
	if s := budgetSentence(&summary.Paired{Pairs: 20, FinishedPairs: 20}, p, "95%"); s != "" {
		t.Errorf("nothing cut: %q", s)
	}
	b.Reset()
	writeCuts(&b, &summary.ModelSummary{Variants: []summary.VariantSummary{{Variant: "base", Scored: 3}}})
	if b.Len() != 0 {
		t.Errorf("no cut: %q", b.String())
	}
}

// TestPowerSentenceAboveHundred: a minimum detectable drop above 100 pp is
// not printed as a drop (a partial demo printed "about 172.9 pp").
func TestPowerSentenceAboveHundred(t *testing.T) {
	mde := 172.9
	pw := &summary.Power{MDEPP: &mde, Templates: 6, PairsPerTemplate: 1, Alpha: 0.025, Power: 0.8, Source: "observed", Attainable: true}
	got := powerSentence(pw)
	if strings.Contains(got, "must be about") || !strings.Contains(got, "no drop, not even one of 100 pp,") || !strings.Contains(got, "gives 173 pp") {
		t.Errorf("powerSentence: %s", got)
	}
	if c := mdeText(pw); c != "> 100 (none detectable)" {
		t.Errorf("mdeText: %q", c)
	}
	mde = 16.5
	if got := powerSentence(pw); !strings.Contains(got, "a drop must be about 16.5 pp") {
		t.Errorf("powerSentence at 16.5: %s", got)
	}
}
