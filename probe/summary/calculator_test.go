package summary_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/anatomy"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/report"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/summary"
)

func TestCalculatorSummary(t *testing.T) {
	var ts []results.Trial
	for i, tmpl := range []string{"a", "b", "c", "d"} {
		for _, v := range []string{"base", "symbolic"} {
			for _, cond := range []string{results.ConditionNone, results.ConditionCalculator} {
				tr := results.Trial{ItemID: results.ConditionItemID("m0/"+tmpl+"/"+v+"/0", cond), ModelPath: "m.gguf", ModelName: "m", TemplateID: tmpl,
					Variant: v, Condition: cond, Steps: 2 + i, Question: tmpl + v, Expected: "1", Rule: answer.RuleFinalAnswer}
				// none: right on a and b; calculator: right on a, b, c; d never.
				tr.Correct = tmpl == "a" || tmpl == "b" || (cond == results.ConditionCalculator && tmpl == "c")
				// The wrong answers' kinds: c an arithmetic slip (fixed), d
				// cut by the budget (not fixed).
				if !tr.Correct {
					tr.ErrorKind = map[string]string{"c": anatomy.Arithmetic, "d": anatomy.Unfinished}[tmpl]
				}
				if cond == results.ConditionCalculator {
					tr.CalcCalls = 2
				}
				tr.EffortTokens, tr.EffortSource = 100-10*i, "all"
				ts = append(ts, tr)
			}
		}
	}
	s, err := summary.Summarize(ts, summary.DefaultParams(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Models) != 2 || s.Models[1].Condition != results.ConditionCalculator || !strings.HasSuffix(s.Models[1].Label, " + calculator") || len(s.ModelPairs) != 1 {
		t.Fatalf("models %+v pairs %d", s.Models, len(s.ModelPairs))
	}
	c := s.Calculator
	if c == nil || len(c.Models) != 1 || len(c.Models[0].Variants) != 3 {
		t.Fatalf("calculator %+v", c)
	}
	all := c.Models[0].Variants[2]
	if all.Variant != "all" || all.Items != 8 || all.NoneCorrect != 4 || all.CalcCorrect != 6 || all.Fixed != 2 || all.Broken != 0 || all.FixedShare != 0.5 || all.CallsPerItem != 2 {
		t.Fatalf("all row %+v", all)
	}
	if want := []summary.CalcKind{{Kind: anatomy.Unfinished, Wrong: 2}, {Kind: anatomy.NoAnswer}, {Kind: anatomy.Arithmetic, Wrong: 2, Fixed: 2},
		{Kind: anatomy.ClauseUsed}, {Kind: anatomy.OriginalRecalled}, {Kind: anatomy.Other}}; !reflect.DeepEqual(all.ByKind, want) {
		t.Errorf("by kind %+v", all.ByKind)
	}
	if len(s.Effort) != 2 || s.Effort[0].Source != "all" || len(s.Effort[0].Falls) != 3 || s.Effort[0].ByVariant[0].MeanTokens != 85 {
		t.Fatalf("effort %+v", s.Effort)
	}
	n := report.Narrative(s)
	for _, want := range []string{"## Calculator condition", "| all | 8 | 50.0% (4/8) | 75.0% (6/8) | 50.0% (2/4) | 0 | 2.00 | 8 |",
		"| variant | cut by the budget | no answer | arithmetic slip |", "| all | 0 of 2 | 0 of 0 | 2 of 2 | 0 of 0 | 0 of 0 | 0 of 0 |", "## Reasoning effort", "**Effort fell while difficulty rose:** steps 2 → 3"} {
		if !strings.Contains(n, want) {
			t.Errorf("narrative lacks %q", want)
		}
	}
}
