package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRunPrintsVerdicts: at its end `run` prints each model's verdict and
// what it rests on, then the narrative's path, in a dozen lines, not the
// whole narrative (it printed 29 KB).
func TestRunPrintsVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a model")
	}
	out := filepath.Join(t.TempDir(), "run")
	r := fragility(t, nil, "run", "--model", gemmaName, "--template-ids", "allowance,baker", "--variants", "base,symbolic",
		"--instances", "1", "--max-tokens", "4", "--no-ddc", "--no-html", "--out", out)
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, tail(r.stderr))
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) > 12 || !strings.HasPrefix(lines[0], "**") || strings.Contains(r.stdout, "## What this probe tests") ||
		!strings.Contains(r.stdout, "The narrative (method, tables, every number): "+filepath.Join(out, "narrative.md")) {
		t.Errorf("run's stdout (%d lines):\n%s", len(lines), r.stdout)
	}
	if !strings.Contains(r.stdout, "raise --max-tokens") {
		t.Errorf("a run whose answers the budget cut does not say to raise --max-tokens:\n%s", r.stdout)
	}
}
