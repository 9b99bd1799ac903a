package probe

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
)

func TestPendingCall(t *testing.T) {
	for _, c := range []struct {
		text, expr string
		ok         bool
	}{
		{"He buys <<3*4=", "3*4", true},
		{"x <<1,250 / 5 =", "1,250 / 5", true},
		{"<<2+2=4>> and <<4*3=", "4*3", true},
		{"<<2+2=4>> then x =", "", false}, // the last call is closed
		{"3*4=", "", false},               // no call
		{"<<=", "", false},                // empty expression
		{"<<a=b=", "", false},             // "=" inside
		{"<<3\n*4=", "", false},           // over a line break
		{"<<3*4", "", false},              // not ended yet
	} {
		expr, ok := pendingCall(c.text)
		if expr != c.expr || ok != c.ok {
			t.Errorf("pendingCall(%q) = %q %v, want %q %v", c.text, expr, ok, c.expr, c.ok)
		}
	}
}

func TestCalcResult(t *testing.T) {
	for _, c := range []struct{ num, den int64 }{{12, 1}, {75, 2}, {-3, 4}, {1, 3}, {2, 3}, {-2, 3}, {1, 8000000}, {5, 2000000}, {7, 2000000}} {
		got := CalcResult(big.NewRat(c.num, c.den))
		want := map[[2]int64]string{{12, 1}: "12", {75, 2}: "37.5", {-3, 4}: "-0.75", {1, 3}: "0.333333",
			{2, 3}: "0.666667", {-2, 3}: "-0.666667", {1, 8000000}: "0.000000125",
			// 5/2000000 = 0.0000025 is a finite decimal: exact.
			{5, 2000000}: "0.0000025", {7, 2000000}: "0.0000035"}[[2]int64{c.num, c.den}]
		if got != want {
			t.Errorf("CalcResult(%d/%d) = %q, want %q", c.num, c.den, got, want)
		}
	}
	// Rounding at the 6th decimal, just below and just above the midpoint
	// 0.0000005 (values without a finite decimal form).
	below := new(big.Rat).Sub(big.NewRat(1, 2000000), big.NewRat(1, 3000000000000))
	above := new(big.Rat).Add(big.NewRat(1, 2000000), big.NewRat(1, 3000000000000))
	if g := CalcResult(below); g != "0" {
		t.Errorf("just below 0.0000005: %q, want 0", g)
	}
	if g := CalcResult(above); g != "0.000001" {
		t.Errorf("just above 0.0000005: %q, want 0.000001", g)
	}
}

func TestCalculatorInject(t *testing.T) {
	c := NewCalculator(rundir.Config{CalcCalls: 2}, results.ConditionCalculator, 2)
	if got := c.inject(1, "So <<3*12.5="); got != "37.5>>" {
		t.Fatalf("inject = %q", got)
	}
	if got := c.inject(1, "So <<3*12.5=37.5>>37.5 and"); got != "" {
		t.Fatalf("no call pending, got %q", got)
	}
	if got := c.inject(1, "<<1/0="); got != "error>>" {
		t.Fatalf("division by zero: %q", got)
	}
	if got := c.inject(1, "<<2+2="); got != "" {
		t.Fatalf("past the limit of 2: %q", got)
	}
	calls := c.calls[1]
	if len(calls) != 3 || calls[0].Result != "37.5" || calls[1].Error == "" || calls[2].Error != "call limit reached" || len(c.calls[0]) != 0 {
		t.Fatalf("calls %+v", c.calls)
	}
	if NewCalculator(rundir.Config{}, results.ConditionNone, 1) != nil {
		t.Fatal("a calculator under condition none")
	}
	var nilCalc *Calculator
	opt := llm.GenerateOptions{}
	nilCalc.SetOptions(&opt)
	if opt.Inject != nil || nilCalc.finish(0, &llm.Generation{}) != nil {
		t.Fatal("nil calculator changed the options")
	}
}

