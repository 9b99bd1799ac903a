package probe

import (
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/anatomy"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/docqa"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/templates"
)

// clauseInstance is a noop-seeming instance whose clause draws the 3.
func clauseInstance() templates.Instance {
	clause := "3 of them are smaller than usual."
	return templates.Instance{ID: "apples/noop-seeming/0", TemplateID: "apples", Variant: templates.VariantNoopSeeming, Index: 0,
		Question: "Ann has 11 apples. " + clause + " How many apples does she have?", Answer: "11",
		NoopClause: clause, NoopKind: templates.NoopSeeming, NoopValues: map[string]string{"k": "3"}, Reference: templates.VariantSymbolic}
}

// clauseTrial is the trial of clauseInstance answered "11 - 3 = 8", scored
// as a run scores it.
func clauseTrial(in templates.Instance) results.Trial {
	t := results.Trial{ItemID: "m0/" + in.ID, TemplateID: in.TemplateID, Variant: string(in.Variant), Instance: in.Index,
		Question: in.Question, Expected: in.Answer, Response: "She has 11 apples.\n11 - 3 = 8\nFinal answer: 8",
		StopReason: "eos", Tokens: 12, ScoreRule: docqa.ScoreNumber, Reference: string(in.Reference)}
	ex := Extract(&llm.Generation{Text: t.Response, StopReason: t.StopReason})
	t.Extracted, t.Rule = ex.Value, ex.Rule
	t.Correct = answer.AnswerMatches(t.Extracted, t.Expected)
	t.ExpectedAnywhere = answer.ExpectedAnywhere(t.Response, t.Expected)
	return t
}

// TestErrorKindClauseNumbers (errors/3): a run classifies an answer that
// subtracts its clause's drawn number as clause_used (classifyErrorOf);
// without the clause's numbers it is other.
func TestErrorKindClauseNumbers(t *testing.T) {
	in := clauseInstance()
	tr := clauseTrial(in)
	classifyErrorOf(&tr, &in)
	if tr.ErrorKind != anatomy.ClauseUsed {
		t.Fatalf("run: error_kind %q, want clause_used", tr.ErrorKind)
	}
	if k := errorKind(&tr); k != anatomy.Other {
		t.Errorf("without the clause: %q, want other", k)
	}
}

// TestOverrideKeepsClauseUsed: a corrected answer that leaves the trial
// wrong keeps its clause_used (no rule up to it reads the expected
// answer, and the row does not hold the clause's numbers); one that makes
// it right clears it.
func TestOverrideKeepsClauseUsed(t *testing.T) {
	in := clauseInstance()
	tr := clauseTrial(in)
	classifyErrorOf(&tr, &in)
	out, n, _, err := ApplyOverrides([]results.Trial{tr}, []Override{{Item: in.ID, Answer: "12"}}, "o.jsonl")
	if err != nil || n != 1 {
		t.Fatal(n, err)
	}
	if out[0].ErrorKind != anatomy.ClauseUsed || out[0].Correct {
		t.Errorf("corrected to 12: correct %v, error_kind %q, want clause_used", out[0].Correct, out[0].ErrorKind)
	}
	out, _, _, err = ApplyOverrides([]results.Trial{tr}, []Override{{Item: in.ID, Answer: "8"}}, "o.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if out[0].ErrorKind != "" || !out[0].Correct {
		t.Errorf("corrected to 8: correct %v, error_kind %q, want right", out[0].Correct, out[0].ErrorKind)
	}
}
