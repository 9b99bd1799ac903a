package probe

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/internal/probetest"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

func writeOverrides(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "overrides.jsonl")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadOverridesErrors: each bad line is refused naming file and line.
func TestReadOverridesErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"template": "a", "answer": "x"}`, `:1: answer "x" is not a number`},
		{`{"template": "a"}`, `:1: give one of "answer"`},
		{`{"answer": "3"}`, `:1: give one of "template" or "item"`},
		{`{"template": "a", "item": "a/base/0", "answer": "3"}`, `:1: give one of "template" or "item"`},
		{`{"template": "a", "answer": "3", "exclude": "no"}`, `:1: give one of "answer"`},
		{"{\"template\": \"a\", \"answer\": \"3\"}\n{\"template\": \"a\", \"exclude\": \"wrong\"}", `:2: template a is overridden twice (also line 1)`},
		{`{"template": "a", "answr": "3"}`, `:1: bad JSON`},
		{"\x00\x01binary", `:1: bad JSON`},
		{"", "no override in the file"},
		{"# only a comment\n", "no override in the file"},
	} {
		_, _, err := ReadOverrides(writeOverrides(t, c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", c.body, err, c.want)
		}
	}
	if _, _, err := ReadOverrides(filepath.Join(t.TempDir(), "none.jsonl")); err == nil || !strings.Contains(err.Error(), "none.jsonl") {
		t.Errorf("missing file: %v", err)
	}
}

// TestApplyOverrides: a corrected answer re-scores from the recorded
// extraction; an exclusion drops the trial; an item override wins over its
// template's; an override that matches nothing is an error.
func TestApplyOverrides(t *testing.T) {
	trials := []results.Trial{
		{ItemID: "m0/a/base/0", TemplateID: "a", Expected: "144", Extracted: "180", Rule: "final_answer", Response: "so 180", Correct: false},
		{ItemID: "m0/a/base/1", TemplateID: "a", Expected: "144", Extracted: "144", Rule: "final_answer", Response: "144", Correct: true},
		{ItemID: "m0/b/base/0", TemplateID: "b", Expected: "2", Extracted: "2", Rule: "final_answer", Correct: true},
		{ItemID: "m0/c/base/0", TemplateID: "c", Expected: "5", Extracted: "5", Rule: "final_answer", Correct: true},
	}
	p := writeOverrides(t, `{"template": "a", "answer": "180", "reason": "the source's label is wrong"}
{"item": "a/base/1", "exclude": "ambiguous wording"}
{"template": "b", "exclude": "duplicate of c"}
`)
	ovs, _, err := ReadOverrides(p)
	if err != nil {
		t.Fatal(err)
	}
	out, n, x, err := ApplyOverrides(trials, ovs, p)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || x != 2 || len(out) != 2 {
		t.Fatalf("overridden %d, excluded %d, kept %d; want 1, 2, 2", n, x, len(out))
	}
	if out[0].ItemID != "m0/a/base/0" || !out[0].Correct || out[0].Expected != "180" || !out[0].ExpectedAnywhere {
		t.Errorf("corrected trial: %+v", out[0])
	}
	if out[1].ItemID != "m0/c/base/0" || !out[1].Correct {
		t.Errorf("untouched trial: %+v", out[1])
	}
	p2 := writeOverrides(t, `{"template": "zz", "exclude": "gone"}`)
	ovs, _, _ = ReadOverrides(p2)
	if _, _, _, err := ApplyOverrides(trials, ovs, p2); err == nil || !strings.Contains(err.Error(), ":1: template zz is not in the run") {
		t.Errorf("unmatched override: %v", err)
	}
}

// TestRunWithOverrides: a run on Gemma 3 270M with one template's answer
// corrected and the other excluded: the summary counts them, the manifest
// records the file's sha256, results.csv keeps the original labels.
func TestRunWithOverrides(t *testing.T) {
	model := probetest.GemmaModel(t)
	ov := writeOverrides(t, "{\"template\": \"baker\", \"answer\": \"1\"}\n{\"template\": \"stickers\", \"exclude\": \"checking exclusion\"}\n")
	out := filepath.Join(t.TempDir(), "run")
	cfg := rundir.Config{Models: []string{model}, Templates: probetest.TinyTemplates(t), Variants: []templates.Variant{templates.VariantBase, templates.VariantNoop},
		Instances: 1, Seed: 7, MaxTokens: 8, BootstrapB: 50, Overrides: ov,
		Params: llm.Params{Threads: 1, NCtx: 512, NSeq: 2}, OutDir: out}
	sum, err := Run(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Overrides == nil || sum.Overrides.Overridden != 2 || sum.Overrides.Excluded != 2 || len(sum.Templates) != 1 {
		t.Fatalf("overrides %+v, templates %v; want 2 overridden, 2 excluded, only baker", sum.Overrides, sum.Templates)
	}
	man, err := rundir.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if man.Config.OverridesSHA256 != sum.Overrides.SHA256 || len(man.Config.OverridesSHA256) != 64 {
		t.Errorf("manifest sha256 %q, summary %q", man.Config.OverridesSHA256, sum.Overrides.SHA256)
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
	if len(trials) != 4 {
		t.Errorf("results.csv has %d trials, want all 4", len(trials))
	}
	for _, tr := range trials {
		if tr.TemplateID == "baker" && tr.Expected == "1" {
			t.Error("results.csv holds the corrected label, want the original")
		}
	}
	// A changed overrides file is refused by a later report.
	os.WriteFile(ov, []byte(`{"template": "baker", "answer": "2"}`), 0o644)
	if _, err := Recompute(out); err == nil || !strings.Contains(err.Error(), "changed since the run") {
		t.Errorf("changed overrides: %v", err)
	}
}
