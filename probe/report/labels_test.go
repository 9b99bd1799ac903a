package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
)

// sectionOf returns the text of narrative from start up to the next line
// that starts with end (or the end of the text).
func sectionOf(narrative, start, end string) string {
	i := strings.Index(narrative, start)
	if i < 0 {
		return ""
	}
	rest := narrative[i+len(start):]
	if j := strings.Index(rest, "\n"+end); j >= 0 {
		rest = rest[:j]
	}
	return start + rest
}

// TestGroupDropTableLabelled: every cell of the tables "Robustness within
// each ... group" prints the group's reported paired-drop interval with its
// method named (cluster-t included, were there one), the rows of groups
// from FewTemplates templates the sign-flip inversion's as the variant's own
// paired drop (never an unlabelled cluster-t), the others (and those with
// the same drop in every template) MOVER-Wilson;
// the flips are named against the reference.
func TestGroupDropTableLabelled(t *testing.T) {
	// 16 templates: steps groups of 6 and 10, relation groups of 8.
	s, err := summary.Summarize(richTrials(), summary.Params{BootstrapResamples: 50, Seed: 11, FewTemplates: 8})
	if err != nil {
		t.Fatal(err)
	}
	text := Narrative(s)
	rows, signFlip := 0, 0
	for mi := range s.Models {
		m := &s.Models[mi]
		sec := sectionOf(text, "## "+m.Label+"\n", "## ")
		for _, g := range m.Difficulty {
			if g.Pairs == 0 || g.Axis == "level" {
				continue
			}
			e := g.PairedDropPP
			if e == nil || e.CI == nil {
				t.Fatalf("%s %s/%s %s: no paired-drop interval", m.Label, g.Axis, g.Group, g.Variant)
			}
			want := "| " + g.Group + " | " + g.Variant + " | "
			if g.Test == nil {
				t.Fatalf("%s %s/%s %s: no test of the group's drop", m.Label, g.Axis, g.Group, g.Variant)
			}
			cell := fnum(e.Value, 1) + " " + ivText(e.CI, 1) + " " + e.CI.Method + " | " + pText(g.Test.P) + " |"
			found := false
			for _, line := range strings.Split(sec, "\n") {
				if strings.HasPrefix(line, want) && strings.HasSuffix(line, cell) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s %s/%s %s: no row %q…%q in\n%s", m.Label, g.Axis, g.Group, g.Variant, want, cell, sec)
			}
			rows++
			switch {
			case e.Degenerate:
				// every template the same drop: MOVER-Wilson, as the variant's own
			case g.Templates >= 8 && e.CI.Method != summary.MethodSignFlipSkew && e.CI.Method != summary.MethodSignFlip:
				t.Errorf("%s %s/%s %s (%d templates): method %q, want the sign-flip inversion", m.Label, g.Axis, g.Group, g.Variant, g.Templates, e.CI.Method)
			case g.Templates < 8 && !strings.HasPrefix(e.CI.Method, summary.MethodMOVERWilson):
				t.Errorf("%s %s/%s %s (%d templates): method %q, want MOVER-Wilson", m.Label, g.Axis, g.Group, g.Variant, g.Templates, e.CI.Method)
			case g.Templates >= 8:
				signFlip++
			}
		}
	}
	if rows == 0 || signFlip == 0 {
		t.Errorf("%d group rows, %d of them sign-flip inversions", rows, signFlip)
	}
	for _, want := range []string{
		"| reference right → variant wrong | reference wrong → variant right | paired drop, pp [95% CI] |",
		"follows the rule of the variant's paired drop (under **Robustness** above) on the group's templates, so from 8 templates the inverted sign-flip test and below MOVER-Wilson; the method is named in each cell. Its p is the sign-flip test of the group's drop on the same sign vectors, so that from 8 templates the interval leaves 0 out exactly when p ≤ α.",
		"with the interval the verdict reads (its rule is under **Accuracy and drops** above)",
		"with its own interval. From 8 templates that interval is the inverted sign-flip test on the template means, randomized at ties (a limit in round brackets is itself excluded), its upper limit raised to the skew-corrected t's where higher. Below 8 it is MOVER-Wilson",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("narrative lacks %q", want)
		}
	}
	if strings.Contains(text, "| base right → variant wrong |") {
		t.Error("a table still names the flips against base where the reference may be another variant")
	}
}

