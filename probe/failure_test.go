package probe

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/internal/probetest"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// TestModelFailingMidRun: a model that loads and then gives NaN logits
// stops the run with an error, and the manifest says "failed" with the
// reason, not "interrupted" (which would invite a resume that fails again).
func TestModelFailingMidRun(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nan.gguf")
	if _, err := llm.WriteTinyModel(p, llm.TinyOptions{Tokenizer: probetest.TinyTokenizer(t), Seed: 1, NaNWeights: true}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	cfg := rundir.Config{Models: []string{p}, Templates: probetest.TinyTemplates(t), Variants: []templates.Variant{templates.VariantBase},
		Instances: 1, Seed: 7, MaxTokens: 4, Params: llm.Params{Threads: 1, NSeq: 2}, OutDir: out}
	_, err := Run(context.Background(), cfg, Options{})
	if err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Fatalf("run on NaN weights: %v", err)
	}
	man, rerr := rundir.ReadManifest(out)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if man.Status != "failed" || !strings.Contains(man.FailReason, "NaN") {
		t.Errorf("manifest status %q, fail_reason %q; want failed with the NaN error", man.Status, man.FailReason)
	}
}

// TestOverridesCheckedBeforeRun: an overrides file naming a template the run
// does not have, or excluding every item, is refused before the run
// directory exists.
func TestOverridesCheckedBeforeRun(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"nomatch.jsonl": `{"template":"nosuch","answer":"5"}` + "\n",
		"all.jsonl":     `{"template":"baker","exclude":"bad label"}` + "\n" + `{"template":"stickers","exclude":"bad label"}` + "\n",
	} {
		ov := filepath.Join(dir, name)
		if err := os.WriteFile(ov, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name+".run")
		cfg := rundir.Config{Models: []string{probetest.GemmaModel(t)}, Templates: probetest.TinyTemplates(t), Variants: []templates.Variant{templates.VariantBase},
			Instances: 1, Seed: 7, MaxTokens: 4, Overrides: ov, Params: llm.Params{Threads: 1}, OutDir: out}
		_, err := Run(context.Background(), cfg, Options{})
		want := map[string]string{"nomatch.jsonl": "template nosuch is not in the run", "all.jsonl": "every trial of the run is excluded"}[name]
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), ov) {
			t.Errorf("%s: %v; want an error naming the file with %q", name, err, want)
		}
		if _, serr := os.Stat(out); serr == nil {
			t.Errorf("%s: the run directory was created", name)
		}
	}
}
