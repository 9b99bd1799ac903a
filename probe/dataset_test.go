package probe

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
	"github.com/fragility/fragility/templates"
	"github.com/fragility/fragility/templates/fixtures"
)

// hfDatasetCache lays out our fixture as apple/GSM-Symbolic lies in the
// Hugging Face hub cache (configs main and p1, 2 templates × 3 instances
// each, the same two originals) and points HF_HUB_CACHE at it.
func hfDatasetCache(t *testing.T) {
	t.Helper()
	cache := filepath.Join(t.TempDir(), "hub")
	if _, err := fixtures.WriteHFDataset(cache, "apple/GSM-Symbolic", "0123456789abcdef0123456789abcdef01234567", map[string]string{
		"main": fixtures.Dataset("main", 2, 3), "p1": fixtures.Dataset("p1", 2, 3)}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HOME", "")
}

// TestDatasetPaperView: a run's item set on the released instances in the
// hub cache (hf:datasets/apple/GSM-Symbolic and :p1) holds each original
// once as base and each instance as symbolic at its level; scored trials
// of it give the paper's view per dataset (the instance index): the
// originals' row, Symbolic and P1 with one entry per dataset, their mean ±
// sd, the originals' percentile and the drop paired on the original.
func TestDatasetPaperView(t *testing.T) {
	hfDatasetCache(t)
	cfg := rundir.Config{Datasets: []string{"hf:datasets/apple/GSM-Symbolic", "hf:datasets/apple/GSM-Symbolic:p1"},
		Variants: []templates.Variant{templates.VariantBase, templates.VariantSymbolic}, Instances: 3, Seed: 1}
	set, err := GenerateSet(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSetCovers(cfg, set); err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, in := range set.Instances {
		per[string(in.Variant)+"/"+in.Level]++
	}
	if len(set.Instances) != 14 || per["base/symbolic"] != 2 || per["symbolic/symbolic"] != 6 || per["symbolic/p1"] != 6 {
		t.Fatalf("set: %d instances %v", len(set.Instances), per)
	}
	// Right (1) or wrong by template and instance: base t0 right, t1
	// wrong; symbolic t0 1 1 0, t1 1 0 0; p1 all wrong.
	right := map[string]bool{"gsms-0000/base/0": true, "gsms-0000/symbolic/0": true, "gsms-0000/symbolic/1": true, "gsms-0001/symbolic/0": true}
	var trials []results.Trial
	for _, in := range set.Instances {
		trials = append(trials, results.Trial{ItemID: "m0/" + in.ID, ModelPath: "m.gguf", ModelName: "M", Quantization: "Q4_K_M",
			TemplateID: in.TemplateID, Variant: string(in.Variant), Instance: in.Index, Level: in.Level, IDOrig: in.IDOrig,
			Relation: in.Relation, Steps: in.Steps, Question: in.Question, Expected: in.Answer, Correct: right[in.ID], Tokens: 10})
	}
	s, err := summary.Summarize(trials, summary.Params{BootstrapResamples: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Paper) != 1 {
		t.Fatalf("paper views: %d", len(s.Paper))
	}
	v := s.Paper[0]
	if v.Originals == nil || v.Originals.Templates != 2 || math.Abs(v.Originals.AccuracyPct.Value-50) > 1e-9 {
		t.Fatalf("originals: %+v", v.Originals)
	}
	if len(v.Rows) != 2 || v.Rows[0].Name != summary.PaperSymbolic || v.Rows[1].Name != summary.PaperP1 {
		t.Fatalf("rows: %+v", v.Rows)
	}
	sym, p1 := v.Rows[0], v.Rows[1]
	for i, want := range []float64{100, 50, 0} {
		if d := sym.Datasets[i]; d.Instance != i || d.Items != 2 || math.Abs(d.AccuracyPct-want) > 1e-9 {
			t.Errorf("symbolic dataset %d: %+v, want %v%%", i, d, want)
		}
	}
	if len(sym.Datasets) != 3 || math.Abs(sym.MeanPct-50) > 1e-9 || sym.SDPct == nil || math.Abs(*sym.SDPct-50) > 1e-9 || sym.Templates != 2 || sym.Trials != 6 {
		t.Errorf("symbolic: %d datasets, mean %v sd %v", len(sym.Datasets), sym.MeanPct, sym.SDPct)
	}
	// Originals at 50%: one dataset below, one equal: (1 + 0.5)/3.
	if sym.OriginalsPercentile == nil || math.Abs(*sym.OriginalsPercentile-50) > 1e-9 {
		t.Errorf("percentile %v, want 50", sym.OriginalsPercentile)
	}
	// Per trial, the original's result minus the trial's: t0 0 0 1, t1 -1 0 0.
	if sym.DropPP == nil || math.Abs(sym.DropPP.Value) > 1e-9 {
		t.Errorf("drop against the originals: %+v, want 0", sym.DropPP)
	}
	if len(p1.Datasets) != 3 || p1.MeanPct != 0 || p1.DropPP == nil || math.Abs(p1.DropPP.Value-50) > 1e-9 {
		t.Errorf("p1: %+v", p1)
	}
}

// TestDatasetConfigRefused: --dataset with templates, document items or a
// split, a variant other than base and symbolic, a name given twice, or a
// config that is not there is refused before anything runs.
func TestDatasetConfigRefused(t *testing.T) {
	hfDatasetCache(t)
	ref := "hf:datasets/apple/GSM-Symbolic"
	vs := []templates.Variant{templates.VariantBase, templates.VariantSymbolic}
	for _, tc := range []struct {
		cfg    rundir.Config
		want   string
		option bool
	}{
		{rundir.Config{Datasets: []string{ref}, Templates: "t.yaml", Variants: vs, Instances: 3}, "--dataset and --templates: give one or the other", true},
		{rundir.Config{Datasets: []string{ref}, Items: "d.jsonl", Variants: vs, Instances: 3}, "--dataset and --items", true},
		{rundir.Config{Datasets: []string{ref}, Split: templates.SplitDev, Variants: vs, Instances: 3}, "--split", true},
		{rundir.Config{Datasets: []string{ref}, Variants: []templates.Variant{templates.VariantNoop}, Instances: 3}, "--variants noop: the released instances are base", true},
		{rundir.Config{Datasets: []string{ref, ref + ":main"}, Variants: vs, Instances: 3}, "--dataset hf:datasets/apple/GSM-Symbolic:main is given twice", true},
		{rundir.Config{Datasets: []string{ref + ":p1"}, Level: "p2", Variants: vs, Instances: 3}, "--level p2: hf:datasets/apple/GSM-Symbolic:p1 is config p1, level p1", true},
		{rundir.Config{Datasets: []string{ref + ":p2"}, Variants: vs, Instances: 3}, "no config p2 in snapshot", false},
	} {
		_, err := GenerateSet(tc.cfg)
		var oe OptionError
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.As(err, &oe) != tc.option {
			t.Errorf("%+v: %v (option error %v), want %q", tc.cfg.Datasets, err, errors.As(err, &oe), tc.want)
		}
	}
}