func TestConditionsConfig(t *testing.T) {
	if _, err := ParseConditions("none,abacus"); err == nil {
		t.Error("unknown condition accepted")
	}
	if _, err := ParseConditions("none,none"); err == nil {
		t.Error("repeated condition accepted")
	}
	cs, err := ParseConditions(" none , calculator ")
	if err != nil || len(cs) != 2 || cs[1] != results.ConditionCalculator {
		t.Fatalf("%v %v", cs, err)
	}
	c := rundir.Config{Conditions: []string{results.ConditionNone}, CalcCalls: 4}
	if err := validateConditions(&c); err != nil || c.Conditions != nil || c.CalcCalls != 0 {
		t.Fatalf("none alone: %+v %v", c, err)
	}
	c = rundir.Config{Conditions: []string{results.ConditionNone, results.ConditionCalculator}}
	if err := validateConditions(&c); err != nil || c.CalcCalls != DefaultCalcCalls {
		t.Fatalf("calculator default calls: %+v %v", c, err)
	}
	c = rundir.Config{Conditions: []string{results.ConditionCalculator}, Items: "x.jsonl"}
	if err := validateConditions(&c); err == nil {
		t.Error("calculator with document items accepted")
	}
	if id := results.ConditionItemID("m0/t/base/0", results.ConditionCalculator); id != "m0/t/base/0#calculator" || results.ItemCondition(id) != results.ConditionCalculator || results.ItemCondition("m0/t/base/0") != results.ConditionNone {
		t.Fatalf("item id %q", id)
	}
	if _, inst, err := SplitItemID("m0/t/base/0#calculator", 1); err != nil || inst != "t/base/0" {
		t.Fatalf("splitItemID: %q %v", inst, err)
	}
}

// gen builds a Generation from pieces; a piece starting with "!" is injected.
func gen(pieces ...string) *llm.Generation {
	g := &llm.Generation{}
	for i, p := range pieces {
		rec := llm.TokenRecord{ID: llm.Token(i), Piece: p, EntropyBits: float64(i + 1)}
		if strings.HasPrefix(p, "!") {
			rec.Piece, rec.EntropyBits, rec.Injected = p[1:], 0, true
		}
		g.Tokens = append(g.Tokens, rec)
		g.Text += rec.Piece
	}
	return g
}

func TestFillEffort(t *testing.T) {
	// No block: effort is the generated tokens before the run-on cut.
	g := gen("3", "*4", "=<<3*4=", "!12>>", "12", "\nFinal answer: 12", "\nQ:", " next")
	tr := results.Trial{Expected: "12"}
	fillFromGeneration(&tr, g, 0, nil, results.ConditionCalculator, []rundir.CalcCall{{Expr: "3*4", Result: "12"}})
	if tr.Tokens != 7 || tr.EffortSource != "all" || tr.EffortTokens != 5 || tr.ThinkTokens != 0 || tr.CutMarker != "Q:" || tr.CalcCalls != 1 || tr.Condition != results.ConditionCalculator {
		t.Fatalf("no block: %+v", tr)
	}
	// Injected token (entropy 0) is left out: mean of 1,2,3,5,6,7,8.
	if want := (1.0 + 2 + 3 + 5 + 6 + 7 + 8) / 7; math.Abs(tr.EntropyMean-want) > 1e-12 || !tr.Correct {
		t.Fatalf("entropy mean %v, want %v (correct %v)", tr.EntropyMean, want, tr.Correct)
	}
	// A block: effort is the thinking tokens; each part has its entropy.
	g = gen("<think>", "maybe 5", "</think>", "\nFinal answer: 6")
	tr = results.Trial{Expected: "6"}
	fillFromGeneration(&tr, g, 0, nil, "", nil)
	if tr.EffortSource != "think" || tr.EffortTokens != 3 || tr.ThinkTokens != 3 || tr.ReplyTokens != 1 ||
		tr.ThinkEntropyMean != 2 || tr.ReplyEntropyMean != 4 || tr.Condition != results.ConditionNone || !tr.Correct {
		t.Fatalf("block: %+v", tr)
	}
	g = gen("A", "\nQ:", " x")
	g.StopReason, g.StopString = llm.StopString, "\nQ:"
	tr = results.Trial{}
	fillFromGeneration(&tr, g, 0, nil, "", nil)
	if tr.StopReason != StopRunOn {
		t.Fatalf("stop reason %q", tr.StopReason)
	}
}
