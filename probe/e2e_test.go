package probe

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/embed"
	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe/internal/probetest"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
	"github.com/fragility/fragility/templates"
)

func defaultPath(t *testing.T, kind string) string {
	t.Helper()
	p, err := models.DefaultPath(kind)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunEndToEnd runs the probe on the fast Gemma model and the default
// embedder with a tiny budget and checks that every file agrees with every
// other.
func TestRunEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real model")
	}
	e, err := embed.Open(defaultPath(t, "embedder"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cls, err := embed.NewClassifier(e, embed.LevelMain)
	if err != nil {
		t.Fatal(err)
	}
	classify := func(texts []string) ([]DDC, error) {
		rs, err := cls.ClassifyAll(texts)
		if err != nil {
			return nil, err
		}
		out := make([]DDC, len(rs))
		for i, r := range rs {
			out[i] = DDC{Top: r.Top.Code, TopName: r.Top.Name, RunnerUp: r.RunnerUp.Code, Margin: r.Margin}
		}
		return out, nil
	}
	dir := t.TempDir()
	// Six built-in templates, so that the test's cost does not grow with the
	// library (68 templates × 3 variants took over 3 minutes on 2 cores).
	tdir := t.TempDir()
	for _, name := range []string{"baker", "cycling", "discount", "fruit-stand", "packing", "stickers"} {
		b, err := os.ReadFile(filepath.Join("..", "templates", "builtin", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tdir, name+".yaml"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := rundir.Config{
		Models:    []string{probetest.GemmaModel(t)},
		Templates: tdir,
		Variants:  []templates.Variant{templates.VariantBase, templates.VariantSymbolic, templates.VariantNoop},
		Instances: 1,
		Seed:      3,
		MaxTokens: 12,
		Shots:     1,
		Params:    llm.Params{Threads: 1, NCtx: 1024, NSeq: 2},
		OutDir:    dir,
	}
	sum, err := Run(context.Background(), cfg, Options{Classifier: classify, Embedder: &rundir.Embedder{Name: e.Name(), SHA256: e.SHA256()}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{rundir.FileManifest, rundir.FileResults, rundir.FileTraces, rundir.FileSummary, rundir.FileSet} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, en := range entries {
		if strings.Contains(en.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", en.Name())
		}
	}

	// Row counts: one per planned item, and one trace per row.
	ts, err := templates.Load(tdir)
	if err != nil {
		t.Fatal(err)
	}
	want := len(ts) * 3
	f, _ := os.Open(filepath.Join(dir, rundir.FileResults))
	trials, err := results.ReadCSV(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != want || sum.Trials != want {
		t.Fatalf("%d rows, summary %d trials, want %d", len(trials), sum.Trials, want)
	}
	traces, err := rundir.ReadTraces(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != want {
		t.Fatalf("%d traces, want %d", len(traces), want)
	}
	for i, tr := range traces {
		if tr.ItemID != trials[i].ItemID || len(tr.Tokens) != trials[i].Tokens || tr.BatchSize < 1 {
			t.Errorf("trace %d (%s, %d tokens) does not match row %s (%d tokens)", i, tr.ItemID, len(tr.Tokens), trials[i].ItemID, trials[i].Tokens)
		}
		if trials[i].DDCTop == "" || trials[i].DDCTopName == "" || trials[i].DDCRunnerUp == "" {
			t.Errorf("row %s has no DDC reading", trials[i].ItemID)
		}
	}

	// Accuracies recomputed from the CSV equal the summary's.
	raw, _ := os.ReadFile(filepath.Join(dir, rundir.FileResults))
	recs, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	// Distinct prompts per variant and template, each scored by the share
	// of its copies answered right.
	type unit struct{ right, copies int }
	units := map[string]map[string]*unit{}
	for _, r := range recs[1:] {
		if r[col["skip_reason"]] != "" {
			continue
		}
		v := r[col["variant"]]
		if units[v] == nil {
			units[v] = map[string]*unit{}
		}
		key := r[col["template"]] + "|" + r[col["question"]]
		if units[v][key] == nil {
			units[v][key] = &unit{}
		}
		units[v][key].copies++
		if r[col["correct"]] == "true" {
			units[v][key].right++
		}
	}
	k, n := map[string]float64{}, map[string]int{}
	for v, us := range units {
		for _, u := range us {
			k[v] += float64(u.right) / float64(u.copies)
		}
		n[v] = len(us)
	}
	var stored summary.Summary
	data, _ := os.ReadFile(filepath.Join(dir, rundir.FileSummary))
	if err := json.Unmarshal(data, &stored); err != nil {
		t.Fatal(err)
	}
	for _, v := range stored.Models[0].Variants {
		if math.Abs(v.K-k[v.Variant]) > 1e-9 || v.N != n[v.Variant] {
			t.Errorf("%s: summary %v/%d, CSV %v/%d", v.Variant, v.K, v.N, k[v.Variant], n[v.Variant])
		}
	}

	// The manifest holds what reproduces the run.
	man, err := rundir.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if man.Status != "complete" || man.LlamaCommit != llm.LlamaCommit || man.Models[0].SHA256 == "" ||
		man.Models[0].Metadata == nil || man.Config.Params.NSeq != 2 || man.Embedder == nil || man.ExtractionRules == "" {
		t.Errorf("manifest incomplete: %+v", man)
	}
	// Where the generation time went: llama_decode of prompts and steps
	// and the entropy passes within it, the answer scoring beside it.
	if ts := man.TimeSplit; ts == nil || !(ts.PrefillSeconds > 0 && ts.DecodeSeconds > 0 && ts.EntropySeconds > 0 && ts.AnswerScoreSeconds > 0) ||
		ts.PrefillSeconds+ts.DecodeSeconds > man.GenerationSeconds {
		t.Errorf("time split %+v of %.3f s of generation", man.TimeSplit, man.GenerationSeconds)
	}

	// WriteSummary re-renders the same summary from the files.
	if _, err := WriteSummary(dir); err != nil {
		t.Fatal(err)
	}
	data2, _ := os.ReadFile(filepath.Join(dir, rundir.FileSummary))
	if !bytes.Equal(data, data2) {
		t.Error("WriteSummary did not reproduce summary.json byte for byte")
	}

	// An existing run directory is not overwritten without Force.
	if _, err := Run(context.Background(), cfg, Options{}); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("second run into %s: %v, want a refusal naming --force", dir, err)
	}
}
