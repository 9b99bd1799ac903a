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

// TestKeepPrefix checks GenerateOptions.KeepPrefix: a batch decoded after a
// prefix kept from an earlier call gives the same tokens and the same
// entropy and log-probability bits as the same batch on a freshly loaded
// model, which decodes the prefix in that call; for one sequence at a time
// and for several. A prompt that does not start with the prefix makes the
// call ignore it and drop the kept cells.
func TestKeepPrefix(t *testing.T) {
	path := gemmaModel(t).Metadata().Path
	prefix := "You answer arithmetic questions with a number only. Here are the questions of today's quiz, one at a time.\n\nQuestion: "
	for _, nseq := range []int{1, 2} {
		load := func() *Model {
			m, err := Load(path, Params{Threads: 1, NCtx: 512, NSeq: nseq})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Close() })
			return m
		}
		kept := load()
		var prompts [][]Token
		for _, q := range []string{"What is 2 plus 2?", "What is 10 minus 3?", "How many legs does a spider have?", "What is 6 times 7?"} {
			toks, err := kept.Tokenize(prefix+q+"\nAnswer:", true, false)
			if err != nil {
				t.Fatal(err)
			}
			prompts = append(prompts, toks)
		}
		keep := prompts[0][:commonPrefix(prompts)]
		opt := GenerateOptions{MaxTokens: 8, KeepPrefix: keep}
		first, second := prompts[:nseq], prompts[2:2+nseq]
		if _, err := kept.GenerateBatch(context.Background(), first, opt); err != nil {
			t.Fatal(err)
		}
		if kept.kept == nil {
			t.Fatalf("n_seq %d: no prefix kept after the first call", nseq)
		}
		got, err := kept.GenerateBatch(context.Background(), second, opt)
		if err != nil {
			t.Fatal(err)
		}
		want, err := load().GenerateBatch(context.Background(), second, opt)
		if err != nil {
			t.Fatal(err)
		}
		for s := range second {
			if got[s].SharedPrefix != len(keep) {
				t.Errorf("n_seq %d sequence %d: shared prefix %d, want the kept %d", nseq, s, got[s].SharedPrefix, len(keep))
			}
			if len(got[s].Tokens) != len(want[s].Tokens) {
				t.Fatalf("n_seq %d sequence %d: %d tokens after a kept prefix, %d on a fresh model", nseq, s, len(got[s].Tokens), len(want[s].Tokens))
			}
			for i := range got[s].Tokens {
				x, y := got[s].Tokens[i], want[s].Tokens[i]
				if x.ID != y.ID || math.Float64bits(x.EntropyBits) != math.Float64bits(y.EntropyBits) || math.Float64bits(x.LogProb) != math.Float64bits(y.LogProb) {
					t.Fatalf("n_seq %d sequence %d token %d: kept prefix %d (H %v) vs fresh %d (H %v)", nseq, s, i, x.ID, x.EntropyBits, y.ID, y.EntropyBits)
				}
			}
		}
		other, err := kept.Tokenize("Question: what is 1 plus 1?", true, false)
		if err != nil {
			t.Fatal(err)
		}
		g, err := kept.GenerateBatch(context.Background(), [][]Token{other}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if g[0].SharedPrefix != 0 || kept.kept != nil {
			t.Errorf("n_seq %d: a prompt without the prefix: shared %d, kept %d tokens; want 0 and none", nseq, g[0].SharedPrefix, len(kept.kept))
		}
	}
}

// TestThreadCountsSameBits: the thread counts of llama.cpp (Threads for
// one-token decodes, ThreadsBatch for prompts and batched steps) change
// speed, not logits: a prompt and a batch of two give the same tokens and
// entropy bits with one thread and with two.
func TestThreadCountsSameBits(t *testing.T) {
	path := gemmaModel(t).Metadata().Path
	var ref [][]TokenRecord
	for _, th := range []int{1, 2} {
		m, err := Load(path, Params{Threads: th, ThreadsBatch: th, NCtx: 512, NSeq: 2})
		if err != nil {
			t.Fatal(err)
		}
		var prompts [][]Token
		for _, q := range []string{"Question: what is 12 times 11?\nAnswer:", "Question: name three rivers of Europe.\nAnswer:"} {
			toks, err := m.Tokenize(q, true, false)
			if err != nil {
				t.Fatal(err)
			}
			prompts = append(prompts, toks)
		}
		one, err := m.Generate(context.Background(), prompts[0], GenerateOptions{MaxTokens: 12})
		if err != nil {
			t.Fatal(err)
		}
		two, err := m.GenerateBatch(context.Background(), prompts, GenerateOptions{MaxTokens: 12})
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := [][]TokenRecord{one.Tokens, two[0].Tokens, two[1].Tokens}
		if ref == nil {
			ref = got
			continue
		}
		for k := range got {
			if len(got[k]) != len(ref[k]) {
				t.Fatalf("generation %d: %d tokens with 2 threads, %d with 1", k, len(got[k]), len(ref[k]))
			}
			for i := range got[k] {
				x, y := got[k][i], ref[k][i]
				if x.ID != y.ID || math.Float64bits(x.EntropyBits) != math.Float64bits(y.EntropyBits) {
					t.Fatalf("generation %d token %d: 2 threads %d (H %v), 1 thread %d (H %v)", k, i, x.ID, x.EntropyBits, y.ID, y.EntropyBits)
				}
			}
		}
	}
}
