package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
)

// embeddedFile returns the bytes a page embeds in its script element id
// (a JSON string of base64).
func embeddedFile(t *testing.T, page, id string) []byte {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="` + id + `">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no %s script in the page", id)
	}
	var b64 string
	if err := json.Unmarshal([]byte(m[1]), &b64); err != nil {
		t.Fatalf("%s is not a JSON string: %v", id, err)
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("%s is not base64: %v", id, err)
	}
	return b
}

// TestHeadlineFirst checks that the page opens with the headline box (each
// model's verdict, accuracies, paired drop, cut share) before the narrative
// and the run table, folds the narrative's method sections and not the
// models', embeds narrative.md and results.csv byte for byte, links every
// file of the run, and gives the trial table its cut, error and diff
// fields.
func TestHeadlineFirst(t *testing.T) {
	dir := t.TempDir()
	trials := defaultSynth().write(t, dir)
	if err := os.WriteFile(filepath.Join(dir, rundir.FileLock), []byte("123\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path, err := WriteHTML(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	page := string(data)
	h, n, r := strings.Index(page, `id="headline"`), strings.Index(page, `id="narrative"`), strings.Index(page, `<section id="run">`)
	if h < 0 || n < h || r < n {
		t.Errorf("section order: headline at %d, narrative at %d, run table at %d; want headline first, run table after the narrative", h, n, r)
	}
	box := page[h:n]
	for _, want := range []string{"Q4_K_M: <span class=\"verdict\">", "Q8_0: <span class=\"verdict\">", "noop <span class=\"muted\">vs base", " → ", "paired drop, reference − variant", "cut by the budget", "Copy narrative", "Export CSV",
		"Intervals: paired drop: ", "answers changed: korn-graubard"} {
		if !strings.Contains(box, want) {
			t.Errorf("headline box lacks %q", want)
		}
	}
	// A drop is said in words, so that its sign cannot be read as a gain,
	// and the interval's method is named once below the table, not in
	// every cell.
	if !regexp.MustCompile(`<strong>(drop of|gain of|no change \()\d+\.\d pp\)?</strong> [\[(]-?\d+\.\d, -?\d+\.\d[\])]</td>`).MatchString(box) {
		t.Errorf("headline box: no paired drop in words followed by its interval alone:\n%s", box)
	}
	for _, cell := range regexp.MustCompile(`<td>[^<]*</td>`).FindAllString(box, -1) {
		if strings.Contains(cell, "korn-graubard") || strings.Contains(cell, "sign-flip") {
			t.Errorf("a headline cell names its interval's method: %s", cell)
		}
	}
	// A sentence in plain words says what the drop verdict rests on, and
	// the table's stability cell how many pairs were left out.
	if !regexp.MustCompile(`<p class="plain">Accuracy \d+\.\d% \(\d+/\d+\) on \w+ and \d+\.\d% \(\d+/\d+\) on [\w-]+: (a paired drop of|a paired gain of|no paired change) [^;]*; the drop&#39;s verdict: [a-z ]+\.`).MatchString(box) {
		t.Errorf("headline box: no plain sentence on the drop verdict:\n%s", box)
	}
	// A cut share flagged as higher than the reference's says so in the
	// cell, not only in a tooltip.
	if strings.Count(box, `class="warn"`) != strings.Count(box, "more cut than its reference: part of a drop may be the budget's") {
		t.Errorf("headline box: a flagged cut share without its visible note:\n%s", box)
	}
	if strings.Contains(page, `href="`+rundir.FileLock+`"`) {
		t.Error("the page lists the run lock among the run's files")
	}
	// Every answers-changed share in the box is one of the narrative's
	// table, to its decimal ("85.0% [70.2, 94.3]", not "85% [70, 94]").
	narr, _ := os.ReadFile(filepath.Join(dir, rundir.FileNarrative))
	shares := regexp.MustCompile(`changed \((\d+\.\d% \[-?\d+\.\d, -?\d+\.\d\])`).FindAllStringSubmatch(box, -1)
	if len(shares) == 0 {
		t.Error("headline box: no answers-changed share with one decimal")
	}
	for _, m := range shares {
		if !strings.Contains(string(narr), "("+m[1]+" korn-graubard)") {
			t.Errorf("headline box's answers-changed share %q is not in the narrative's table", m[1])
		}
	}
	// The synthetic run's wrong answers of instance 1 are cut: 2 of 8 scored
	// base trials of each model (4 templates × 2 instances, 1 in 4 wrong).
	if !regexp.MustCompile(`\d+/8 \(\d+%\) → \d+/8 \(\d+%\)`).MatchString(box) {
		t.Errorf("headline box has no cut share k/8 → k/8:\n%s", box)
	}
	for _, f := range []string{rundir.FileNarrative, rundir.FileResults, rundir.FileSummary, rundir.FileTraces} {
		if !strings.Contains(box, `<a href="`+f+`">`) {
			t.Errorf("no link to %s", f)
		}
	}
	if !regexp.MustCompile(`<details class="nsec"><summary>What this probe tests</summary>`).MatchString(page) ||
		!strings.Contains(page, `<details class="nsec" open><summary>Q4_K_M</summary>`) {
		t.Error("the method sections are not folded or a model's section is not open")
	}
	for id, name := range map[string]string{"narrative-md": rundir.FileNarrative, "results-csv": rundir.FileResults} {
		want, _ := os.ReadFile(filepath.Join(dir, name))
		if got := embeddedFile(t, page, id); !bytes.Equal(got, want) || len(want) == 0 {
			t.Errorf("embedded %s: %d bytes, differs from the file's %d", name, len(got), len(want))
		}
	}
	d := tableOf(t, page)
	cut, diffs := 0, 0
	for _, row := range d.Rows {
		cut += row.Cut
		if row.Diff != nil {
			diffs++
			if row.Ref != "base" || d.Variants[row.Variant] == "base" {
				t.Errorf("%s: diff against %q", row.ID, row.Ref)
			}
		}
		if row.Correct == 0 && row.Error == "" {
			t.Errorf("%s: wrong answer without its error kind", row.ID)
		}
	}
	wantCut := 0
	for _, tr := range trials {
		if tr.StopReason == "max_tokens" {
			wantCut++
		}
	}
	if cut != wantCut || cut == 0 {
		t.Errorf("cut rows: %d, want %d", cut, wantCut)
	}
	if want := len(trials) * 2 / 3; diffs != want {
		t.Errorf("rows with a diff against base: %d, want %d (every non-base trial)", diffs, want)
	}
}

// TestEmbedCap checks that a results.csv over Options.MaxEmbedBytes is not
// embedded (the Export button then takes the file beside the page).
func TestEmbedCap(t *testing.T) {
	dir := t.TempDir()
	defaultSynth().write(t, dir)
	var b bytes.Buffer
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := Render(&b, r, Options{MaxEmbedBytes: 100}); err != nil {
		t.Fatal(err)
	}
	if got := embeddedFile(t, b.String(), "results-csv"); len(got) != 0 {
		t.Errorf("a results.csv over the cap was embedded (%d bytes)", len(got))
	}
	if got := embeddedFile(t, b.String(), "narrative-md"); len(got) == 0 {
		t.Error("narrative.md was not embedded")
	}
}

// TestPlotAxes checks the drop axis labels 0 and the strong threshold at
// any range, and that the answer-entropy scale keeps 0 bits on the axis and
// spreads small entropies apart.
func TestPlotAxes(t *testing.T) {
	for _, r := range [][2]float64{{-9.5, 17.6}, {-45, 80}, {-2, 3}, {-5, 100}} {
		labels := map[string]bool{}
		for _, tk := range dropTicks(10).Ticks(r[0], r[1]) {
			if tk.Label != "" {
				labels[tk.Label] = true
			}
		}
		if !labels["0"] || (r[1] >= 10 && !labels["10"]) {
			t.Errorf("drop axis %v: labels %v lack 0 or 10", r, labels)
		}
	}
	s := offsetLog{}
	if lo, hi := s.Normalize(0, 4, 0), s.Normalize(0, 4, 4); lo != 0 || hi != 1 {
		t.Errorf("entropy scale maps [0, 4] to [%g, %g]", lo, hi)
	}
	// On a linear axis 0.01 and 0.1 bits sit within 2.5% of its height;
	// here they are a decade apart.
	if d := s.Normalize(0, 4, 0.1) - s.Normalize(0, 4, 0.01); d < 0.2 {
		t.Errorf("entropy scale: 0.01 and 0.1 bits only %.3f of the axis apart", d)
	}
}

// TestReferencesText: captions name each paired variant's reference, so a
// variant compared with its drawn instance is not described as compared
// with base; and a drop is said in words whatever its sign.
func TestReferencesText(t *testing.T) {
	s := &summary.Summary{Models: []summary.ModelSummary{{Variants: []summary.VariantSummary{
		{Variant: "base"},
		{Variant: "symbolic", Paired: &summary.Paired{Reference: "base"}},
		{Variant: "noop-seeming", Paired: &summary.Paired{Reference: "symbolic"}},
	}}}}
	if got := referencesText(s); !strings.Contains(got, "except noop-seeming against symbolic") || strings.Count(got, "against") != 1 {
		t.Errorf("referencesText = %q", got)
	}
	for _, text := range []string{dropText(s), pairsText(s)} {
		if !strings.Contains(text, "reference/variant") || !strings.Contains(text, "noop-seeming against symbolic") {
			t.Errorf("caption text does not name the references: %q", text)
		}
	}
	s.Models[0].Variants = s.Models[0].Variants[:2]
	if got := referencesText(s); got != "; the reference is base" {
		t.Errorf("every variant against base: %q", got)
	}
	for x, want := range map[float64]string{4.44: "drop of 4.4 pp", -1.5: "gain of 1.5 pp", 0.01: "no change (0.0 pp)", -0.04: "no change (0.0 pp)"} {
		if got := dropWords(x); got != want {
			t.Errorf("dropWords(%v) = %q, want %q", x, got, want)
		}
	}
	for x, want := range map[float64]string{4.44: "a paired drop of 4.4 pp", -1.5: "a paired gain of 1.5 pp", 0.01: "no paired change (0.0 pp)"} {
		if got := pairedWords(x); got != want {
			t.Errorf("pairedWords(%v) = %q, want %q", x, got, want)
		}
	}
	// A gain's interval is the gain's: the drop's negated (round-4 retry:
	// "gain of 15.9 pp [-31.8, 0.0]").
	for _, c := range []struct {
		e    summary.Estimate
		want string
	}{
		{summary.Estimate{Value: -15.9, CI: &summary.Interval{Lo: -31.8, Hi: 0}}, "[0.0, 31.8]"},
		{summary.Estimate{Value: -15.9, CI: &summary.Interval{Lo: -31.8, Hi: 0, HiOpen: true}}, "(0.0, 31.8]"},
		{summary.Estimate{Value: 11.4, CI: &summary.Interval{Lo: -4.5, Hi: 27.4}}, "[-4.5, 27.4]"},
	} {
		if got := dropBoxCI(&c.e); got != c.want {
			t.Errorf("dropBoxCI(%v, %+v) = %q, want %q", c.e.Value, *c.e.CI, got, c.want)
		}
	}
}

// TestPlainWords: the headline's plain sentence states the stability
// verdict's share with its interval and the drop verdict's accuracies,
// drop and verdict, with the demo's numbers.
func TestPlainWords(t *testing.T) {
	pct := func(v float64) *summary.Estimate { return &summary.Estimate{Value: v} }
	m := &summary.ModelSummary{Verdict: "inconclusive", VerdictVariant: "symbolic",
		Stability: &summary.StabilityVerdict{Verdict: summary.StabilityUnstable, Variant: "noop-seeming", LossPct: ptr(40.0), LossPairs: 10,
			PlaceboLossPct: ptr(10.0), PlaceboLossPairs: 10, Excess: &summary.StabilityExcess{Pairs: 10, ExcessPP: &summary.Estimate{Value: 30, CI: &summary.Interval{Lo: 4.1, Hi: 55.9}}}},
		Variants: []summary.VariantSummary{
			{Variant: "base", N: 68, K: 12, AccuracyPct: pct(17.647)},
			{Variant: "symbolic", N: 68, K: 9, AccuracyPct: pct(13.235),
				Paired: &summary.Paired{PairedDropPP: &summary.Estimate{Value: 4.41, CI: &summary.Interval{Lo: -5.7, Hi: 14.3}}}},
			{Variant: "noop-seeming", N: 68, K: 6, AccuracyPct: pct(8.8), Paired: &summary.Paired{Reference: "symbolic", AnswerChanged: &summary.Rate{Pairs: 40}}},
		}}
	want := "Of the problems the model solved, the noop-seeming change lost 40.0% and the placebo (the same problem in other words of the instruction) 10.0%: 30.0 pp more (CI [4.1, 55.9])." +
		" Accuracy 17.6% (12/68) on base and 13.2% (9/68) on symbolic: a paired drop of 4.4 pp [-5.7, 14.3]; the drop's verdict: inconclusive."
	if got := plainWords(m); got != want {
		t.Errorf("plainWords:\n got %q\nwant %q", got, want)
	}
	m.Stability.Verdict = summary.StabilityInconclusive
	if got := plainWords(m); strings.Contains(got, "the placebo") {
		t.Errorf("an inconclusive stability verdict is stated as a finding: %q", got)
	}
}

func ptr(v float64) *float64 { return &v }

// TestHeadlineOnWhy: the headline says why its drop is judged on a
// variant: the pre-specified primary variant, or the one the verdict
// picked among several.
func TestHeadlineOnWhy(t *testing.T) {
	s := &summary.Summary{Models: []summary.ModelSummary{{Label: "m", Verdict: "drop inconclusive", VerdictVariant: "noop-seeming", Variants: []summary.VariantSummary{
		{Variant: "symbolic"},
		{Variant: "noop-seeming", Primary: true},
	}}}}
	if got := headlines(s)[0].OnWhy; got != "the pre-specified primary variant" {
		t.Errorf("primary variant: OnWhy = %q", got)
	}
	s.Models[0].Variants[1].Primary = false
	if got := headlines(s)[0].OnWhy; got != "the variant the verdict picked" {
		t.Errorf("picked variant: OnWhy = %q", got)
	}
	s.Models[0].Verdict = summary.VerdictFloor
	if got := headlines(s)[0].On; got != "" {
		t.Errorf("a floor verdict names the variant %q it judged", got)
	}
}

// TestFloorAdvice: at the floor the advice follows the cause: the budget
// when it cut a tenth or more of base's answers, else the model.
func TestFloorAdvice(t *testing.T) {
	if got := floorAdvice(&summary.VariantSummary{Scored: 20, CutByBudget: 5}); !strings.Contains(got, "raise --max-tokens") || strings.Contains(got, "stronger model") {
		t.Errorf("budget-cut base: %q", got)
	}
	if got := floorAdvice(&summary.VariantSummary{Scored: 20, CutByBudget: 1}); !strings.Contains(got, "stronger model") {
		t.Errorf("base not cut: %q", got)
	}
}

// TestFloorLines: under a floor verdict the block names no variant it
// judged: it gives every variant's accuracy and answer-first shift, and
// the budget's advice.
func TestFloorLines(t *testing.T) {
	shift := func(x float64) *summary.AnswerLogProbShift {
		return &summary.AnswerLogProbShift{Shift: &summary.Estimate{Value: x}}
	}
	m := &summary.ModelSummary{Label: "m", Verdict: summary.VerdictFloor, VerdictVariant: "symbolic", Variants: []summary.VariantSummary{
		{Variant: "base", K: 0, N: 3, Scored: 3, CutByBudget: 3},
		{Variant: "symbolic", K: 0, N: 3, AnswerFirstLogProbShift: shift(1.15)},
		{Variant: "noop-seeming", K: 0, N: 3, AnswerFirstLogProbShift: shift(0.5)},
	}}
	got := strings.Join(verdictLines(m), "\n")
	for _, want := range []string{"on base, n/a (0/3) on symbolic, n/a (0/3) on noop-seeming: too few solved problems", "1.15 on symbolic, 0.50 on noop-seeming", "raise --max-tokens"} {
		if !strings.Contains(got, want) {
			t.Errorf("floor lines %q: no %q", got, want)
		}
	}
	if strings.Contains(got, "paired") {
		t.Errorf("floor lines read a paired drop: %q", got)
	}
	if got := floorCause(m); got != ", with 100% of base's answers cut by the output budget" {
		t.Errorf("floor cause: %q", got)
	}
	// Every variant cut: the budget line names them all.
	for i := range m.Variants {
		m.Variants[i].Scored, m.Variants[i].CutByBudget = 3, 3
	}
	if got := budgetWarning(m, nil); !strings.Contains(got, "it cut the answers of every variant: 100% on base, 100% on symbolic, 100% on noop-seeming; ") {
		t.Errorf("budget line, every variant cut: %q", got)
	}
	m.Variants[2].CutByBudget = 0
	if got := budgetWarning(m, nil); !strings.Contains(got, "it cut 100% of the answers on base, 100% on symbolic; ") {
		t.Errorf("budget line, two variants cut: %q", got)
	}
}

// TestNoVerdictReason: a model without a verdict says why.
func TestNoVerdictReason(t *testing.T) {
	s := &summary.Summary{Models: []summary.ModelSummary{{Label: "m", Variants: []summary.VariantSummary{{Variant: "base"}}}}}
	if got := Verdicts(s); !strings.Contains(got, "**m: no verdict: only base was run") {
		t.Errorf("base only: %q", got)
	}
}

// TestCutWarnMargin (round-4 retry): the headline's budget flag follows
// the verdicts' budget rule (more than the margin, the variant's side cut
// more), not any difference: 0/44 → 1/44 (2.3 pp) is not flagged.
func TestCutWarnMargin(t *testing.T) {
	ref := &summary.VariantSummary{Variant: "symbolic", Scored: 44}
	for _, c := range []struct {
		p    summary.Paired
		want bool
	}{
		{summary.Paired{CutReferencePct: 0, CutVariantPct: 2.3}, false},
		{summary.Paired{CutReferencePct: 2.3, CutVariantPct: 6.8, BudgetConfounded: true}, true},
		{summary.Paired{CutReferencePct: 6.8, CutVariantPct: 2.3, BudgetConfounded: true}, false},
	} {
		v := &summary.VariantSummary{Variant: "noop-seeming", Scored: 44, Paired: &c.p}
		if got := headRowOf(ref, v).CutWarn; got != c.want {
			t.Errorf("%+v: CutWarn %v, want %v", c.p, got, c.want)
		}
	}
}
