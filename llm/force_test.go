package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// scoreTerms collects the log-probability terms of forced[from:] that fn
// receives from a scoring pass (Score or ScoreForced).
func scoreTerms(forced []Token, from int, terms *[]float64) StepFunc {
	return func(step int, logits []float32, d Dist) error {
		if step >= from {
			*terms = append(*terms, d.LogProb(logits[forced[step]]))
		}
		return nil
	}
}

// sum adds terms in order.
func sum(terms []float64) float64 {
	var s float64
	for _, x := range terms {
		s += x
	}
	return s
}

// TestForceAfterMatchesScoreForced checks ForceAfter against an independent
// pass: after a greedy generation of one sequence, forcing a text after
// part of it gives the log-probabilities that ScoreForced computes in a
// fresh KV state from the prompt, the kept tokens and the forced ones, bit
// for bit, also for a forcing that keeps no generated token (its first term
// from the prefill's logits) and with batches of 4 tokens (the forced
// tokens then in several calls, the prompt too). Two forcings of one
// sequence (keeping a different number of tokens) both match. Against
// Score (the forced tokens one per call, as generation decodes them) and
// against the log-probabilities generation recorded for the model's own
// continuation forced after its first tokens, they differ by up to 0.05
// nats a token (0.023 measured on Gemma 3 270M), and by nothing with
// batches of 1 token, where ForceAfter too decodes one token per call.
func TestForceAfterMatchesScoreForced(t *testing.T) {
	for _, nBatch := range []int{512, 4, 1} {
		t.Run(fmt.Sprintf("n_batch %d", nBatch), func(t *testing.T) {
			m := gemmaModel(t)
			if nBatch != m.Params().NBatch {
				var err error
				if m, err = Load(m.Metadata().Path, Params{Threads: 1, NCtx: 1024, Seed: 1, NBatch: nBatch}); err != nil {
					t.Fatal(err)
				}
				defer m.Close()
			}
			tol := 0.05 // nats a token, against one token per call
			if nBatch == 1 {
				tol = 0
			}
			forceMatchesScoreForced(t, m, tol)
		})
	}
}

// forceMatchesScoreForced is TestForceAfterMatchesScoreForced on m.
func forceMatchesScoreForced(t *testing.T, m *Model, tol float64) {
	p := prompt(t, m, "Tom has 3 apples and buys 4 more. How many apples does he have? Answer with a number.")
	gens, err := m.GenerateBatch(context.Background(), [][]Token{p}, GenerateOptions{MaxTokens: 12, KeepFirstLogits: true})
	if err != nil {
		t.Fatal(err)
	}
	g := gens[0]
	if len(g.Tokens) < 4 {
		t.Fatalf("only %d tokens generated", len(g.Tokens))
	}
	answer, err := m.Tokenize(" The answer is 7", false, false)
	if err != nil {
		t.Fatal(err)
	}
	own := make([]Token, 0, 3)
	for _, r := range g.Tokens[1:4] {
		own = append(own, r.ID)
	}
	fs := []Forcing{
		{Seq: 0, Keep: len(g.Tokens) - 1, Tokens: answer, From: 3, To: len(answer)},
		{Seq: 0, Keep: 1, Tokens: own, From: 0, To: len(own)},
		{Seq: 0, Keep: 0, Tokens: answer, From: 0, To: len(answer)},
		{Seq: 0, Keep: 0, Tokens: answer, From: 2, To: len(answer) - 1},
	}
	got, err := m.ForceAfter(context.Background(), gens, fs, "")
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range fs {
		var kept []Token
		for _, r := range g.Tokens[:f.Keep] {
			kept = append(kept, r.ID)
		}
		var want, perCall []float64
		if err := m.ScoreForced(context.Background(), p, kept, f.Tokens[:f.To], f.From, scoreTerms(f.Tokens, f.From, &want)); err != nil {
			t.Fatal(err)
		}
		seq := append(kept, f.Tokens[:f.To]...)
		if err := m.Score(context.Background(), p, seq, 0, scoreTerms(seq, f.Keep+f.From, &perCall)); err != nil {
			t.Fatal(err)
		}
		if got[i].Tokens != f.To-f.From || len(got[i].TokenLogProbs) != len(want) || math.Float64bits(got[i].LogProb) != math.Float64bits(sum(want)) {
			t.Fatalf("forcing %d: %v over %d tokens %v, ScoreForced %v over %v", i, got[i].LogProb, got[i].Tokens, got[i].TokenLogProbs, sum(want), want)
		}
		worst := 0.0
		for k := range want {
			if math.Float64bits(want[k]) != math.Float64bits(got[i].TokenLogProbs[k]) {
				t.Errorf("forcing %d token %d: %v, ScoreForced %v", i, k, got[i].TokenLogProbs[k], want[k])
			}
			worst = max(worst, math.Abs(perCall[k]-want[k]))
		}
		if worst > tol {
			t.Errorf("forcing %d: |Δ| up to %g nats a token against the tokens decoded one per call", i, worst)
		}
		t.Logf("forcing %d: %v nats over %d tokens; one per call %v (|Δ| ≤ %g a token)", i, got[i].LogProb, got[i].Tokens, sum(perCall), worst)
	}
	for k := range own {
		if a, b := got[1].TokenLogProbs[k], g.Tokens[1+k].LogProb; math.Abs(a-b) > tol {
			t.Errorf("own token %d: forced %v, generated %v", k, a, b)
		}
	}
}

