package llm

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/fragility/fragility/models"
)

// TestEntropyPoolSameBits generates on both default models with the pass
// pool off (every pass inline, before the next decode) and on with one and
// with three workers, a batch of two sequences and one alone, and compares
// every recorded number bit for bit. With the pool the passes must read the
// logits in place (the pass guard met the logits node), and a fourth run
// delays every pass by longer than a decode takes (testPassDelay), so that
// a pass reading a row the next decode had overwritten would record another
// token's numbers; a fifth decodes on two threads with no pool, each pass
// on the context's ggml thread pool (threadPool). It also replays the batch
// with kernel v1: the same tokens, entropies within 1e-12 bits.
func TestEntropyPoolSameBits(t *testing.T) {
	if testing.Short() {
		t.Skip("loads both default models five times")
	}
	questions := []string{"Question: what is 12 times 11?\nAnswer:", "Question: a train leaves at 3 pm and travels for 2 hours. When does it arrive?\nAnswer:"}
	for _, name := range []string{gemmaName, chatName} {
		path, err := models.PathOf(name)
		if err != nil {
			t.Fatal(err)
		}
		var ref [][]TokenRecord
		for run, c := range []struct{ pool, threads int }{{-1, 1}, {1, 1}, {3, 1}, {1, 1}, {-1, 2}} {
			pool := c.pool
			if run == 3 {
				testPassDelay = 200 * time.Millisecond
			}
			old := EntropyPool
			EntropyPool = pool
			m, err := Load(path, Params{Threads: c.threads, ThreadsBatch: c.threads, NCtx: 512, NSeq: 2})
			EntropyPool = old
			if err != nil {
				t.Fatal(err)
			}
			if want := max(pool, 0); m.EntropyPoolSize() != want {
				t.Errorf("%s: EntropyPool %d gave a pool of %d workers", name, pool, m.EntropyPoolSize())
			}
			if (m.tp != nil) != (c.threads > 1) {
				t.Errorf("%s: %d threads, no pass pool: context thread pool %v", name, c.threads, m.tp != nil)
			}
			var prompts [][]Token
			for _, q := range questions {
				toks, err := m.Tokenize(q, true, false)
				if err != nil {
					t.Fatal(err)
				}
				prompts = append(prompts, toks)
			}
			opt := GenerateOptions{MaxTokens: 32, IgnoreEOS: true}
			two, err := m.GenerateBatch(context.Background(), prompts, opt)
			if err != nil {
				t.Fatal(err)
			}
			one, err := m.Generate(context.Background(), prompts[1], opt)
			if err != nil {
				t.Fatal(err)
			}
			got := [][]TokenRecord{two[0].Tokens, two[1].Tokens, one.Tokens}
			testPassDelay = 0
			if inPlace := m.passesInPlace(); inPlace != (pool > 0) {
				t.Errorf("%s: pool %d: passes in place %v", name, pool, inPlace)
			}
			if pool == -1 {
				opt.EntropyKernel = EntropyKernelV1
				v1, err := m.GenerateBatch(context.Background(), prompts, opt)
				if err != nil {
					t.Fatal(err)
				}
				for s := range v1 {
					for i, x := range v1[s].Tokens {
						y := got[s][i]
						if x.ID != y.ID || math.Abs(x.EntropyBits-y.EntropyBits) > 1e-12 {
							t.Errorf("%s sequence %d token %d: kernel v1 %d (H %v), v2 %d (H %v)", name, s, i, x.ID, x.EntropyBits, y.ID, y.EntropyBits)
						}
					}
				}
			}
			m.Close()
			if ref == nil {
				ref = got
				continue
			}
			n := 0
			for k := range got {
				if len(got[k]) != len(ref[k]) {
					t.Fatalf("%s generation %d: %d tokens with pool %d, %d inline", name, k, len(got[k]), pool, len(ref[k]))
				}
				for i := range got[k] {
					x, y := got[k][i], ref[k][i]
					if x.ID != y.ID || x.Piece != y.Piece || !sameBits(x.EntropyBits, y.EntropyBits) || !sameBits(x.LogProb, y.LogProb) ||
						!sameBits(x.Prob, y.Prob) || !sameBits(x.TopProb, y.TopProb) {
						t.Fatalf("%s generation %d token %d: pool %d %+v, inline %+v", name, k, i, pool, x, y)
					}
					if x.EntropyBits <= 0 {
						t.Errorf("%s generation %d token %d: entropy %v not filled in", name, k, i, x.EntropyBits)
					}
					n++
				}
			}
			t.Logf("%s: pool of %d workers, %d threads: %d tokens, every number bit-identical to the inline passes (%s)", name, pool, c.threads, n, time.Now().Format("15:04:05"))
		}
	}
}

func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
