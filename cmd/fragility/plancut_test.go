package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/plan"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
)

// cutPilot is pilotRun run at --max-tokens 100 whose answers are 20, 21,
// … tokens long in row order, the last cut of them reaching the budget
// (stop reason max_tokens, 100 tokens).
func cutPilot(t *testing.T, cut int) string {
	t.Helper()
	dir := pilotRun(t, "")
	path := filepath.Join(dir, rundir.FileManifest)
	data, _ := os.ReadFile(path)
	var man rundir.Manifest
	if err := json.Unmarshal(data, &man); err != nil {
		t.Fatal(err)
	}
	man.Config.MaxTokens = 100
	data, _ = json.Marshal(man)
	os.WriteFile(path, data, 0o644)
	editTrials(t, dir, func(i, n int, tr *results.Trial) {
		tr.Tokens, tr.StopReason = 20+i, "eos"
		if i >= n-cut {
			tr.Tokens, tr.StopReason = 100, "max_tokens"
		}
	})
	return dir
}

// editTrials rewrites results.csv of the run in dir with edit applied to
// each of its n rows (row i, from 0).
func editTrials(t *testing.T, dir string, edit func(i, n int, tr *results.Trial)) {
	t.Helper()
	path := filepath.Join(dir, rundir.FileResults)
	trials, err := rundir.ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range trials {
		edit(i, len(trials), &trials[i])
	}
	var buf bytes.Buffer
	if err := results.WriteCSV(&buf, trials); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPlanWarnsOfLongPrompts: with a pilot whose prompts average 1000
// tokens, a --max-tokens that with them is more than --n-ctx is warned of,
// with the context to raise to; one that fits is not.
func TestPlanWarnsOfLongPrompts(t *testing.T) {
	dir := cutPilot(t, 0)
	editTrials(t, dir, func(_, _ int, tr *results.Trial) { tr.PromptTokens = 1000 })
	tdir := templateDir(t)
	r := fragility(t, noModels(t), "plan", "--templates", tdir, "--from", dir, "--max-tokens", "100", "--n-ctx", "1024")
	if r.code != 0 || !strings.Contains(r.stdout, "Warning: the pilot's prompts average 1000 tokens, and with --max-tokens 100 that is more than --n-ctx 1024") || !strings.Contains(r.stdout, "raise --n-ctx to 1100 or more") {
		t.Errorf("prompts that do not fit: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = fragility(t, noModels(t), "plan", "--templates", tdir, "--from", dir, "--max-tokens", "100", "--n-ctx", "2048"); r.code != 0 || strings.Contains(r.stdout, "prompts average") {
		t.Errorf("prompts that fit: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestPlanWarnsOfCuts: plan --from PILOT counts the pilot's answers the
// planned --max-tokens would cut; from a share of plan.CutWarnShare on it
// warns and says what to raise the budget to (or, when the pilot's own
// budget cut that many, to pilot again with more); an MDE above 100 pp
// reads "no drop is detectable at this size" in the table's rows too.
func TestPlanWarnsOfCuts(t *testing.T) {
	tdir := templateDir(t)
	// 72 answers of 20..91 tokens: at 80, 12 are cut (17%); at 85, 7 (under 10%).
	pilot := cutPilot(t, 0)
	r := fragility(t, noModels(t), "plan", "--templates", tdir, "--from", pilot, "--max-tokens", "80")
	want := "Warning: the pilot " + pilot + " (run at --max-tokens 100) says --max-tokens 80 would cut 12 of 72 answers (17%)"
	if r.code != 0 || !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "raise --max-tokens to 85 or more") {
		t.Errorf("exit %d, want %q and raise to 85:\n%s%s", r.code, want, r.stdout, r.stderr)
	}
	r = fragility(t, noModels(t), "plan", "--templates", tdir, "--from", pilot, "--max-tokens", "85", "--json")
	var p plan.RunPlan
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &p) != nil || p.PilotCut == nil || p.PilotCut.Cut != 7 || p.PilotCut.Large {
		t.Errorf("at 85: exit %d, %+v\n%s", r.code, p.PilotCut, r.stderr)
	}
	// The expected tokens per item are the pilot's capped at the planned
	// budget: at 80, 20..80 and 11 answers of 80, (3050 + 880)/72.
	r = fragility(t, noModels(t), "plan", "--templates", tdir, "--from", pilot, "--max-tokens", "80", "--json")
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &p) != nil || math.Abs(p.Sizing.TokensPerItem-3930.0/72) > 1e-9 {
		t.Errorf("at 80: exit %d, %v tokens per item, want %v (capped)\n%s", r.code, p.Sizing.TokensPerItem, 3930.0/72, r.stderr)
	}
	// 8 of 72 cut by the pilot's own budget: above it, up to 8 (11%), and
	// the pilot cannot say how far to raise. Each of them counts as the
	// whole planned budget in the expected tokens: (20..83 + 8 × 200)/72,
	// never more than the planned budget allows.
	cut := cutPilot(t, 8)
	r = fragility(t, noModels(t), "plan", "--templates", tdir, "--from", cut, "--max-tokens", "200")
	if r.code != 0 || !strings.Contains(r.stdout, "cut 8 of 72 answers (11%) at its budget, so --max-tokens 200 may cut up to that many") || !strings.Contains(r.stdout, "how many of them --max-tokens 200 still cuts the pilot cannot show: pilot again at --max-tokens 200") {
		t.Errorf("above the pilot's budget: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Below the pilot's budget the count is exact (42 of 72 reach 50), and
	// the advice names what the pilot's own budget cut (8, not 42).
	r = fragility(t, noModels(t), "plan", "--templates", tdir, "--from", cut, "--max-tokens", "50")
	if r.code != 0 || !strings.Contains(r.stdout, "says --max-tokens 50 would cut 42 of 72 answers (58%)") ||
		!strings.Contains(r.stdout, "the pilot's own budget (100) cut 8 of its 72 answers (11%), so it does not show how long they run: raise --max-tokens well above 100 and pilot again") {
		t.Errorf("below the pilot's budget: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = fragility(t, noModels(t), "plan", "--templates", tdir, "--from", cut, "--max-tokens", "200", "--json")
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &p) != nil || math.Abs(p.Sizing.TokensPerItem-4896.0/72) > 1e-9 ||
		p.Sizing.GenTokens > float64(p.Sizing.GenTokensMax) || !p.PilotCut.AtMost {
		t.Errorf("at 200: exit %d, sizing %+v, cut %+v; want %v tokens per item\n%s", r.code, p.Sizing, p.PilotCut, 4896.0/72, r.stderr)
	}
	if r = fragility(t, noModels(t), "plan", "--templates", tdir, "--from", pilot, "--max-tokens", "95"); r.code != 0 || strings.Contains(r.stdout, "Warning") {
		t.Errorf("at 95 (nothing cut): exit %d:\n%s", r.code, r.stdout)
	}
	// Two templates, one instance: every row's MDE is above 100 pp.
	r = fragility(t, noModels(t), "plan", "--templates", copyBuiltin(t, "baker", "cinema"), "--instances", "1")
	if r.code != 0 || !regexp.MustCompile(`(?m)^1 +no drop is detectable at this size$`).MatchString(r.stdout) {
		t.Errorf("MDE above 100 pp in the table: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}
