package summary_test

import (
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/report"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/summary"
)

// A model that solves no base problem gets no robustness verdict: it has no
// accuracy left to lose, so "no detectable drop" would be wrong.
func TestFloorVerdict(t *testing.T) {
	var trials []results.Trial
	for _, tpl := range []string{"a", "b", "c", "d"} {
		for _, v := range []string{"base", "symbolic"} {
			trials = append(trials, results.Trial{ItemID: tpl + v, ModelPath: "m.gguf", ModelName: "m", TemplateID: tpl, Variant: v, Rule: answer.RuleNone})
		}
	}
	s, err := summary.Summarize(trials, summary.DefaultParams(1))
	if err != nil {
		t.Fatal(err)
	}
	m := s.Models[0]
	if m.Verdict != summary.VerdictFloor {
		t.Fatalf("verdict %q, want %q", m.Verdict, summary.VerdictFloor)
	}
	n := report.Narrative(s)
	if !strings.Contains(n, "not assessable") || strings.Contains(n, "Verdict: "+summary.VerdictNoDrop) {
		t.Errorf("narrative does not say the verdict is not assessable:\n%s", n)
	}
	// At 50% base accuracy a verdict is given again.
	for i := range trials {
		if trials[i].Variant == "base" && (trials[i].TemplateID == "a" || trials[i].TemplateID == "b") {
			trials[i].Correct = true
		}
	}
	s, _ = summary.Summarize(trials, summary.DefaultParams(1))
	if v := s.Models[0].Verdict; v == summary.VerdictFloor || v == "" {
		t.Errorf("verdict at 50%% base accuracy: %q", v)
	}
}
