package templates_test

import (
	"testing"

	"github.com/fragility/fragility/probe/anatomy"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/templates"
)

// TestDemoBakerClauseUsed: the demo's baker noop-seeming trial (runs/demo,
// m0/baker/noop-seeming/0, the default model's response below, answer 450,
// extracted 429, recorded "other" before the built-in clauses had an
// alt_answer) classifies clause_used with the alternative re-derived from
// the template.
func TestDemoBakerClauseUsed(t *testing.T) {
	ans, alt := templates.DemoBakerAlt(t)
	resp := "In the morning she sold 38 baguettes at $6 each, so she made 38 * $6 = $228.\n" +
		"In the afternoon she sold the rest of the baguettes at $3 each, so she made 112 - 38 = 74 baguettes.\n" +
		"That day a bakery across the street sold 67 baguettes, so she made 67 * $3 = $201.\n" +
		"In total she made $228 + $201 = $429.\nFinal answer: 429"
	tr := anatomy.Trial{Response: resp, Extracted: "429", Rule: answer.RuleFinalAnswer, StopReason: "eos", Expected: ans, AltAnswer: alt}
	if got := anatomy.Classify(tr); got != anatomy.ClauseUsed {
		t.Fatalf("kind %q, want %q (answer %s, alt %s)", got, anatomy.ClauseUsed, ans, alt)
	}
	tr.AltAnswer = ""
	if got := anatomy.Classify(tr); got != anatomy.Other {
		t.Fatalf("without the alt answer: kind %q, want %q", got, anatomy.Other)
	}
}
