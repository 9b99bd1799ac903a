package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/templates"
)

// pilotRun writes a run directory without running a model: a manifest with
// the given primary variant and a results.csv of 8 templates × 3 instances
// in base, symbolic and noop, in the format of an older version (no level
// column, which later versions added).
func pilotRun(t *testing.T, primary string) string {
	t.Helper()
	dir := t.TempDir()
	man := probe.Manifest{Config: probe.Config{Models: []string{"m.gguf"}, Variants: []templates.Variant{"base", "symbolic", "noop"},
		Instances: 3, Seed: 3, BootstrapB: 200, Primary: primary}}
	data, _ := json.Marshal(man)
	if err := os.WriteFile(filepath.Join(dir, probe.FileManifest), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var ts []probe.Trial
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
				ts = append(ts, probe.Trial{ItemID: fmt.Sprintf("m0/%s/%s/%d", tpl, v, inst), ModelPath: "m.gguf", ModelName: "M",
					TemplateID: tpl, Variant: v, Instance: inst, Question: q, Correct: right, Tokens: 20, Rule: "final_answer",
					AnswerEntropyMean: 0.3 + 0.01*float64(ti), EntropyMean: 1})
			}
		}
	}
	var buf bytes.Buffer
	if err := probe.WriteResultsCSV(&buf, ts); err != nil {
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
	if err := os.WriteFile(filepath.Join(dir, probe.FileResults), out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPlanCommand: the command prints the plan of probe.MakePlan, as JSON
// on request; it refuses wrong usage with exit 2; --from takes the
// variance components from a run directory.
func TestPlanCommand(t *testing.T) {
	r := fragility(t, nil, "plan", "--drop", "10", "--instances", "5", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var got probe.Plan
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	want, _ := probe.MakePlan(probe.PlanOptions{DropPP: 10, Instances: 5, Variants: []string{"base", "symbolic", "noop"}, Alpha: 0.05, Power: 0.8,
		Between: probe.PlanningBetween, Within: probe.PlanningWithin})
	if got.NeededTemplates != want.NeededTemplates || got.Tests != 2 || got.ComponentsSource != "planning defaults" {
		t.Errorf("plan %+v, want %d templates", got, want.NeededTemplates)
	}
	r = fragility(t, nil, "plan", "--drop", "10", "--instances", "5", "--templates", "6")
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("%d templates with 5 instances each", want.NeededTemplates)) ||
		!strings.Contains(r.stdout, "With 6 templates and 5 instances: minimum detectable drop") {
		t.Errorf("text plan (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"plan"},
		{"plan", "--drop", "-3"},
		{"plan", "--drop", "5", "--primary", "base"},
		{"plan", "--drop", "5", "--instances", "0"},
		{"plan", "--drop", "5", "extra"},
		{"plan", "--drop", "5", "--from", "x", "--between", "0.1"},
	} {
		if r := fragility(t, nil, args...); r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, r.code, r.stderr)
		}
	}
	dir := pilotRun(t, "")
	r = fragility(t, nil, "plan", "--drop", "10", "--from", dir, "--json")
	if r.code != 0 {
		t.Fatalf("--from: exit %d: %s", r.code, r.stderr)
	}
	var fromRun probe.Plan
	json.Unmarshal([]byte(r.stdout), &fromRun)
	sum, _ := probe.Recompute(dir)
	b, w, _, _ := probe.PooledComponents(sum)
	if fromRun.Between != b || fromRun.Within != w || !strings.Contains(fromRun.ComponentsSource, dir) {
		t.Errorf("--from: %+v, want components %v %v", fromRun, b, w)
	}
	if r := fragility(t, nil, "plan", "--drop", "10", "--from", filepath.Join(dir, "missing")); r.code != 1 || !strings.Contains(r.stderr, "missing") {
		t.Errorf("--from a missing directory: exit %d, %q", r.code, r.stderr)
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
	var s probe.Summary
	data, err := os.ReadFile(filepath.Join(dir, probe.FileSummary))
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
