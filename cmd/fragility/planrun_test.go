package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlanRefusesAsRun: plan sizes the run that run would start with the
// same flags, so it refuses every value run refuses, with the same exit
// code (2) and the same one line naming the flag; --n-ctx 0 is the
// documented default (2048) in both, and plan sizes it as 2048.
func TestPlanRefusesAsRun(t *testing.T) {
	model := gemmaLLM(t)
	env := noModels(t)
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--n-ctx", "-1"}, "--n-ctx must be at least 64"},
		{[]string{"--n-ctx", "63"}, "--n-ctx must be at least 64"},
		{[]string{"--max-tokens", "-5"}, "--max-tokens must be at least 1, got -5"},
		{[]string{"--max-tokens", "0"}, "--max-tokens must be at least 1, got 0"},
		{[]string{"--batch", "0"}, "--batch must be between 1 and"},
		{[]string{"--batch", "65"}, "--batch must be between 1 and"},
		{[]string{"--n-batch", "-1"}, "--n-batch must be positive"},
		{[]string{"--n-batch", "4", "--batch", "8"}, "--n-batch must be at least --batch (8)"},
		{[]string{"--threads", "-1"}, "--threads must be between 0"},
		{[]string{"--threads", "100000"}, "--threads must be between 0"},
		{[]string{"--threads-batch", "-1"}, "--threads-batch must be between 0"},
		{[]string{"--instances", "0"}, "--instances must be at least 1, got 0"},
		{[]string{"--instances", "-3"}, "--instances must be at least 1, got -3"},
		{[]string{"--shots", "-1"}, "--shots must be between 0 and"},
		{[]string{"--shots", "999"}, "--shots must be between 0 and"},
		{[]string{"--gpu-layers", "-2"}, "--gpu-layers must be -1 (all), 0 (CPU only) or a number of layers, got -2"},
	} {
		args := append([]string{"--model", model, "--templates", "builtin"}, c.flags...)
		plan := fragility(t, env, append([]string{"plan"}, args...)...)
		run := fragility(t, env, append([]string{"run", "--out", filepath.Join(t.TempDir(), "r")}, args...)...)
		for _, r := range []struct {
			cmd string
			r   result
		}{{"plan", plan}, {"run", run}} {
			line := strings.TrimSuffix(r.r.stderr, "\n")
			if r.r.code != exitUsage || strings.Contains(line, "\n") || !strings.Contains(line, c.want) {
				t.Errorf("%s %v: exit %d, stderr %q; want exit %d and one line with %q", r.cmd, c.flags, r.r.code, r.r.stderr, exitUsage, c.want)
			}
		}
		if plan.stderr != run.stderr {
			t.Errorf("%v: plan says %q, run says %q", c.flags, plan.stderr, run.stderr)
		}
	}
	// Without --model and with no model in the cache, run too names the bad
	// flag (wrong usage is checked before the models are looked for).
	if r := fragility(t, env, "run", "--out", filepath.Join(t.TempDir(), "r"), "--n-ctx", "-1"); r.code != exitUsage || !strings.Contains(r.stderr, "--n-ctx must be at least 64") {
		t.Errorf("run --n-ctx -1 without a model: exit %d, stderr %q", r.code, r.stderr)
	}
	r := fragility(t, env, "plan", "--model", model, "--templates", "builtin", "--n-ctx", "0", "--batch", "2", "--calibrate", "0")
	if r.code != exitOK || !strings.Contains(r.stdout, "--n-ctx 2048 × --batch 2") {
		t.Errorf("plan --n-ctx 0: exit %d, stdout %q, stderr %q; want exit 0 and the memory at --n-ctx 2048", r.code, r.stdout, r.stderr)
	}
}

