package llm

import (
	"context"
	"math"
	"testing"
)

// TestGenerateBatchSharedPrefix checks the batched path with a shared
// prefix (decoded once, its KV cells copied to every sequence) against one
// prompt at a time: each sequence must follow its own prompt. llama.cpp is
// not batch-invariant, so entropies agree closely, not bit for bit; two
// batched runs agree bit for bit.
func TestGenerateBatchSharedPrefix(t *testing.T) {
	single := gemmaModel(t)
	p := single.Params()
	p.NSeq = 3
	batched, err := Load(single.Metadata().Path, p)
	if err != nil {
		t.Fatal(err)
	}
	defer batched.Close()
	prefix := "You answer arithmetic questions with a number only. Here are the questions of today's quiz, one at a time.\n\nQuestion: "
	var prompts [][]Token
	for _, q := range []string{"What is 2 plus 2?", "What is 10 minus 3?", "How many legs does a spider have?"} {
		toks, err := batched.Tokenize(prefix+q+"\nAnswer:", true, false)
		if err != nil {
			t.Fatal(err)
		}
		prompts = append(prompts, toks)
	}
	if n := commonPrefix(prompts); n < MinSharedPrefix {
		t.Fatalf("test prompts share only %d tokens", n)
	}
	opt := GenerateOptions{MaxTokens: 6}
	a, err := batched.GenerateBatch(context.Background(), prompts, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := batched.GenerateBatch(context.Background(), prompts, opt)
	if err != nil {
		t.Fatal(err)
	}
	for s := range prompts {
		if a[s].SharedPrefix < MinSharedPrefix {
			t.Errorf("sequence %d: shared prefix %d, want ≥ %d", s, a[s].SharedPrefix, MinSharedPrefix)
		}
		one, err := single.Generate(context.Background(), prompts[s], opt)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a[s].Tokens {
			x, y := a[s].Tokens[i], b[s].Tokens[i]
			if x.ID != y.ID || math.Float64bits(x.EntropyBits) != math.Float64bits(y.EntropyBits) {
				t.Fatalf("sequence %d token %d: two batched runs differ", s, i)
			}
		}
		// The first token comes straight from the prompt: it must be the
		// same token as alone, with nearly the same distribution.
		x, y := a[s].Tokens[0], one.Tokens[0]
		if x.ID != y.ID || math.Abs(x.EntropyBits-y.EntropyBits) > 1e-2 {
			t.Errorf("sequence %d: batched first token %d (H %.6f) vs alone %d (H %.6f)", s, x.ID, x.EntropyBits, y.ID, y.EntropyBits)
		}
		t.Logf("sequence %d: batched %q, alone %q", s, a[s].Text, one.Text)
	}
}