// forceTwice generates prompts as one batch on m and forces fs after it.
func forceTwice(t *testing.T, m *Model, prompts [][]Token, fs []Forcing) []Forced {
	t.Helper()
	gens, err := m.GenerateBatch(context.Background(), prompts, GenerateOptions{MaxTokens: 5, KeepFirstLogits: true})
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.ForceAfter(context.Background(), gens, fs, "")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestForceAfterBatchAndErrors checks forcing in a batch of two sequences,
// in batches of 512 and of 3 tokens (the round's tokens then in several
// calls, a call ending inside a forcing): the same generation and forcings
// give the same bits again (what verify relies on), and the forcings of
// several sequences each match the sequence forced alone within 0.05 nats
// (whether the bits are the same is logged). Then the refusals: a batch
// that is not the latest generation, a range outside the tokens, a forcing
// that keeps more tokens than an earlier one of its sequence, one that
// keeps none without the prefill's logits.
func TestForceAfterBatchAndErrors(t *testing.T) {
	path := gemmaModel(t).Metadata().Path
	var m *Model
	for _, nBatch := range []int{3, 512} {
		var err error
		if m, err = Load(path, Params{Threads: 1, NCtx: 512, NSeq: 2, NBatch: nBatch}); err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		t.Run(fmt.Sprintf("n_batch %d", nBatch), func(t *testing.T) { forceBatch(t, m) })
	}
	prompts := [][]Token{prompt(t, m, "What is 2 plus 2?"), prompt(t, m, "What is 10 minus 3?")}
	ans, _ := m.Tokenize(" The answer is 4", false, false)
	fs := []Forcing{{Seq: 0, Keep: 2, Tokens: ans, From: 1, To: len(ans)}, {Seq: 1, Keep: 0, Tokens: ans, From: 0, To: len(ans)}}
	gens, err := m.GenerateBatch(context.Background(), prompts, GenerateOptions{MaxTokens: 5})
	if err != nil {
		t.Fatal(err)
	}
	gens2, err := m.GenerateBatch(context.Background(), prompts, GenerateOptions{MaxTokens: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.ForceAfter(context.Background(), gens, fs[:2], ""); !errors.Is(err, ErrNoGeneration) {
		t.Errorf("forcing an earlier batch: err = %v, want ErrNoGeneration", err)
	}
	bad := []Forcing{{Seq: 0, Keep: 99, Tokens: ans, To: len(ans)}}
	if _, err := m.ForceAfter(context.Background(), gens2, bad, ""); err == nil {
		t.Error("keep beyond the tokens: no error")
	}
	// A forcing that keeps more tokens of a sequence than an earlier one
	// did would read cells that one dropped.
	grow := []Forcing{{Seq: 0, Keep: 1, Tokens: ans, To: len(ans)}, {Seq: 0, Keep: 2, Tokens: ans, To: len(ans)}}
	if _, err := m.ForceAfter(context.Background(), gens2, grow, ""); err == nil || !strings.Contains(err.Error(), "an earlier forcing of it kept 1") {
		t.Errorf("a forcing keeping more than an earlier one: %v", err)
	}
	// A forcing that keeps no token needs the prefill's logits.
	if _, err := m.ForceAfter(context.Background(), gens2, fs[1:], ""); err == nil || !strings.Contains(err.Error(), "KeepFirstLogits") {
		t.Errorf("keeping no token without the prefill's logits: %v", err)
	}
}

// sameFloats reports whether a and b are equal bit for bit.
func sameFloats(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// forceBatch is the batch part of TestForceAfterBatchAndErrors on m.
func forceBatch(t *testing.T, m *Model) {
	prompts := [][]Token{prompt(t, m, "What is 2 plus 2?"), prompt(t, m, "What is 10 minus 3?")}
	ans, _ := m.Tokenize(" The answer is 4", false, false)
	seven, _ := m.Tokenize(" 7", false, false)
	fs := []Forcing{
		{Seq: 1, Keep: 3, Tokens: seven, From: 0, To: len(seven)},
		{Seq: 0, Keep: 2, Tokens: ans, From: 1, To: len(ans)},
		{Seq: 1, Keep: 0, Tokens: ans, From: 0, To: len(ans)},
		{Seq: 0, Keep: 0, Tokens: seven, From: 0, To: len(seven)},
	}
	both := forceTwice(t, m, prompts, fs)
	again := forceTwice(t, m, prompts, fs)
	for i := range fs {
		if !sameFloats(both[i].TokenLogProbs, again[i].TokenLogProbs) || both[i].Seconds <= 0 || both[i].Tokens != fs[i].To-fs[i].From {
			t.Errorf("forcing %d: %v, then %v (%v s)", i, both[i].TokenLogProbs, again[i].TokenLogProbs, both[i].Seconds)
		}
	}
	for i, f := range fs {
		alone := forceTwice(t, m, prompts, []Forcing{f})
		if d := math.Abs(both[i].LogProb - alone[0].LogProb); d > 0.05 {
			t.Errorf("forcing %d beside the others: %v, alone: %v", i, both[i].LogProb, alone[0].LogProb)
		}
		t.Logf("forcing %d beside the others %v, alone %v (same bits: %v)", i, both[i].LogProb, alone[0].LogProb, sameFloats(both[i].TokenLogProbs, alone[0].TokenLogProbs))
	}
}
