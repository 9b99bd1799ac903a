package probe

import (
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// TestPlanBatchesAndSHA: batches are consecutive NSeq-groups of the order per
// model; the plan sha256 ignores the shard and the output directory and
// changes with anything that defines the plan.
func TestPlanBatchesAndSHA(t *testing.T) {
	ts, err := templates.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	set, err := templates.Generate(ts, templates.Options{Variants: []templates.Variant{templates.VariantBase, templates.VariantNoop}, Instances: 2, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	setData, err := setBytes(set)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rundir.Config{Models: []string{"a.gguf", "b.gguf"}, Templates: "builtin", Variants: []templates.Variant{templates.VariantBase, templates.VariantNoop},
		Instances: 2, Seed: 5, MaxTokens: 8, Params: llm.Params{NSeq: 3, NCtx: 512}}
	bs := PlanBatches(cfg, set)
	n := len(set.Instances)
	per := (n + 2) / 3
	if len(bs) != 2*per {
		t.Fatalf("%d batches for %d instances × 2 models at NSeq 3, want %d", len(bs), n, 2*per)
	}
	order := Order(n, cfg.Seed)
	for mi := 0; mi < 2; mi++ {
		pos := 0
		for _, b := range bs[mi*per : (mi+1)*per] {
			if b.Model != mi || len(b.Items) == 0 || len(b.Items) > 3 {
				t.Fatalf("batch of model %d: model %d, %d items", mi, b.Model, len(b.Items))
			}
			for _, it := range b.Items {
				if want := itemID(mi, &set.Instances[order[pos]]); it.ID != want {
					t.Fatalf("item %d of model %d is %s, want %s (the order)", pos, mi, it.ID, want)
				}
				pos++
			}
		}
		if pos != n {
			t.Fatalf("model %d: %d items in batches, want %d", mi, pos, n)
		}
	}

	sha := []string{"aa", "bb"}
	base := PlanSHA256(cfg, set, setData, sha, nil)
	same := cfg
	same.Shard, same.OutDir = &rundir.Shard{Index: 2, Count: 3}, "elsewhere"
	if got := PlanSHA256(same, set, setData, sha, nil); got != base {
		t.Errorf("shard or output directory changed the plan sha256")
	}
	for name, change := range map[string]func() string{
		"seed":      func() string { c := cfg; c.Seed = 6; return PlanSHA256(c, set, setData, sha, nil) },
		"batch":     func() string { c := cfg; c.Params.NSeq = 2; return PlanSHA256(c, set, setData, sha, nil) },
		"threads":   func() string { c := cfg; c.Params.Threads = 7; return PlanSHA256(c, set, setData, sha, nil) },
		"model sha": func() string { return PlanSHA256(cfg, set, setData, []string{"aa", "cc"}, nil) },
		"set":       func() string { return PlanSHA256(cfg, set, append(setData[:len(setData):len(setData)], ' '), sha, nil) },
		"embedder":  func() string { return PlanSHA256(cfg, set, setData, sha, &rundir.Embedder{SHA256: "e", Level: "main"}) },
	} {
		if change() == base {
			t.Errorf("changing the %s did not change the plan sha256", name)
		}
	}
}
