package probe

import (
	"github.com/fragility/fragility/probe/answer"
	"strings"
	"testing"
)

// A model that solves no base problem gets no robustness verdict: it has no
// accuracy left to lose, so "no detectable drop" would be wrong.
func TestFloorVerdict(t *testing.T) {
	var trials []Trial
	for _, tpl := range []string{"a", "b", "c", "d"} {
		for _, v := range []string{"base", "symbolic"} {
			trials = append(trials, Trial{ItemID: tpl + v, ModelPath: "m.gguf", ModelName: "m", TemplateID: tpl, Variant: v, Rule: answer.RuleNone})
		}
	}
	s, err := Summarize(trials, DefaultParams(1))
	if err != nil {
		t.Fatal(err)
	}
	m := s.Models[0]
	if m.Verdict != VerdictFloor {
		t.Fatalf("verdict %q, want %q", m.Verdict, VerdictFloor)
	}
	n := Narrative(s)
	if !strings.Contains(n, "not assessable") || strings.Contains(n, "Verdict: "+VerdictNoDrop) {
		t.Errorf("narrative does not say the verdict is not assessable:\n%s", n)
	}
	// At 50% base accuracy a verdict is given again.
	for i := range trials {
		if trials[i].Variant == "base" && (trials[i].TemplateID == "a" || trials[i].TemplateID == "b") {
			trials[i].Correct = true
		}
	}
	s, _ = Summarize(trials, DefaultParams(1))
	if v := s.Models[0].Verdict; v == VerdictFloor || v == "" {
		t.Errorf("verdict at 50%% base accuracy: %q", v)
	}
}