// TestFileForRunDir: report, verify, merge and plan --from given a run's
// results.csv instead of its folder say so in one line (exit 1) and name
// the folder that holds manifest.json, not "not a directory" of a path
// they built inside the file.
func TestFileForRunDir(t *testing.T) {
	root := t.TempDir()
	demo := filepath.Join(root, "demo")
	csv := filepath.Join(demo, "results.csv")
	for name, data := range map[string]string{"manifest.json": "{}\n", "results.csv": "item_id\n"} {
		if err := os.MkdirAll(demo, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(demo, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := csv + ": not a run directory (give the folder that holds manifest.json: " + demo + ")"
	for _, args := range [][]string{
		{"report", csv},
		{"verify", csv},
		{"merge", filepath.Join(root, "merged"), csv, csv},
		{"plan", "--templates", "builtin", "--from", csv},
	} {
		r := fragility(t, noModels(t), args...)
		oneErrorLine(t, strings.Join(args[:1], " "), r, want)
		if strings.Contains(r.stderr, "not a directory") {
			t.Errorf("%v: %s", args, r.stderr)
		}
	}
	// A file whose folder holds no manifest: the hint names no folder.
	other := filepath.Join(root, "notes.txt")
	os.WriteFile(other, []byte("x"), 0o644)
	r := fragility(t, noModels(t), "report", other)
	oneErrorLine(t, "report of a lone file", r, other+": not a run directory (give the folder that holds manifest.json)")

	// An empty folder is refused before the run lock is taken: nothing is
	// left in it. An empty argument is wrong usage.
	empty := filepath.Join(root, "empty")
	os.Mkdir(empty, 0o755)
	r = fragility(t, noModels(t), "report", empty)
	oneErrorLine(t, "report of an empty folder", r, empty+": no manifest: not a run directory")
	if left, _ := os.ReadDir(empty); len(left) != 0 {
		t.Errorf("report of an empty folder left %d files in it (%s)", len(left), left[0].Name())
	}
	r = fragility(t, noModels(t), "verify", empty)
	oneErrorLine(t, "verify of an empty folder", r, empty+": no manifest: not a run directory")
	if left, _ := os.ReadDir(empty); len(left) != 0 {
		t.Errorf("verify of an empty folder left %d files in it (%s)", len(left), left[0].Name())
	}
	if r = fragility(t, noModels(t), "report", ""); r.code != exitUsage {
		t.Errorf("report '': exit %d, want %d (%s)", r.code, exitUsage, r.stderr)
	}
}

// TestModelFlagsRefuseAsRun: every command that takes run's model and
// decoding flags (bench, compare, generate, inspect, plan) refuses the
// values run refuses with run's exit code (2) and run's one line, before
// any model is looked up: with no model in the cache and files that do
// not exist, the flag is named, not the missing model. 0 (the default of
// --n-ctx, --n-batch, --threads) is not refused: those commands go on to
// look for the model, and fail for want of it (exit 1).
func TestModelFlagsRefuseAsRun(t *testing.T) {
	env := noModels(t)
	missing := filepath.Join(t.TempDir(), "missing")
	type command struct {
		args             []string
		batch, maxTokens bool // the command has --batch, --max-tokens
	}
	cmds := []command{
		{[]string{"plan", "--templates", "builtin"}, true, true},
		{[]string{"bench", "--no-ddc"}, true, true},
		{[]string{"compare", "--out", filepath.Join(missing, "c"), filepath.Join(missing, "a.gguf"), filepath.Join(missing, "b.gguf")}, true, true},
		{[]string{"compare", "--from", missing}, true, false},
		{[]string{"generate", "--prompt", "hi"}, false, true},
		{[]string{"inspect"}, false, false},
	}
	for _, c := range []struct {
		flags            []string
		batch, maxTokens bool // the case needs --batch, --max-tokens
		want             string
	}{
		{[]string{"--gpu-layers", "-5"}, false, false, "--gpu-layers must be -1 (all), 0 (CPU only) or a number of layers, got -5"},
		{[]string{"--n-ctx", "-1"}, false, false, "--n-ctx must be at least 64"},
		{[]string{"--n-ctx", "63"}, false, false, "--n-ctx must be at least 64"},
		{[]string{"--n-batch", "-3"}, false, false, "--n-batch must be positive"},
		{[]string{"--threads", "-1"}, false, false, "--threads must be between 0"},
		{[]string{"--threads-batch", "-1"}, false, false, "--threads-batch must be between 0"},
		{[]string{"--threads", "100000"}, false, false, "--threads must be between 0"},
		{[]string{"--batch", "0"}, true, false, "--batch must be between 1 and 64, got 0"},
		{[]string{"--batch", "65"}, true, false, "--batch must be between 1 and 64, got 65"},
		{[]string{"--n-batch", "4", "--batch", "8"}, true, false, "--n-batch must be at least --batch (8)"},
		{[]string{"--max-tokens", "0"}, false, true, "--max-tokens must be at least 1, got 0"},
	} {
		run := fragility(t, env, append([]string{"run", "--out", filepath.Join(missing, "r")}, c.flags...)...)
		if line := strings.TrimSuffix(run.stderr, "\n"); run.code != exitUsage || strings.Contains(line, "\n") || !strings.Contains(line, c.want) {
			t.Errorf("run %v: exit %d, stderr %q; want exit %d and one line with %q", c.flags, run.code, run.stderr, exitUsage, c.want)
			continue
		}
		for _, cmd := range cmds {
			if c.batch && !cmd.batch || c.maxTokens && !cmd.maxTokens {
				continue
			}
			r := fragility(t, env, append(append([]string{}, cmd.args...), c.flags...)...)
			if r.code != exitUsage || r.stderr != run.stderr {
				t.Errorf("%v %v: exit %d, stderr %q; want exit %d and run's %q", cmd.args, c.flags, r.code, r.stderr, exitUsage, run.stderr)
			}
		}
	}
	// 0 is the default, not wrong usage: past the flags, the missing model
	// is what fails.
	for _, cmd := range cmds {
		if cmd.args[0] == "plan" {
			continue
		}
		r := fragility(t, env, append(append([]string{}, cmd.args...), "--n-ctx", "0", "--n-batch", "0", "--threads", "0", "--gpu-layers", "0")...)
		if r.code != exitFailure {
			t.Errorf("%v with 0 (the defaults): exit %d, stderr %q; want exit %d for the missing model", cmd.args, r.code, r.stderr, exitFailure)
		}
	}
}
