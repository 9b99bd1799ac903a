package plan

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
	"github.com/fragility/fragility/templates"
)

// TestCheckVocabularies: files with vocabularies of different sizes are
// refused from their headers, before compare generates anything.
func TestCheckVocabularies(t *testing.T) {
	tiny := probetest.TinyModels(t, 2)
	if err := CheckVocabularies(tiny); err != nil {
		t.Errorf("two tiny models: %v", err)
	}
	err := CheckVocabularies([]string{tiny[0], probetest.GemmaModel(t)})
	if err == nil || !strings.Contains(err.Error(), "vocabulary of 262144 tokens") || !strings.Contains(err.Error(), tiny[0]) {
		t.Errorf("tiny and Gemma: %v", err)
	}
}

// TestPlanShards: the sizes of PlanShards add up to the plan, follow
// ShardBatches, and the times are tokens ÷ rate; the rates read from a
// bench JSON and from a run directory are the documented ratios.
func TestPlanShards(t *testing.T) {
	paths := probetest.TinyModels(t, 2)
	tdir := probetest.ShardTemplates(t)
	cfg := rundir.Config{Models: paths, Templates: tdir, Variants: []templates.Variant{templates.VariantBase, templates.VariantNoop},
		Instances: 2, Seed: 3, MaxTokens: 10, Params: llm.Params{NSeq: 4, NCtx: 256}}
	p, err := PlanShards(cfg, ShardPlanOptions{Shards: 3, TokensPerItem: 6, TokensPerItemSource: "test", Rate: Throughput{TokensPerSecond: 2, Source: "test"}, Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := templates.Load(tdir)
	set, _ := templates.Generate(ts, templates.Options{Variants: cfg.Variants, Instances: 2, Seed: 3})
	n := len(set.Instances)
	if p.Instances != n || p.Items != 2*n || p.Batches != 2*((n+3)/4) || p.GenTokensMax != int64(20*n) || p.GenTokens != float64(12*n) || p.Seconds != float64(6*n) {
		t.Errorf("plan totals: %+v (set of %d)", p, n)
	}
	items := 0
	for k, s := range p.Shards {
		lo, hi := rundir.ShardBatches(rundir.Shard{Index: k + 1, Count: 3}, p.Batches)
		if s.FirstBatch != lo || s.Batches != hi-lo || s.Seconds != float64(s.Items)*6/2 || s.GenTokensMax != int64(s.Items*10) || len(s.Models) == 0 || s.MemoryBytes == 0 {
			t.Errorf("shard %s: %+v, want batches [%d,%d)", s.Shard, s, lo, hi)
		}
		items += s.Items
	}
	if items != p.Items {
		t.Errorf("shards hold %d items, the plan %d", items, p.Items)
	}
	for _, m := range p.Models {
		if m.MemoryBytes < uint64(m.SizeBytes) {
			t.Errorf("%s: memory estimate %d below its size %d", m.Path, m.MemoryBytes, m.SizeBytes)
		}
	}
	// With the calculator condition every instance runs twice: twice the
	// items, in batches of one condition each.
	cc := cfg
	cc.Conditions = []string{results.ConditionNone, results.ConditionCalculator}
	if pc, err := PlanShards(cc, ShardPlanOptions{Shards: 1}); err != nil || pc.Conditions != 2 || pc.Items != 2*p.Items || pc.Batches != 2*p.Batches {
		t.Errorf("plan with two conditions: %+v, %v; want %d items in %d batches", pc, err, 2*p.Items, 2*p.Batches)
	}
	if _, err := PlanShards(cfg, ShardPlanOptions{Shards: p.Batches + 1}); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("more shards than batches: %v", err)
	}

	dir := t.TempDir()
	bench := dir + "/bench.json"
	os.WriteFile(bench, []byte(`{"b_ours_gen_tokens_per_s":{"mean":20},"c_batch":4,"c_single_items_per_s":0.5,"c_batched_items_per_s":1.5}`), 0o644)
	if r, err := BenchThroughput(bench, 4); err != nil || r.TokensPerSecond != 60 {
		t.Errorf("bench at the same batch: %+v, %v; want 20 × 3 = 60 tokens/s", r, err)
	}
	if r, err := BenchThroughput(bench, 8); err != nil || r.TokensPerSecond != 20 || !strings.Contains(r.Source, "upper bounds") {
		t.Errorf("bench at another batch: %+v, %v; want 20 tokens/s, flagged", r, err)
	}

	run := filepath.Join(dir, "run")
	rc := cfg
	rc.Models, rc.OutDir, rc.Params.Threads = paths[:1], run, 1
	if _, err := probe.Run(context.Background(), rc, probe.Options{}); err != nil {
		t.Fatal(err)
	}
	r, tok, prompt, err := RunThroughput(run, 0)
	if err != nil {
		t.Fatal(err)
	}
	man, _ := rundir.ReadManifest(run)
	f, _ := os.Open(filepath.Join(run, rundir.FileResults))
	trials, _ := results.ReadCSV(f)
	f.Close()
	sum, np, n2 := 0, 0, 0
	for _, tr := range trials {
		if !tr.Skipped() {
			sum += tr.Tokens
			np += tr.PromptTokens
			n2++
		}
	}
	if r.TokensPerSecond != float64(sum)/man.GenerationSeconds || tok != float64(sum)/float64(n2) || prompt != float64(np)/float64(n2) {
		t.Errorf("RunThroughput = %v, %v, %v; want %v, %v, %v", r.TokensPerSecond, tok, prompt, float64(sum)/man.GenerationSeconds, float64(sum)/float64(n2), float64(np)/float64(n2))
	}
}
