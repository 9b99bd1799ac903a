package probe_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/internal/probetest"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/verify"
	"github.com/fragility/fragility/templates"
)

// TestCalculatorOnGemma drives the calculator protocol on a real model:
// Gemma 3 270M (pretrained, no chat template) repeats the instruction,
// example call included, so the calculator is called on "3*12.5" at a
// deterministic point. The result must be fed as injected tokens without
// entropy, recorded in the traces, left out of the trial's statistics, and
// `verify` must replay the calculator items bit for bit.
func TestCalculatorOnGemma(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real model")
	}
	dir := t.TempDir()
	cfg := rundir.Config{
		Models:     []string{probetest.GemmaModel(t)},
		Templates:  probetest.TinyTemplates(t),
		Variants:   []templates.Variant{templates.VariantBase},
		Instances:  1,
		Seed:       1,
		MaxTokens:  110,
		Params:     llm.Params{Threads: 2, NCtx: 1024, NSeq: 2},
		Conditions: []string{results.ConditionNone, results.ConditionCalculator},
		OutDir:     dir,
	}
	sum, err := probe.Run(context.Background(), cfg, probe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	man, err := rundir.ReadManifest(dir)
	if err != nil || man.Calculator == nil || man.Calculator.Calls != probe.DefaultCalcCalls || man.Calculator.Protocol != probe.CalcProtocolVersion {
		t.Fatalf("manifest calculator %+v %v", man.Calculator, err)
	}
	f, _ := os.Open(filepath.Join(dir, rundir.FileResults))
	trials, err := results.ReadCSV(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	traces, err := rundir.ReadTraces(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 4 || len(traces) != 4 {
		t.Fatalf("%d trials, %d traces, want 4", len(trials), len(traces))
	}
	calls := 0
	for i, tr := range traces {
		trial := trials[i]
		cond := results.ItemCondition(tr.ItemID)
		if trial.Condition != cond {
			t.Fatalf("%s: condition %q", tr.ItemID, trial.Condition)
		}
		gen := 0
		for _, tok := range tr.Tokens {
			if !tok.Injected {
				gen++
			} else if tok.EntropyBits != 0 || tok.LogProb != 0 {
				t.Fatalf("%s: injected token with entropy %+v", tr.ItemID, tok)
			}
		}
		if gen != trial.Tokens || len(tr.CalcCalls) != trial.CalcCalls {
			t.Fatalf("%s: %d generated tokens in the trace, %d in the row; %d calls vs %d", tr.ItemID, gen, trial.Tokens, len(tr.CalcCalls), trial.CalcCalls)
		}
		if cond == results.ConditionNone && len(tr.CalcCalls) != 0 {
			t.Fatalf("%s: calls without the calculator", tr.ItemID)
		}
		for _, c := range tr.CalcCalls {
			calls++
			var text strings.Builder
			for _, tok := range tr.Tokens[:c.Token+1] {
				text.WriteString(tok.Piece)
			}
			if !strings.HasSuffix(text.String(), "<<"+c.Expr+"=") || tr.Tokens[c.Token].Injected {
				t.Fatalf("%s: call %+v is not at the generated token ending <<EXPR=: %q", tr.ItemID, c, text.String())
			}
			v, err := templates.EvalArithmetic(c.Expr)
			if err != nil || c.Result != probe.CalcResult(v) {
				t.Fatalf("%s: call %+v, evaluator %v %v", tr.ItemID, c, v, err)
			}
			var fed strings.Builder
			for _, tok := range tr.Tokens[c.Token+1:] {
				if !tok.Injected {
					break
				}
				fed.WriteString(tok.Piece)
			}
			if fed.String() != c.Result+">>" {
				t.Fatalf("%s: fed %q after the call, want %q", tr.ItemID, fed.String(), c.Result+">>")
			}
		}
	}
	if calls == 0 {
		t.Fatal("Gemma made no calculator call (it echoes the instruction's example on these templates)")
	}
	if sum.Calculator == nil || len(sum.Calculator.Models) != 1 || sum.Calculator.CallLimit != probe.DefaultCalcCalls {
		t.Fatalf("summary calculator %+v", sum.Calculator)
	}
	res, err := verify.Verify(context.Background(), dir, verify.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Items != 4 || res.Divergences != 0 {
		t.Fatalf("verify: %d items, %d divergences, first %+v", res.Items, res.Divergences, res.First)
	}
}
