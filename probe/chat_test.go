package probe

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/internal/probetest"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// TestChatModelFollowsTheFormat runs two built-in problems on the chat
// model (the default LLM) as make demo prompts it (the worked exemplars as
// earlier turns): the model's own chat template renders the prompt, every
// answer ends at the end-of-turn token, and its last line is the
// "Final answer: <number>" line the instruction asks for, which the
// extractor's first rule reads.
func TestChatModelFollowsTheFormat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real model")
	}
	p, err := models.PathOf(probetest.ChatName)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	cfg := rundir.Config{Models: []string{p}, Templates: probetest.TinyTemplates(t), Variants: []templates.Variant{templates.VariantBase},
		Instances: 1, Seed: 1, MaxTokens: 160, Shots: MaxShots, BootstrapB: 50,
		Params: llm.Params{Threads: 1, NCtx: 1024, NSeq: 2}, OutDir: out}
	if _, err := Run(context.Background(), cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	man, err := rundir.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if r := man.Prompt.Rendering["0"]; r != "model" {
		t.Errorf("rendering %q, want the model's own chat template", r)
	}
	f, err := os.Open(filepath.Join(out, rundir.FileResults))
	if err != nil {
		t.Fatal(err)
	}
	trials, err := results.ReadCSV(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 2 {
		t.Fatalf("%d trials, want 2", len(trials))
	}
	for _, tr := range trials {
		lines := strings.Split(strings.TrimSpace(tr.Response), "\n")
		last := lines[len(lines)-1]
		if tr.StopReason != llm.StopEOS || tr.Rule != answer.RuleFinalAnswer || !strings.HasPrefix(last, "Final answer:") {
			t.Errorf("%s: stop %q, rule %q, last line %q; want eos and a final %q line:\n%s",
				tr.ItemID, tr.StopReason, tr.Rule, last, "Final answer:", tr.Response)
		}
		t.Logf("%s: %d tokens, extracted %s, expected %s", tr.ItemID, tr.Tokens, tr.Extracted, tr.Expected)
	}
}
