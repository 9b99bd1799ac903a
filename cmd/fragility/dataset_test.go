package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
	"github.com/fragility/fragility/templates/fixtures"
)

// datasetCommit is the snapshot of the fixture datasets in the hub cache.
const datasetCommit = "0123456789abcdef0123456789abcdef01234567"

// datasetHub lays out our fixture as the Hugging Face dataset
// apple/GSM-Symbolic lies in the hub cache after a download (configs maps
// a config to its file) and returns the environment that points at it.
func datasetHub(t *testing.T, configs map[string]string) []string {
	t.Helper()
	cache := filepath.Join(t.TempDir(), "hub")
	if _, err := fixtures.WriteHFDataset(cache, "apple/GSM-Symbolic", datasetCommit, configs); err != nil {
		t.Fatal(err)
	}
	return []string{"HF_HUB_CACHE=" + cache, "HF_HOME="}
}

// TestDatasetRun runs --dataset hf:datasets/apple/GSM-Symbolic (our
// fixture in its format: 2 templates × 3 instances and their 2 originals)
// on the fast model with a short budget: the 2 originals as base, the 6
// instances as symbolic, the gsm-symbolic prompt by default; the manifest
// records the dataset, and the paper's view in summary.json has one
// dataset per instance index, recomputed here from results.csv.
func TestDatasetRun(t *testing.T) {
	env := datasetHub(t, map[string]string{"main": fixtures.Dataset("main", 2, 3)})
	out := filepath.Join(t.TempDir(), "run")
	r := fragility(t, env, "run", "--model", gemmaName, "--dataset", "hf:datasets/apple/GSM-Symbolic", "--shots", "1", "--max-tokens", "8",
		"--bootstrap", "50", "--no-ddc", "--no-html", "--quiet", "--out", out)
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, tail(r.stderr))
	}
	if !strings.Contains(r.stderr, "fragility: --dataset: 2 templates (levels symbolic), 2 originals asked once as base, 3 of its 3 datasets as symbolic; --prompt gsm-symbolic") {
		t.Errorf("no dataset line on stderr:\n%s", r.stderr)
	}
	man, err := rundir.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if c := man.Config; !slices.Equal(c.Datasets, []string{"hf:datasets/apple/GSM-Symbolic"}) || c.Prompt != probe.PromptGSMSymbolic || c.Instances != 3 || c.Templates != "" {
		t.Errorf("manifest config: datasets %v prompt %q instances %d templates %q", c.Datasets, c.Prompt, c.Instances, c.Templates)
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
	per := map[string]int{}
	for _, tr := range trials {
		per[fmt.Sprintf("%s/%s/%s", tr.Variant, tr.Level, tr.IDOrig)]++
		if tr.Variant == "base" && tr.Instance != 0 {
			t.Errorf("base trial at instance %d", tr.Instance)
		}
	}
	if len(trials) != 8 || per["base/symbolic/9201"] != 1 || per["base/symbolic/9202"] != 1 || per["symbolic/symbolic/9201"] != 3 || per["symbolic/symbolic/9202"] != 3 {
		t.Fatalf("%d trials: %v", len(trials), per)
	}
	var s summary.Summary
	b, _ := os.ReadFile(filepath.Join(out, rundir.FileSummary))
	if err := json.Unmarshal(b, &s); err != nil || len(s.Paper) != 1 {
		t.Fatalf("summary.json paper section: %v, %d views", err, len(s.Paper))
	}
	v := s.Paper[0]
	if v.Originals == nil || v.Originals.Templates != 2 || len(v.Rows) != 1 || v.Rows[0].Name != summary.PaperSymbolic {
		t.Fatalf("paper view: %+v", v)
	}
	row := v.Rows[0]
	right, items := map[int]float64{}, map[int]float64{}
	for _, tr := range trials {
		if tr.Variant == "symbolic" && !tr.Skipped() {
			items[tr.Instance]++
			if tr.Correct {
				right[tr.Instance]++
			}
		}
	}
	if len(row.Datasets) != 3 {
		t.Fatalf("datasets: %+v", row.Datasets)
	}
	var accs []float64
	for i, d := range row.Datasets {
		want := 100 * right[i] / items[i]
		accs = append(accs, want)
		if d.Instance != i || d.Items != 2 || math.Abs(d.AccuracyPct-want) > 1e-9 {
			t.Errorf("dataset %d: %+v, want %v%% of 2", i, d, want)
		}
	}
	mean := (accs[0] + accs[1] + accs[2]) / 3
	if math.Abs(row.MeanPct-mean) > 1e-9 || row.SDPct == nil || row.DropPP == nil || row.OriginalsPercentile == nil {
		t.Errorf("row: mean %v (want %v) sd %v drop %v percentile %v", row.MeanPct, mean, row.SDPct, row.DropPP, row.OriginalsPercentile)
	}
	n, _ := os.ReadFile(filepath.Join(out, rundir.FileNarrative))
	if !strings.Contains(string(n), "| model | GSM8K (2) | Symbolic |") {
		t.Errorf("narrative lacks the paper's table")
	}
}

