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
	"github.com/fragility/fragility/probe/plan"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
)

// paperFolder builds a GSM-Symbolic templates folder for the preset: in
// symbolic/, the first two published templates of the development copy
// in ../shared (skipped when it is absent: the files are never in the
// repository) and our rolls fixture; in p1/, our p1 rolls fixture.
func paperFolder(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "..", "shared", "gsm_symbolic", "symbolic")
	if _, err := os.Stat(filepath.Join(src, "0000.json")); err != nil {
		t.Skipf("no GSM-Symbolic development copy at %s", src)
	}
	dir := t.TempDir()
	sym := copyFixtures(t, dir, "symbolic")
	for _, f := range []string{"dice.json", "path.json"} {
		os.Remove(filepath.Join(sym, f))
	}
	for _, f := range []string{"0000.json", "0001.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(sym, f), b, 0o644)
	}
	copyFixtures(t, dir, "p1")
	return dir
}

// TestPresetPaperRun runs --preset gsm-symbolic-paper on the fast model
// (2 datasets, a short output budget) and checks the manifest's record of
// the expansion, and the paper section of summary.json against the trials
// in results.csv: each dataset's accuracy, mean and sd recomputed here;
// the narrative's table and the report's histogram are there.
func TestPresetPaperRun(t *testing.T) {
	dir := paperFolder(t)
	out := filepath.Join(t.TempDir(), "run")
	r := fragility(t, nil, "run", "--model", gemmaName, "--templates", dir, "--preset", "gsm-symbolic-paper",
		"--instances", "2", "--max-tokens", "16", "--no-ddc", "--quiet", "--out", out)
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, tail(r.stderr))
	}
	if !strings.Contains(r.stderr, "--preset gsm-symbolic-paper: levels symbolic, p1; set --prompt gsm-symbolic --variants base,symbolic,noop-seeming --reference drawn --temperature 0; as given: --instances") {
		t.Errorf("no preset line on stderr:\n%s", r.stderr)
	}
	man, err := rundir.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	p := man.Config.Preset
	if p == nil || p.Name != "gsm-symbolic-paper" || p.Expanded["variants"] != "base,symbolic,noop-seeming" ||
		!slices.Equal(p.Given, []string{"instances"}) || !slices.Equal(p.Levels, []string{"symbolic", "p1"}) ||
		man.Config.Prompt != probe.PromptGSMSymbolic || man.Config.Instances != 2 || man.Config.Temperature != 0 {
		t.Fatalf("manifest: preset %+v prompt %q instances %d", p, man.Config.Prompt, man.Config.Instances)
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
	var s summary.Summary
	b, _ := os.ReadFile(filepath.Join(out, rundir.FileSummary))
	if err := json.Unmarshal(b, &s); err != nil || len(s.Paper) != 1 {
		t.Fatalf("summary.json paper section: %v, %d views", err, len(s.Paper))
	}
	checkPaperRows(t, s.Paper[0], trials)
	n, _ := os.ReadFile(filepath.Join(out, rundir.FileNarrative))
	page, _ := os.ReadFile(filepath.Join(out, "report.html"))
	if !strings.Contains(string(n), "| model | GSM8K (3) | Symbolic | P1 | NoOp |") || !strings.Contains(string(n), "It is not a confidence interval of the mean") ||
		!strings.Contains(string(n), "percentile") || !strings.Contains(string(page), `id="fig-paper-datasets"`) {
		t.Errorf("narrative or report lacks the paper's view")
	}
}

// checkPaperRows recomputes each row's datasets, mean and sd from the
// trials: variant symbolic at levels symbolic and p1, noop-seeming at
// symbolic; the originals from base at level symbolic.
func checkPaperRows(t *testing.T, v summary.PaperView, trials []results.Trial) {
	t.Helper()
	spec := map[string][2]string{"Symbolic": {"symbolic", "symbolic"}, "P1": {"p1", "symbolic"}, "NoOp": {"symbolic", "noop-seeming"}}
	if len(v.Rows) != 3 {
		t.Fatalf("rows: %+v", v.Rows)
	}
	for _, row := range v.Rows {
		sp := spec[row.Name]
		right, items := map[int]float64{}, map[int]float64{}
		for _, tr := range trials {
			if tr.Variant == sp[1] && tr.Level == sp[0] && !tr.Skipped() {
				items[tr.Instance]++
				if tr.Correct {
					right[tr.Instance]++
				}
			}
		}
		if len(items) != 2 || len(row.Datasets) != 2 {
			t.Fatalf("%s: %d datasets in the trials, %d in the summary", row.Name, len(items), len(row.Datasets))
		}
		a0, a1 := 100*right[0]/items[0], 100*right[1]/items[1]
		sd := math.Abs(a0-a1) / math.Sqrt2
		if math.Abs(row.Datasets[0].AccuracyPct-a0) > 1e-9 || math.Abs(row.Datasets[1].AccuracyPct-a1) > 1e-9 ||
			math.Abs(row.MeanPct-(a0+a1)/2) > 1e-9 || row.SDPct == nil || math.Abs(*row.SDPct-sd) > 1e-9 {
			t.Errorf("%s: datasets %+v mean %v sd %v; want %v, %v, sd %v", row.Name, row.Datasets, row.MeanPct, row.SDPct, a0, a1, sd)
		}
	}
	var k, n float64
	seen := map[string]bool{}
	for _, tr := range trials {
		if tr.Variant == "base" && tr.Level == "symbolic" && !seen[tr.TemplateID] {
			seen[tr.TemplateID] = true
			n++
			if tr.Correct {
				k++
			}
		}
	}
	if v.Originals == nil || v.Originals.Templates != 3 || math.Abs(v.Originals.AccuracyPct.Value-100*k/n) > 1e-9 {
		t.Errorf("originals %+v, want %v%% of %v", v.Originals, 100*k/n, n)
	}
}

