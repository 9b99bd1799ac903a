package llm

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

// independentLogProb scores forced after prompt with Score, a plain forward
// pass in a fresh KV state (the prompt in one call, then one token per
// call), summing Dist.LogProb of forced[from:].
func independentLogProb(t *testing.T, m *Model, prompt, forced []Token, from int) (float64, []float64) {
	t.Helper()
	var sum float64
	var terms []float64
	err := m.Score(context.Background(), prompt, forced, 0, func(step int, logits []float32, d Dist) error {
		if step >= from {
			lp := d.LogProb(logits[forced[step]])
			terms = append(terms, lp)
			sum += lp
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sum, terms
}

// TestForceAfterMatchesScore checks ForceAfter against an independent pass:
// after a greedy generation, forcing a text after part of it gives the
// log-probability that Score computes from the full logits over the prompt,
// then the kept and forced tokens one per call as generation decodes them
// (|Δ| ≤ 1e-9 nats; in fact the same bits), also for a forcing that keeps
// no generated token (its first term from the prefill's logits). Two forcings of one sequence (keeping a different number of
// tokens) both match, and the model's own continuation forced after its
// first tokens gives back the log-probabilities generation recorded.
func TestForceAfterMatchesScore(t *testing.T) {
	m := gemmaModel(t)
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
	}
	got, err := m.ForceAfter(context.Background(), gens, fs, "")
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range fs {
		var seq []Token
		for _, r := range g.Tokens[:f.Keep] {
			seq = append(seq, r.ID)
		}
		seq = append(seq, f.Tokens...)
		want, terms := independentLogProb(t, m, p, seq, f.Keep+f.From)
		if d := math.Abs(got[i].LogProb - want); d > 1e-9 || got[i].Tokens != f.To-f.From {
			t.Errorf("forcing %d: log-probability %v over %d tokens, independent pass %v (Δ %g)", i, got[i].LogProb, got[i].Tokens, want, d)
		}
		t.Logf("forcing %d: %v nats over %d tokens, |Δ| %g", i, got[i].LogProb, got[i].Tokens, math.Abs(got[i].LogProb-want))
		for k := range terms {
			if math.Float64bits(terms[k]) != math.Float64bits(got[i].TokenLogProbs[k]) {
				t.Errorf("forcing %d token %d: %v, independent %v", i, k, got[i].TokenLogProbs[k], terms[k])
			}
		}
	}
	for k := range own {
		if a, b := got[1].TokenLogProbs[k], g.Tokens[1+k].LogProb; math.Float64bits(a) != math.Float64bits(b) {
			t.Errorf("own token %d: forced %v, generated %v", k, a, b)
		}
	}
}

// TestForceAfterBatchAndErrors checks forcing in a batch of two sequences
// (each forcing depends only on its sequence: the same numbers as the
// sequence forced alone in a second identical batch) and the refusals: a
// batch that is not the latest generation, a range outside the tokens.
func TestForceAfterBatchAndErrors(t *testing.T) {
	path := gemmaModel(t).Metadata().Path
	m, err := Load(path, Params{Threads: 1, NCtx: 512, NSeq: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	prompts := [][]Token{prompt(t, m, "What is 2 plus 2?"), prompt(t, m, "What is 10 minus 3?")}
	opt := GenerateOptions{MaxTokens: 5}
	gens, err := m.GenerateBatch(context.Background(), prompts, opt)
	if err != nil {
		t.Fatal(err)
	}
	ans, _ := m.Tokenize(" 4", false, false)
	fs := []Forcing{{Seq: 0, Keep: 2, Tokens: ans, From: 0, To: len(ans)}, {Seq: 1, Keep: 3, Tokens: ans, From: 0, To: len(ans)}}
	both, err := m.ForceAfter(context.Background(), gens, fs, "")
	if err != nil {
		t.Fatal(err)
	}
	gens2, err := m.GenerateBatch(context.Background(), prompts, opt)
	if err != nil {
		t.Fatal(err)
	}
	one, err := m.ForceAfter(context.Background(), gens2, fs[1:], "")
	if err != nil {
		t.Fatal(err)
	}
	if math.Float64bits(both[1].LogProb) != math.Float64bits(one[0].LogProb) {
		t.Errorf("sequence 1 forced beside sequence 0: %v, alone: %v", both[1].LogProb, one[0].LogProb)
	}
	if _, err := m.ForceAfter(context.Background(), gens, fs, ""); !errors.Is(err, ErrNoGeneration) {
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
}
