package bench

import (
	"context"
	"runtime"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/internal/probetest"
)

// TestBenchTinyModel runs `fragility bench`'s measurement on a tiny model
// (one repeat of 32 tokens, 2 demo items in batches of 2, no DDC) and
// checks what it reports: positive rates and ratios, the demo items
// scored, and, when one thread leaves a core free, the series with every
// core decoding, which has no entropy pass pool (llm.DefaultEntropyPool: no
// core is free for it).
func TestBenchTinyModel(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a model")
	}
	m := probetest.TinyModels(t, 1)[0]
	cfg := BenchConfig{Model: m, Params: llm.Params{Threads: 1, GPULayers: 0}, PP: 16, TG: 32, Reps: 1, Batch: 2, Items: 2, Shots: 0, MaxTokens: 16, Seed: 1}
	r, err := Bench(context.Background(), cfg, nil, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if !(r.BareTG.Mean > 0 && r.OursTG.Mean > 0 && r.RatioBA > 0 && r.SingleIPS > 0 && r.BatchedIPS > 0) {
		t.Errorf("non-positive rates: %+v", r)
	}
	// The split of a token's time accounts for (b)'s time: its parts are
	// positive and add up to at most (b)'s ms per token (the clock reads
	// between them are the rest).
	sp, oursMs := r.Split, 1000/r.OursTG.Mean
	if !(sp.ADecodeMs > 0 && sp.BDecodeMs > 0 && sp.BStepMs > 0 && sp.BWaitMs >= 0) {
		t.Errorf("split %+v: want positive parts", sp)
	}
	if sum := sp.BDecodeMs + sp.BStepMs + sp.BWaitMs; sum > oursMs*1.0001 || sum < 0.8*oursMs {
		t.Errorf("split %+v sums to %.4f ms, (b) took %.4f ms per token", sp, sum, oursMs)
	}
	if r.Items != 2 || r.Batch != 2 || r.Threads != 1 {
		t.Errorf("items %d, batch %d, threads %d; want 2, 2, 1", r.Items, r.Batch, r.Threads)
	}
	if runtime.NumCPU() < 2 {
		if r.Busy != nil {
			t.Errorf("one core: a busy series was measured: %+v", r.Busy)
		}
		return
	}
	b := r.Busy
	if b == nil {
		t.Fatal("no series with every core decoding")
	}
	if b.Threads != runtime.NumCPU() || b.Pool != 0 || !(b.RatioBA > 0) || len(b.BareTG.Runs) != 1 {
		t.Errorf("busy series %+v: want %d threads, no pool, one repeat", b, runtime.NumCPU())
	}
	// As fragility bench without --threads: every core in Params (run's
	// default), one thread in the first series, which still gets the
	// every-core series.
	cfg.Params.Threads, cfg.FirstThreads = runtime.NumCPU(), 1
	r, err = Bench(context.Background(), cfg, nil, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if r.Threads != 1 || r.Busy == nil || r.Busy.Threads != runtime.NumCPU() || !(r.SingleIPS > 0 && r.BatchedIPS > 0) {
		t.Errorf("FirstThreads 1 with %d threads: first series at %d, busy %+v", runtime.NumCPU(), r.Threads, r.Busy)
	}
}