// TestPresetPaperPlan: plan with the preset sizes the expanded run (an
// explicit --instances stays), gives the CPU time from the recorded rate
// when it measures none (--calibrate 0) and the GPU time as an
// assumption, says so; wrong usage exits 2.
func TestPresetPaperPlan(t *testing.T) {
	dir := paperFolder(t)
	r := fragility(t, nil, "plan", "--model", gemmaName, "--templates", dir, "--preset", "gsm-symbolic-paper", "--instances", "3", "--calibrate", "0")
	if r.code != 0 {
		t.Fatalf("plan: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"3 instances", fmt.Sprintf("Rate: %.1f generated", plan.PaperPresetCPURate.TokensPerSecond) + " tokens/s (recorded", "On a GPU: ", "ASSUMED, not measured here"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan output lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, args := range [][]string{
		{"plan", "--preset", "nosuch", "--templates", dir},
		{"plan", "--preset", "gsm-symbolic-paper"},
		{"plan", "--preset", "gsm-symbolic-paper", "--templates", t.TempDir()},
	} {
		if r := fragility(t, noModels(t), args...); r.code != exitUsage || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, want %d with one line:\n%s", args, r.code, exitUsage, r.stderr)
		}
	}
}

// TestGenerateSetReference: generate-set takes --reference as run does.
// drawn (the default) adds symbolic and draws noop-seeming on it; original
// draws it at the template's own values; another value is wrong usage. On
// a published template whose clauses cannot fit every drawn instance
// (0034 at 50 instances), the instances without a clause are left out and
// the template is kept.
func TestGenerateSetReference(t *testing.T) {
	count := func(out, variant, ref string) int {
		n := 0
		for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var in struct{ Variant, Reference string }
			if i > 0 && json.Unmarshal([]byte(l), &in) == nil && in.Variant == variant && in.Reference == ref {
				n++
			}
		}
		return n
	}
	base := []string{"generate-set", "--variants", "noop-seeming", "--instances", "1", "--out", "-"}
	r := fragility(t, nil, base...)
	if r.code != 0 || count(r.stdout, "symbolic", "") != 68 || count(r.stdout, "noop-seeming", "symbolic") != 68 {
		t.Errorf("drawn: exit %d, %d symbolic, %d noop-seeming on symbolic\n%s", r.code, count(r.stdout, "symbolic", ""), count(r.stdout, "noop-seeming", "symbolic"), r.stderr)
	}
	r = fragility(t, nil, append(base, "--reference", "original")...)
	if r.code != 0 || count(r.stdout, "symbolic", "") != 0 || count(r.stdout, "noop-seeming", "") != 68 {
		t.Errorf("original: exit %d\n%s", r.code, r.stderr)
	}
	if r := fragility(t, nil, append(base, "--reference", "x")...); r.code != exitUsage || !strings.Contains(r.stderr, `--reference "x": want drawn or original`) {
		t.Errorf("--reference x: exit %d\n%s", r.code, r.stderr)
	}
	src := filepath.Join("..", "..", "..", "shared", "gsm_symbolic", "symbolic", "0034.json")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Skipf("no GSM-Symbolic development copy: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "symbolic")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "0034.json"), b, 0o644)
	r = fragility(t, nil, "generate-set", "--templates", dir, "--variants", "noop-seeming", "--instances", "50", "--out", "-")
	n := count(r.stdout, "noop-seeming", "symbolic")
	if r.code != 0 || strings.Contains(r.stderr, "skipped") || n == 0 || n == 50 || !strings.Contains(r.stdout, "not drawn on the symbolic instance") {
		t.Errorf("0034 at 50 instances: exit %d, %d noop-seeming instances\n%s", r.code, n, r.stderr)
	}
}