// TestAccuracyDropNamed: the drop of the accuracy table is labelled as the
// difference of the accuracies over all prompts, not the verdict's, and the
// text names the interval the verdict reads (the paired drop's rule).
func TestAccuracyDropNamed(t *testing.T) {
	s, err := summary.Summarize(richTrials(), summary.Params{BootstrapResamples: 50, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	sec := sectionOf(Narrative(s), "### Accuracy and drops", "#")
	for _, want := range []string{
		"| accuracy drop (all prompts, not the verdict's), pp [95% CI] |",
		"the verdict reads the **paired drop** (matched pairs only, every template weighted equally), in the verdict and under **Robustness** below, with its own interval. From 20 templates that interval is the inverted sign-flip test",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("accuracy section lacks %q:\n%s", want, sec)
		}
	}
}

// TestRunTableVerdictIsHeadline: the models table of "Run and build" gives
// the verdict in the headline's words (with the stability verdict), the
// variant its drop rests on after it.
func TestRunTableVerdictIsHeadline(t *testing.T) {
	s := &summary.Summary{Models: []summary.ModelSummary{
		{Label: "a", Verdict: summary.VerdictInconclusive, Headline: "answers unstable under noop; drop inconclusive", VerdictVariant: "noop"},
		{Label: "b", Verdict: summary.VerdictInconclusive, VerdictVariant: "symbolic"},
	}}
	facts := modelFacts(&Run{Summary: s})
	if facts[0].Verdict != "answers unstable under noop; drop inconclusive" || facts[0].Worst != "noop" {
		t.Errorf("model a: verdict %q on %q, want the headline", facts[0].Verdict, facts[0].Worst)
	}
	if facts[1].Verdict != summary.VerdictInconclusive || facts[1].Worst != "symbolic" {
		t.Errorf("model b (no headline): verdict %q on %q", facts[1].Verdict, facts[1].Worst)
	}
}

// TestDocumentClustersNamed: a document run names its clusters items, not
// templates, where the narrative states their number.
func TestDocumentClustersNamed(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{rundir.FileManifest, rundir.FileResults} {
		b, err := os.ReadFile(filepath.Join("testdata", "runs", "docqa", f))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	if _, err := Rewrite(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.FileNarrative))
	must(t, err)
	text := string(b)
	for _, want := range []string{"G = 8 items.", "**Few items: G = 8, below 20.**", "smallest attainable p-value with 8 items"} {
		if !strings.Contains(text, want) {
			t.Errorf("document narrative lacks %q", want)
		}
	}
	for _, bad := range []string{"G = 8 templates", "Few templates:"} {
		if strings.Contains(text, bad) {
			t.Errorf("document narrative says %q", bad)
		}
	}
}

// TestOpenLimitPrintedAndRead: a paired drop whose randomized sign-flip
// interval is open at 0 prints "(0.0, …]", and an inconclusive verdict on
// it (adjusted test short of α) says the interval lies above 0, not that
// it includes 0.
func TestOpenLimitPrintedAndRead(t *testing.T) {
	iv := &summary.Interval{Lo: 0, Hi: 12.34, LoOpen: true, Method: summary.MethodSignFlipSkew}
	if got := ivText(iv, 1); got != "(0.0, 12.3]" {
		t.Errorf("open lower limit printed %q", got)
	}
	if got := ivText(&summary.Interval{Lo: -1, Hi: 3, HiOpen: true}, 1); got != "[-1.0, 3.0)" {
		t.Errorf("open upper limit printed %q", got)
	}
	if !iv.Excludes0() || (&summary.Interval{Lo: 0, Hi: 12.34}).Excludes0() {
		t.Error("Excludes0 does not read the open limit")
	}
	pr := &summary.Paired{PairedDropPP: &summary.Estimate{Value: 6, CI: iv},
		Test: &summary.Test{P: 0.04, PAdjusted: 0.08, Reachable: true, Family: 2}}
	got := verdictReason(pr, summary.VerdictInconclusive, summary.Params{Alpha: 0.05, NegligibleDropPP: 3, StrongDropPP: 10})
	if !strings.Contains(got, "lies above 0") || strings.Contains(got, "includes 0") {
		t.Errorf("reading of (0, 12.3] with adjusted p 0.08: %q", got)
	}
}
