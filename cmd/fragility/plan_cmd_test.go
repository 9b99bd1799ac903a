package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/plan"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
	"github.com/fragility/fragility/templates"
)

// pilotRun writes a run directory without running a model: a manifest with
// the given primary variant and a results.csv of 8 templates × 3 instances
// in base, symbolic and noop, in the format of an older version (no level
// column, which later versions added).
func pilotRun(t *testing.T, primary string) string {
	t.Helper()
	dir := t.TempDir()
	man := rundir.Manifest{Config: rundir.Config{Models: []string{"m.gguf"}, Variants: []templates.Variant{"base", "symbolic", "noop"},
		Instances: 3, Seed: 3, BootstrapB: 200, Primary: primary}, GenerationSeconds: 12}
	data, _ := json.Marshal(man)
	if err := os.WriteFile(filepath.Join(dir, rundir.FileManifest), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var ts []results.Trial
	for ti := range 8 {
		tpl := fmt.Sprintf("t%d", ti)
		for inst := range 3 {
			for _, v := range []string{"base", "symbolic", "noop"} {
				q := "base question of " + tpl
				if v != "base" {
					q = fmt.Sprintf("%s question %d of %s", v, inst, tpl)
				}
				right := (ti+inst)%4 != 0
				switch v {
				case "noop":
					right = right && inst != 1
				case "symbolic":
					right = right && (ti+inst)%5 != 0
				}
				extracted := "7"
				if !right {
					extracted = "8"
				}
				ts = append(ts, results.Trial{ItemID: fmt.Sprintf("m0/%s/%s/%d", tpl, v, inst), ModelPath: "m.gguf", ModelName: "M",
					TemplateID: tpl, Variant: v, Instance: inst, Question: q, Correct: right, Tokens: 20, Rule: "final_answer",
					Expected: "7", Extracted: extracted, AnswerEntropyMean: 0.3 + 0.01*float64(ti), EntropyMean: 1})
			}
		}
	}
	var buf bytes.Buffer
	if err := results.WriteCSV(&buf, ts); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	lv := -1
	for i, h := range recs[0] {
		if h == "level" {
			lv = i
		}
	}
	if lv < 0 {
		t.Fatal("results.csv has no level column to drop")
	}
	var out bytes.Buffer
	w := csv.NewWriter(&out)
	for _, r := range recs {
		w.Write(append(append([]string{}, r[:lv]...), r[lv+1:]...))
	}
	w.Flush()
	if err := os.WriteFile(filepath.Join(dir, rundir.FileResults), out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// noModels is an environment in which the default model is not cached.
func noModels(t *testing.T) []string { return []string{"FRAGILITY_MODELS=" + t.TempDir()} }

// TestPlanCommand: `fragility plan` prints plan.PlanRun's plan, sizing then
// power, as one JSON object on request: the power analysis runs at the
// number of templates --templates yields and --instances; without a model at
// hand it says so in one line and sizes without memory; --drop is optional;
// --from gives the rate, tokens per item and variance components; wrong
// usage exits 2 with one line.
func TestPlanCommand(t *testing.T) {
	tdir := templateDir(t)
	r := fragility(t, noModels(t), "plan", "--templates", tdir, "--drop", "10", "--instances", "5", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var got plan.RunPlan
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	want, _ := plan.MakePlan(plan.PlanOptions{DropPP: 10, Templates: len(runTemplates), Instances: 5, Variants: []string{"base", "symbolic", "noop"},
		Alpha: 0.05, Power: 0.8, Between: summary.PlanningDrawnBetween, Within: summary.PlanningDrawnWithin})
	pw, sz := got.Power, got.Sizing
	if pw == nil || sz == nil || pw.Templates != len(runTemplates) || pw.NeededTemplates == nil || *pw.NeededTemplates != *want.NeededTemplates ||
		*pw.MDEPP != *want.MDEPP || pw.Tests != 2 || !strings.HasPrefix(pw.ComponentsSource, "planning defaults of the drawn design") {
		t.Fatalf("power %+v, want %d templates needed, MDE %v at %d templates", pw, *want.NeededTemplates, *want.MDEPP, len(runTemplates))
	}
	if len(sz.Models) != 0 || !strings.Contains(sz.ModelNote, "not in the cache") || sz.Items == 0 || sz.Shards[0].MemoryBytes != 0 {
		t.Errorf("sizing without a model: %+v", sz)
	}

	r = fragility(t, noModels(t), "plan", "--templates", tdir, "--drop", "10", "--instances", "5")
	for _, w := range []string{"## Sizing", "## Power", fmt.Sprintf("Minimum detectable drop with %d templates and 5 instances: %.1f pp", len(runTemplates), *want.MDEPP),
		"Power to detect 10 pp", "templates needed for 10 pp", "which instances divide"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("text plan lacks %q (exit %d):\n%s%s", w, r.code, r.stdout, r.stderr)
		}
	}
	var modelLines int
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "Model: none at hand") {
			modelLines++
		}
	}
	if modelLines != 1 {
		t.Errorf("%d lines say that no model is at hand:\n%s", modelLines, r.stdout)
	}

	// Without --drop: the minimum detectable drop only.
	r = fragility(t, noModels(t), "plan", "--templates", tdir, "--json")
	var nd plan.RunPlan
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &nd) != nil || nd.Power.MDEPP == nil || nd.Power.NeededTemplates != nil || nd.Power.Instances != 2 {
		t.Errorf("no --drop: exit %d, %+v\n%s", r.code, nd.Power, r.stderr)
	}
	if r := fragility(t, noModels(t), "plan", "--templates", tdir); r.code != 0 || strings.Contains(r.stdout, "templates needed") || strings.Contains(r.stdout, "To detect") {
		t.Errorf("no --drop (text): exit %d\n%s", r.code, r.stdout)
	}

	for _, args := range [][]string{
		{"plan", "--drop", "-3"},
		{"plan", "--drop", "0"},
		{"plan", "--primary", "base"},
		{"plan", "--variants", "base,symbolic", "--primary", "noop"},
		{"plan", "--instances", "0"},
		{"plan", "--alpha", "2"},
		{"plan", "--shards", "0"},
		{"plan", "--batch", "0"},
		{"plan", "--variants", "bogus"},
		{"plan", "--drop", "5", "extra"},
	} {
		if r := fragility(t, noModels(t), append(args, "--templates", tdir)...); r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, r.code, r.stderr)
		}
	}
	// Base alone is sized, as run accepts it, with no power analysis.
	if r := fragility(t, noModels(t), "plan", "--variants", "base", "--templates", tdir); r.code != 0 || !strings.Contains(r.stdout, "Base alone: no variant to compare") || !strings.Contains(r.stdout, "## Sizing") {
		t.Errorf("plan --variants base: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A folder whose templates mostly do not load stops plan (and run)
	// unless --skip-invalid; with it the left-out files are listed.
	bad := t.TempDir()
	good, _ := os.ReadFile(filepath.Join(tdir, firstFile(t, tdir)))
	os.WriteFile(filepath.Join(bad, "good.yaml"), good, 0o644)
	for i := range 3 {
		os.WriteFile(filepath.Join(bad, fmt.Sprintf("bad%d.yaml", i)), []byte("id: x\ntitle: y\n  question: [\n"), 0o644)
	}
	if r := fragility(t, noModels(t), "plan", "--templates", bad); r.code != 1 || !strings.Contains(r.stderr, "3 of 4 templates") || !strings.Contains(r.stderr, "--skip-invalid") {
		t.Errorf("plan on a mostly broken folder: exit %d: %s", r.code, r.stderr)
	}
	if r := fragility(t, noModels(t), "plan", "--templates", bad, "--skip-invalid"); r.code != 0 || !strings.Contains(r.stdout, "Left out: 3 templates") || !strings.Contains(r.stdout, "bad0.yaml:3") {
		t.Errorf("plan --skip-invalid: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	dir := pilotRun(t, "")
	r = fragility(t, noModels(t), "plan", "--templates", tdir, "--drop", "10", "--from", dir, "--json")
	if r.code != 0 {
		t.Fatalf("--from: exit %d: %s", r.code, r.stderr)
	}
	var fromRun plan.RunPlan
	json.Unmarshal([]byte(r.stdout), &fromRun)
	sum, _ := probe.Recompute(dir)
	pc, _ := plan.PooledComponents(sum)
	b, w, share := pc.Between, pc.Within, pc.InformativeShare
	if share == 1 {
		share = 0 // every template informative: the plan omits it
	}
	if fromRun.Power.Between != b || fromRun.Power.Within != w || fromRun.Power.InformativeShare != share || !strings.Contains(fromRun.Power.ComponentsSource, dir) ||
		fromRun.Sizing.Rate == nil || fromRun.Sizing.Rate.TokensPerSecond != 8*3*3*20/12.0 || fromRun.Sizing.TokensPerItem != 20 {
		t.Errorf("--from: power %+v, sizing %+v; want components %v %v, 120 tokens/s, 20 tokens per item", fromRun.Power, fromRun.Sizing, b, w)
	}
	r = fragility(t, noModels(t), "plan", "--templates", tdir, "--from", dir, "--between", "0.1", "--json")
	var given plan.RunPlan
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &given) != nil || given.Power.Between != 0.1 || given.Power.Within != summary.PlanningDrawnWithin || given.Sizing.Rate == nil {
		t.Errorf("--from with --between: exit %d, %+v\n%s", r.code, given.Power, r.stderr)
	}
	if r := fragility(t, noModels(t), "plan", "--templates", tdir, "--drop", "10", "--from", filepath.Join(dir, "missing")); r.code != 1 || !strings.Contains(r.stderr, "missing: not a run directory (no such folder)") {
		t.Errorf("--from a missing directory: exit %d, %q", r.code, r.stderr)
	}
	// A context above the model's training context is warned of; one
	// within it is not.
	r = fragility(t, nil, "plan", "--model", gemmaName, "--n-ctx", "40000", "--calibrate", "0")
	if r.code != 0 || !strings.Contains(r.stdout, "Warning: --n-ctx 40000 is above "+gemmaName+".gguf's training context of 32768 tokens") {
		t.Errorf("--n-ctx above the training context: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = fragility(t, nil, "plan", "--model", gemmaName, "--n-ctx", "4096", "--calibrate", "0"); r.code != 0 || strings.Contains(r.stdout, "training context") {
		t.Errorf("--n-ctx within the training context: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A number of templates needed at the sign-flip test's floor is marked
	// and explained.
	r = fragility(t, noModels(t), "plan", "--templates", "builtin", "--variants", "base,noop-seeming", "--drop", "10", "--between", "0.001", "--within", "0.05")
	if r.code != 0 || !regexp.MustCompile(`(?m)^20 +2\.3 +7\* +9\.4$`).MatchString(r.stdout) ||
		!strings.Contains(r.stdout, "* the fewest templates at which the sign-flip test can reach 0.025 at all: the drop is detected there with at least the stated power.") {
		t.Errorf("the floor in the table: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A pilot of other variants and another reference design is said to
	// be one: the plan takes its components all the same.
	notes := []string{"Note: the pilot " + dir + " ran the variants base,symbolic,noop, the plan base,noop-seeming: its variance components are pooled over the pilot's variants",
		"Note: the pilot " + dir + " compared its variants with the fixed base prompt only, the plan with drawn references (noop, noop-seeming and paraphrase against their symbolic draw)"}
	r = fragility(t, noModels(t), "plan", "--templates", tdir, "--variants", "base,noop-seeming", "--from", dir)
	for _, w := range notes {
		if r.code != 0 || !strings.Contains(r.stdout, w) {
			t.Errorf("--from another design: exit %d, want %q in\n%s%s", r.code, w, r.stdout, r.stderr)
		}
	}
	if r = fragility(t, noModels(t), "plan", "--templates", tdir, "--variants", "base,symbolic,noop", "--reference", "original", "--from", dir); r.code != 0 || strings.Contains(r.stdout, "Note: the pilot") {
		t.Errorf("--from the same design: exit %d, a note:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestReportOldRunDirectory: `report` re-renders a run directory written
// before the level column existed with the new statistics, and applies the
// primary variant its manifest records.
func TestReportOldRunDirectory(t *testing.T) {
	dir := pilotRun(t, "noop")
	r := fragility(t, nil, "report", dir)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"G = 8 templates", "16 copies were collapsed", "the pre-specified primary variant, tested alone", "sign-flip p = ", "cluster-t"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("narrative lacks %q:\n%s", want, r.stdout)
		}
	}
	var s summary.Summary
	data, err := os.ReadFile(filepath.Join(dir, rundir.FileSummary))
	if err != nil || json.Unmarshal(data, &s) != nil {
		t.Fatalf("summary.json: %v", err)
	}
	if s.Params.Primary != "noop" || s.Models[0].VerdictVariant != "noop" || s.Models[0].Variants[0].N != 8 || s.Models[0].Variants[0].Copies != 16 {
		t.Errorf("summary: primary %q, verdict from %q, base %d prompts (%d copies)", s.Params.Primary, s.Models[0].VerdictVariant, s.Models[0].Variants[0].N, s.Models[0].Variants[0].Copies)
	}
}

// TestRunPrimaryUsage: a primary variant that is base or not among the
// variants is wrong usage, refused before any model loads.
func TestRunPrimaryUsage(t *testing.T) {
	for _, p := range []string{"base", "names"} {
		r := fragility(t, nil, "run", "--variants", "base,symbolic", "--primary", p, "--out", filepath.Join(t.TempDir(), "r"))
		if r.code != 2 || !strings.Contains(r.stderr, "--primary") {
			t.Errorf("--primary %s: exit %d, %q", p, r.code, r.stderr)
		}
	}
}

// firstFile is the name of the first file in dir.
func firstFile(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil || len(es) == 0 {
		t.Fatalf("%s: %v", dir, err)
	}
	return es[0].Name()
}

// TestPlanMeasuresItsTime: a plan of a model given with no rate measures
// one (a calibration on the plan's first items at its --batch, said so on
// stderr) and estimates the tokens per item from the same answers (said to
// be an estimate) instead of the budget's upper bound, so it prints a
// time; a second plan of the same set counts it from the plan's cache; a
// fragility bench of the model at the plan's --batch is recorded on this
// machine, and a later plan without a calibration takes its rate, naming
// it.
func TestPlanMeasuresItsTime(t *testing.T) {
	model := tinyModelFiles(t)[0]
	env := append(noModels(t), "XDG_CACHE_HOME="+t.TempDir())
	args := []string{"plan", "--model", model, "--templates", "builtin", "--template-ids", "baker,stickers,cycling", "--variants", "base,symbolic",
		"--instances", "2", "--max-tokens", "16", "--batch", "2", "--threads", "1"}
	r := fragility(t, env, append(args, "--calibrate", "0", "--json")...)
	var first plan.RunPlan
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &first) != nil || first.Sizing.Rate != nil || first.CountedFrom != "" || first.Sizing.TokensPerItem != 16 {
		t.Fatalf("--calibrate 0: exit %d, rate %+v, counted from %q, %v tokens per item\n%s", r.code, first.Sizing.Rate, first.CountedFrom, first.Sizing.TokensPerItem, r.stderr)
	}
	r = fragility(t, env, args...)
	for _, want := range []string{"Rate: ", "generated tokens/s (measured here by a calibration on the plan's first items: ", "at --batch 2, 1 thread",
		"per item: an ESTIMATE from the calibration: the mean of 8 answers", "One machine: "} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("plan with a model: exit %d, stdout lacks %q:\n%s\n%s", r.code, want, r.stdout, r.stderr)
		}
	}
	if !strings.Contains(r.stderr, "fragility: plan: calibrating tiny-s1.gguf on 8 items of the plan at --batch 2") {
		t.Errorf("stderr %q", r.stderr)
	}
	r = fragility(t, env, "bench", "--model", model, "--no-ddc", "--reps", "1", "--pp", "16", "--tg", "32", "--items", "2", "--batch", "2", "--max-tokens", "8", "--threads", "1", "--json")
	if r.code != 0 || !strings.Contains(r.stderr, "fragility: bench: recorded in ") {
		t.Fatalf("bench: exit %d\n%s", r.code, r.stderr)
	}
	r = fragility(t, env, append(args, "--calibrate", "0", "--json")...)
	var later plan.RunPlan
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &later) != nil || later.Sizing.Rate == nil || later.CountedFrom == "" ||
		!strings.Contains(later.Sizing.Rate.Source, "the last fragility bench on this machine") || !strings.Contains(later.Sizing.Rate.Source, "× the speed-up of 2 items per batch") {
		t.Errorf("after a bench: exit %d, rate %+v, counted from %q\n%s", r.code, later.Sizing.Rate, later.CountedFrom, r.stderr)
	}
}