// TestDatasetBadInput: a dataset file of another shape, a config that is
// not there, an answer without "#### N" and an (id, instance) pair given
// twice are each one line naming the file (and line), exit 1, and nothing
// runs (no run directory); a variant other than base and symbolic, or
// --dataset with --templates, is wrong usage in one line.
func TestDatasetBadInput(t *testing.T) {
	env := append(datasetHub(t, map[string]string{"main": fixtures.Dataset("main", 2, 3)}), noModels(t)...)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name, "test.jsonl")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	rows := fixtures.DatasetRows("main", 2, 3)
	noHash, dup := slices.Clone(rows), slices.Clone(rows)
	noHash[4].Answer = strings.Replace(noHash[4].Answer, "####", "The answer is", 1)
	dup[5].ID, dup[5].Instance = 1, 0
	gsm8k := write("gsm8k", `{"question": "Two plus two?", "answer": "2+2=<<2+2=4>>4\n#### 4"}`+"\n")
	answers := write("answers", fixtures.DatasetJSONL(noHash))
	dups := write("dups", fixtures.DatasetJSONL(dup))
	hub := strings.TrimPrefix(env[0], "HF_HUB_CACHE=")
	snap := filepath.Join(hub, "datasets--apple--GSM-Symbolic", "snapshots", datasetCommit)
	for _, tc := range []struct {
		name, dataset string
		want          []string
	}{
		{"another shape", gsm8k, []string{gsm8k + ":1: a GSM8K row (question and answer only), not a released GSM-Symbolic instance"}},
		{"no config", "hf:datasets/apple/GSM-Symbolic:p1", []string{"hf:datasets/apple/GSM-Symbolic:p1: no config p1 in snapshot " + snap + " (configs: main)"}},
		{"no ####", answers, []string{answers + ":5: answer does not end with \"#### N\""}},
		{"duplicate", dups, []string{dups + ":6: template 1, instance 0 given twice at level symbolic (first at line 4)"}},
	} {
		out := filepath.Join(dir, "out-"+strings.ReplaceAll(tc.name, " ", "-"))
		for _, cmd := range []string{"run", "plan"} {
			args := []string{cmd, "--dataset", tc.dataset}
			if cmd == "run" {
				args = append(args, "--out", out)
			}
			oneErrorLine(t, cmd+" "+tc.name, fragility(t, env, args...), tc.want...)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: the run directory was made", tc.name)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--variants", "base,noop-seeming"}, "--variants noop-seeming: --dataset holds the originals (base) and the released instances (symbolic); no other variant is drawn for them"},
		{[]string{"--templates", "builtin"}, "--dataset and --templates: give one or the other"},
		{[]string{"--instances", "4"}, "--instances 4: the dataset holds 3 datasets (instances 0 to 2)"},
		{[]string{"--preset", "gsm-symbolic-paper", "--variants", "noop"}, "--variants noop: --dataset holds"},
	} {
		args := append([]string{"run", "--dataset", "hf:datasets/apple/GSM-Symbolic", "--out", filepath.Join(dir, "usage")}, tc.args...)
		r := fragility(t, env, args...)
		line := strings.TrimSuffix(r.stderr, "\n")
		if r.code != exitUsage || strings.Contains(line, "\n") || !strings.Contains(line, tc.want) {
			t.Errorf("%v: exit %d, want %d with one line containing %q:\n%s", tc.args, r.code, exitUsage, tc.want, r.stderr)
		}
	}
}

// TestDatasetPlan: plan --dataset sizes the run on the released instances
// as run makes it: the paper's 100 templates × 50 datasets are 5,000
// items per level, the originals once each; with --preset
// gsm-symbolic-paper the prompt and variants the dataset has.
func TestDatasetPlan(t *testing.T) {
	env := append(datasetHub(t, map[string]string{"main": fixtures.Dataset("main", 100, 50), "p1": fixtures.Dataset("p1", 100, 50)}), noModels(t)...)
	r := fragility(t, env, "plan", "--dataset", "hf:datasets/apple/GSM-Symbolic", "--dataset", "hf:datasets/apple/GSM-Symbolic:p1")
	if r.code != 0 {
		t.Fatalf("plan: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		"Run: 10100 items (dataset hf:datasets/apple/GSM-Symbolic, hf:datasets/apple/GSM-Symbolic:p1: 100 originals asked once as base; level symbolic: 5000 released instances (100 templates × 50 datasets); level p1: 5000 released instances (100 templates × 50 datasets)) = 10100 items",
		"Paired drop of a variant against its reference (the original, asked once, paired with the instance-0 draw of its first template;",
		"100 templates (dataset hf:datasets/apple/GSM-Symbolic, hf:datasets/apple/GSM-Symbolic:p1) × 1 instance",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = fragility(t, env, "plan", "--dataset", "hf:datasets/apple/GSM-Symbolic", "--preset", "gsm-symbolic-paper", "--instances", "5")
	if r.code != 0 || !strings.Contains(r.stdout, "level symbolic: 500 released instances (100 templates × 5 datasets)") ||
		!strings.Contains(r.stderr, "--preset gsm-symbolic-paper: levels symbolic; set --prompt gsm-symbolic --variants base,symbolic") {
		t.Errorf("plan --preset: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
